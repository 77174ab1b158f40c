//! `ctxlab replay`: the replay loop's records written for a reader, as lines or as JSON
//! (docs/pipeline.md, "Replay").

use std::io::Write;

use crate::message::Message;
use crate::pipeline_replay::{CallRecord, ReplayOptions, ReplayTotals, replay};
use crate::session::{HistoryStream, LoadWarning, SessionError};
use crate::store::{Store, StoreError};
use crate::util::group_digits;

/// Why `ctxlab replay` stopped.
#[derive(Debug, thiserror::Error)]
pub enum ReplayCommandError {
    #[error("the replay could not write to the workspace: {0}")]
    Store(#[from] StoreError),
    #[error("cannot write the output: {0}")]
    Output(#[from] std::io::Error),
    /// A streamed session turned out malformed part way: the calls before it were
    /// replayed (and written), the totals were not.
    #[error("{0}")]
    Input(#[from] SessionError),
}

fn write_record(out: &mut dyn Write, record: &CallRecord, json: bool) -> std::io::Result<()> {
    if json {
        let line = serde_json::to_string(record).map_err(std::io::Error::other)?;
        return writeln!(out, "{line}");
    }
    if let Some(words) = &record.refused {
        // Said before the stages: the call was sent after them and refused.
        writeln!(
            out,
            "call {}: refused as too long (recorded: {})",
            record.call, words
        )?;
    }
    for r in &record.reports {
        writeln!(
            out,
            "call {}: {} {} -> {} messages, {} -> {} {}",
            record.call,
            r.stage.name(),
            r.messages_before,
            r.messages_after,
            group_digits(r.size_before),
            group_digits(r.size_after),
            r.unit.label(),
        )?;
    }
    Ok(())
}

fn write_totals(out: &mut dyn Write, totals: &ReplayTotals, json: bool) -> std::io::Result<()> {
    if json {
        let line = serde_json::to_string(totals).map_err(std::io::Error::other)?;
        return writeln!(out, "{line}");
    }
    if let Some(next) = &totals.next_call {
        // The session ends before this call: what the pipeline would do, nothing written.
        for r in &next.reports {
            writeln!(
                out,
                "next call {} (after the session's end, dry run): {} {} -> {} messages, {} -> {} chars: {}",
                next.call,
                r.stage.name(),
                r.messages_before,
                r.messages_after,
                group_digits(r.size_before),
                group_digits(r.size_after),
                r.reason
            )?;
        }
    }
    for skipped in &totals.not_applied {
        writeln!(out, "recorded {}", skipped.describe())?;
    }
    let fired: Vec<String> = totals
        .fired
        .iter()
        .map(|(stage, n)| format!("{stage} {n}"))
        .collect();
    writeln!(
        out,
        "{} model calls; fired: {}; {} files written; final: {} messages, {} chars",
        totals.calls,
        fired.join(", "),
        totals.files_written,
        totals.final_messages,
        group_digits(totals.final_estimate_size)
    )
}

/// Replays `session` on `store` and writes one line (or JSON object) per call that changed
/// something, then the totals.
pub fn run_replay(
    session: impl IntoIterator<Item = Message>,
    store: &Store,
    options: &ReplayOptions,
    json: bool,
    out: &mut dyn Write,
) -> Result<ReplayTotals, ReplayCommandError> {
    let totals = replay_records(session, store, options, json, out)?;
    write_totals(out, &totals, json)?;
    out.flush()?;
    Ok(totals)
}

/// `run_replay` of a session still being read: the totals are written only once the whole
/// file has been read; a malformed element ends the replay with its error. The file's
/// warnings come back with the totals.
pub fn run_replay_stream(
    mut session: HistoryStream,
    store: &Store,
    options: &ReplayOptions,
    json: bool,
    out: &mut dyn Write,
) -> Result<(ReplayTotals, Vec<LoadWarning>), ReplayCommandError> {
    // On a failed replay the stream is dropped, which stops its reader.
    let totals = replay_records(session.by_ref(), store, options, json, out)?;
    let warnings = session.finish()?;
    write_totals(out, &totals, json)?;
    out.flush()?;
    Ok((totals, warnings))
}

/// The replay loop with each record written as it comes.
fn replay_records(
    session: impl IntoIterator<Item = Message>,
    store: &Store,
    options: &ReplayOptions,
    json: bool,
    out: &mut dyn Write,
) -> Result<ReplayTotals, ReplayCommandError> {
    let mut write_err: Option<std::io::Error> = None;
    let totals = replay(session, store, options, |record| {
        if write_err.is_none()
            && let Err(e) = write_record(out, record, json)
        {
            write_err = Some(e);
        }
    })?;
    match write_err {
        Some(e) => Err(e.into()),
        None => Ok(totals),
    }
}

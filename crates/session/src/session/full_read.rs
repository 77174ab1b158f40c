//! The full read of a Codex rollout (issue 36: `open` of a gigabyte rollout). A rollout
//! repeats its whole replacement history at every compaction; building every copy of
//! every item as JSON and then as a message, and comparing each kept message with the
//! conversation, was most of the time and memory the workbench's read took (3.6 to 4.7
//! times `inspect`'s time, 2.8 GB for a 2 GB rollout). Here the rollout is read as
//! `forgot` reads it (`kept_read`: each history item converted once, the first time it is
//! seen), and each compaction is then given the kept messages and the new history the
//! full read holds, its messages copies of the items held once (a copy of a `Message`
//! shares its fields). The session is the one `chunked::read_session_file` makes at
//! `Detail::Full`; the tests compare the two on every fixture (docs/pipeline.md, "Reading
//! sessions").

use std::path::Path;

use super::SessionError;
use super::detail::Detail;
use super::kept_read::{is_codex, read_kept};
use super::model::Session;
use super::sized_read::Reading;

/// The full read of the Codex rollout at `path`; None for any other file, or when a line
/// could not be read the sized way (the caller reads it as before).
pub(super) fn read_codex_full(
    path: &Path,
    progress: &dyn Fn(u64),
    cancelled: &dyn Fn() -> bool,
) -> Result<Option<Session>, SessionError> {
    Ok(read_counting(path, progress, cancelled)?.map(|(session, _)| session))
}

/// `read_codex_full` with the work it did: lines read, history items read and converted,
/// and the messages of the histories built (a test doubles a rollout and checks).
fn read_counting(
    path: &Path,
    progress: &dyn Fn(u64),
    cancelled: &dyn Fn() -> bool,
) -> Result<Option<(Session, u64)>, SessionError> {
    let reading = Reading {
        progress,
        cancelled,
        accepts: &is_codex,
    };
    let Some(read) = read_kept(path, &reading, Detail::Full)? else {
        return Ok(None);
    };
    let mut held = Vec::with_capacity(read.session.compactions.len());
    let mut lists = read.kept_lists();
    for (k, c) in read.session.compactions.iter().enumerate() {
        // A compaction the read counted is given what the full read holds of it.
        held.push(
            read.history_of(c)
                .is_some()
                .then(|| (lists.kept(k), read.replacement(k))),
        );
    }
    let mut work = read.session.lines as u64 + read.items_read + read.items_converted;
    work += lists.keyed;
    drop(lists);
    let mut session = read.session;
    for (c, held) in session.compactions.iter_mut().zip(held) {
        if let Some((kept, replacement)) = held {
            work += replacement.as_ref().map_or(0, |r| r.order.len() as u64);
            c.kept = kept;
            c.replacement = replacement;
            c.counted = None;
        }
    }
    Ok(Some((session, work)))
}

#[cfg(test)]
#[path = "full_read_tests.rs"]
mod tests;

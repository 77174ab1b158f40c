//! The compactions a replay makes, as forgot inputs, from the stage reports the one replay
//! loop (`pipeline_replay`) hands its observers; the workbench's live agent reports the
//! same `StageReport`s, so `input_of_stage` serves both. A summarizing stage's summary is
//! the messages it put in front of the kept tail its `Summarized` change names; a snip's
//! cut is dropped with its marker as the only trace; micro, budget and fit stages clear the
//! results their changes list by id.
//!
//! Message numbers count the history the stage was given (0 is its first message); in
//! what came after, they count the session's messages.

use super::parts::Numbered;
use super::{CompactionInput, KeptHow, KeptInput, SummaryText};
use crate::compact::{Change, StageReport, SummaryLabel};
use crate::message::{Message, Role};
use crate::pipeline_replay::{ReplayEvent, ReplayOptions, replay_events};
use crate::store::{Store, StoreError};

/// The history numbered; an earlier summary counts as injected (nobody typed it).
fn number_all(history: &[Message]) -> Vec<Numbered> {
    history
        .iter()
        .enumerate()
        .map(|(i, m)| Numbered {
            number: Some(i),
            message: m.clone(),
            injected: m.role_kind() == Role::User && m.text().and_then(SummaryLabel::of).is_some(),
        })
        .collect()
}

/// What a stage's input would be, from its report alone: None when it forgot nothing,
/// `Some(true)` when it only cleared results (a micro input), `Some(false)` when it
/// summarized, snipped or archived. `input_of_stage` returns an input exactly when this is
/// Some, so a reader that shows only some inputs (the export of a long session) counts and
/// orders them without building any.
pub fn forgets(report: &StageReport) -> Option<bool> {
    if !report.changed {
        return None;
    }
    let cuts = report.changes.iter().any(|c| {
        matches!(
            c,
            Change::Summarized { .. } | Change::Snipped { .. } | Change::Archived { .. }
        )
    });
    if cuts {
        return Some(false);
    }
    let clears = report.changes.iter().any(|c| {
        matches!(
            c,
            Change::Placeholder {
                tool_use_id: Some(_),
                ..
            } | Change::Saved {
                tool_use_id: Some(_),
                ..
            } | Change::Persisted {
                tool_use_id: Some(_),
                ..
            }
        )
    });
    clears.then_some(true)
}

/// The input for one stage that changed the history, or None when it forgot nothing
/// (a stage that did not change anything, or changed nothing a tool id names).
/// `strategy` names the strategy in the input's kind.
pub fn input_of_stage(
    strategy: &str,
    report: &StageReport,
    before: &[Message],
    after: &[Message],
) -> Option<CompactionInput> {
    forgets(report)?;
    let kind = format!("{strategy} {}", report.stage.name());
    let rule = format!("{}: {}", report.summary(), report.reason);
    let base = |micro: bool, summary: SummaryText, kept: KeptInput, cleared: Vec<String>| {
        CompactionInput {
            kind: kind.clone(),
            micro,
            at: None,
            call: None,
            trigger: None,
            rule: rule.clone(),
            before: number_all(before),
            summary,
            kept,
            cleared,
            after: Vec::new(),
            tokens_before: None,
        }
    };
    for change in &report.changes {
        match change {
            Change::Summarized {
                kept_tail, trigger, ..
            } => {
                let tail = (*kept_tail).min(after.len()).min(before.len());
                let head = &after[..after.len() - tail];
                let text: Vec<String> = head.iter().map(Message::joined_text).collect();
                let kept = KeptInput::recorded(
                    after[after.len() - tail..].to_vec(),
                    (before.len() - tail..before.len()).collect(),
                );
                let mut input = base(false, SummaryText::Text(text.join("\n")), kept, Vec::new());
                input.trigger = Some(
                    serde_json::to_value(trigger)
                        .ok()
                        .and_then(|v| v.as_str().map(str::to_string))
                        .unwrap_or_default(),
                );
                return Some(input);
            }
            Change::Snipped { .. } | Change::Archived { .. } => {
                let cut = change.messages();
                let (h, t) = (cut.start.min(before.len()), cut.end.min(before.len()));
                let from_before: Vec<usize> = (0..h).chain(t..before.len()).collect();
                let kept = KeptInput {
                    how: KeptHow::Recorded,
                    why: Some("the messages around the cut, and its marker".into()),
                    messages: after.to_vec(),
                    from_before,
                };
                return Some(base(false, SummaryText::None, kept, Vec::new()));
            }
            _ => {}
        }
    }
    let cleared: Vec<String> = report
        .changes
        .iter()
        .filter_map(|c| match c {
            Change::Placeholder { tool_use_id, .. }
            | Change::Saved { tool_use_id, .. }
            | Change::Persisted { tool_use_id, .. } => tool_use_id.clone(),
            _ => None,
        })
        .collect();
    if cleared.is_empty() {
        return None;
    }
    let kept = KeptInput {
        how: KeptHow::Recorded,
        why: Some("every message stays; the cleared results keep only a placeholder".into()),
        messages: Vec::new(),
        from_before: (0..before.len()).collect(),
    };
    Some(base(true, SummaryText::None, kept, cleared))
}

/// Whether a stage's input is a summary (a compaction, as the run counts them), not a stage
/// that only cleared, persisted or cut.
pub fn summarizes(input: &CompactionInput) -> bool {
    matches!(input.summary, SummaryText::Text(_))
}

/// Replays `messages` and returns one input per stage that forgot something, with what
/// came after each (up to the next) for the re-read check.
pub fn replay_inputs(
    messages: impl IntoIterator<Item = Message>,
    strategy: &str,
    store: &Store,
    options: &ReplayOptions,
) -> Result<Vec<CompactionInput>, StoreError> {
    Ok(replay_inputs_by_call(messages, strategy, store, options)?
        .into_iter()
        .map(|(_, input)| input)
        .collect())
}

/// `replay_inputs`, each input with the number of the model call its stage ran before
/// (None: after the last call), as the compare view's columns count calls.
pub fn replay_inputs_by_call(
    messages: impl IntoIterator<Item = Message>,
    strategy: &str,
    store: &Store,
    options: &ReplayOptions,
) -> Result<Vec<(Option<usize>, CompactionInput)>, StoreError> {
    let mut live: Vec<Message> = Vec::new();
    let mut entered: Vec<Message> = Vec::new();
    // Each input, the number of session messages entered when it happened, and its call.
    let mut found: Vec<(CompactionInput, usize, Option<usize>)> = Vec::new();
    // A summary the replay made sits among the session's messages as a recording lists
    // it: after the messages entered so far and the replay's earlier summaries.
    let mut summaries = 0;
    replay_events(messages, store, options, |event| match event {
        ReplayEvent::Entered(m) => {
            entered.push(m.clone());
            live.push(m.clone());
        }
        ReplayEvent::Stage { report, history } => {
            if let Some(mut input) = input_of_stage(strategy, report, &live, history) {
                if summarizes(&input) {
                    input.at = Some(entered.len() + summaries);
                    summaries += 1;
                }
                found.push((input, entered.len(), None));
            }
            live = history.to_vec();
        }
        // The stages since the last call ran before this one.
        ReplayEvent::Call(view) => {
            for f in found.iter_mut().rev().take_while(|f| f.2.is_none()) {
                f.2 = Some(view.record.call);
            }
        }
        ReplayEvent::End(_) => {}
    })?;
    // A cleared result stays cleared until a summary replaces the history.
    let full_starts: Vec<(usize, usize)> = found
        .iter()
        .enumerate()
        .filter(|(_, (input, _, _))| !input.micro)
        .map(|(i, (_, s, _))| (i, *s))
        .collect();
    Ok(found
        .into_iter()
        .enumerate()
        .map(|(i, (mut input, start, call))| {
            let end = full_starts
                .iter()
                .find(|&&(j, s)| j > i && s > start)
                .map_or(entered.len(), |&(_, s)| s);
            input.at = input.at.or(Some(start));
            input.after = (start..end)
                .map(|j| Numbered::new(Some(j), entered[j].clone()))
                .collect();
            (call, input)
        })
        .collect())
}

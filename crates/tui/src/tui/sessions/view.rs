//! An opened session as the workbench draws it, built off the UI task from a `Session`:
//! one row per message of the full session with the recorded compactions between them,
//! the messages a later full compaction took out of the model's view dimmed (as the
//! conversation's `v` view dims what the pipeline compacted), and each row's model call.

use std::path::Path;
use std::sync::Arc;

use super::{OpenedSession, ViewRow};
use crate::session::{MessageKind, Session};
use crate::tui::list::ListState;
use crate::tui::rows::MessageInfo;

/// The view of `session`, read from `path` (`bytes` long; `complete` false when only its
/// first lines were read).
pub fn build_view(path: &Path, bytes: u64, complete: bool, session: Session) -> OpenedSession {
    let messages = Arc::new(session.replay_messages());
    let Session {
        format,
        meta,
        messages: all,
        info,
        compactions,
        calls,
        sidechains,
        warnings,
        skipped,
        recorded,
        ..
    } = session;
    // What the model saw at the end starts at the last full compaction.
    let live_from = compactions
        .iter()
        .filter(|c| c.kind.replaces_history())
        .map(|c| c.at)
        .max()
        .unwrap_or(0);
    let mut call_of_message = vec![None; all.len()];
    for (k, c) in calls.iter().enumerate() {
        if let Some(slot) = c.message.and_then(|m| call_of_message.get_mut(m)) {
            *slot = Some(k);
        }
    }
    let mut rows = Vec::with_capacity(all.len() + compactions.len());
    let mut call_at_row = Vec::with_capacity(rows.capacity());
    let mut next_compaction = 0;
    let mut call = None;
    for (index, message_call) in call_of_message.iter().enumerate() {
        while let Some(c) = compactions.get(next_compaction)
            && c.at <= index
        {
            rows.push(ViewRow::Compaction(next_compaction));
            call_at_row.push(call);
            next_compaction += 1;
        }
        if let Some(k) = message_call {
            call = Some(*k);
        }
        rows.push(ViewRow::Message {
            index,
            dimmed: index < live_from
                || info
                    .get(index)
                    .is_some_and(|i| i.kind == MessageKind::Abandoned),
        });
        call_at_row.push(call);
    }
    for k in next_compaction..compactions.len() {
        rows.push(ViewRow::Compaction(k));
        call_at_row.push(call);
    }
    let tags = info
        .iter()
        .map(|i| match i.kind {
            MessageKind::Conversation => None,
            MessageKind::Injected => Some("injected"),
            MessageKind::CompactSummary => Some("summary"),
            MessageKind::Abandoned => Some("abandoned"),
        })
        .collect();
    let infos = all.into_iter().map(MessageInfo::new).collect();
    OpenedSession {
        path: path.to_path_buf(),
        label: path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| path.display().to_string()),
        format,
        meta,
        bytes,
        complete,
        load_error: None,
        rows,
        infos,
        tags,
        compactions,
        calls,
        call_at_row,
        messages,
        warnings: warnings.len(),
        skipped: skipped.values().sum(),
        sidechains: sidechains.len(),
        list: ListState::default(),
        replay: None,
        scratch: None,
        recorded,
    }
}

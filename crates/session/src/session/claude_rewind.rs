//! Claude Code rewinds: every line names its parent (`parentUuid`), and a person who
//! rewinds (Esc Esc, or editing an earlier prompt) writes the new message with a parent
//! from before the answer that followed it. The messages between that parent and the new
//! message are a branch nobody continued: they are marked `MessageKind::Abandoned`, so the
//! conversation (a replay, what the model saw afterwards) is the branch that went on
//! (docs/pipeline.md, "Reading sessions"). Only the reader's own builder is touched.

use super::assemble::Builder;
use super::claude_line::ParentField;
use super::model::MessageKind;
use super::uuid_index::{UuidIndex, UuidKey};

/// A line's `parentUuid`, as the thread's uuid index keys it (only ever looked up there).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Parent {
    /// The line has no `parentUuid` key: the file says nothing.
    Absent,
    /// `"parentUuid": null`: the line starts a chain.
    Root,
    Line(UuidKey),
}

impl Parent {
    pub(crate) fn of(field: &ParentField, index: &UuidIndex) -> Parent {
        match field {
            ParentField::Absent => Parent::Absent,
            ParentField::Null => Parent::Root,
            ParentField::Text(p) => Parent::Line(index.key(p)),
        }
    }
}

/// A line that became no message of its own (a system line, progress, a synthetic answer)
/// still sits in the chain: a later message may name it as its parent, so it stands for
/// the message it hangs after.
pub(crate) fn index_other_line(b: &mut Builder, uuid: Option<&str>, parent: &Parent) {
    let (Some(uuid), Parent::Line(p)) = (uuid, parent) else {
        return;
    };
    let key = b.uuid_index.key(uuid);
    if b.uuid_index.get_key(key).is_some() {
        return;
    }
    if let Some(i) = b.uuid_index.get_key(*p) {
        b.uuid_index.insert_key(key, i);
    }
}

/// Before a user message that is no tool result: when its parent lies before messages
/// already read, those messages are a branch it rewound past. `chained` says whether the
/// file records a chain at all (a `null` parent then means the very first message).
pub(crate) fn before_user_message(b: &mut Builder, chained: bool, parent: &Parent) {
    let from = match parent {
        Parent::Absent => return,
        Parent::Line(p) => match b.uuid_index.get_key(*p) {
            Some(i) => i + 1,
            // A parent in another file (a resumed session) or not read: no rewind known.
            None => return,
        },
        Parent::Root if chained => segment_start(b),
        Parent::Root => return,
    };
    b.close_all();
    if from >= b.end() {
        return;
    }
    // Rewinding behind a compaction is not something the file lets us tell apart from a
    // chain the compaction restarted: leave it as recorded.
    if b.session.compactions.iter().any(|c| c.at >= from) {
        return;
    }
    // A rewind goes back past an answer; a message hung on its call's tool use line while
    // the result came in is no rewind.
    if !b.assistant_from(from) {
        return;
    }
    // A follower forgot the messages it reported (`Builder::forget_messages`): those were
    // marked as they were, and count as marked (a summary among them would have been a
    // compaction after `from`, returned above).
    let forgotten = b.forgotten();
    let mut marked = forgotten.saturating_sub(from);
    let s = &mut b.session;
    let start = from.saturating_sub(forgotten).min(s.info.len());
    for info in &mut s.info[start..] {
        if info.kind != MessageKind::CompactSummary {
            info.kind = MessageKind::Abandoned;
            marked += 1;
        }
    }
    if marked > 0 {
        s.meta.rewinds += 1;
    }
}

/// Where the chain a `null` parent starts: after the last full compaction's summary.
fn segment_start(b: &Builder) -> usize {
    b.session
        .compactions
        .iter()
        .filter(|c| c.kind.replaces_history())
        .map(|c| c.summary_message.map_or(c.at, |i| i + 1))
        .max()
        .unwrap_or(0)
}

//! A full compaction read from two requests of the thread (docs/capture.md, "A capture as
//! a session"): where it happened (the agent's compaction request, when there was one),
//! its summary (the block of the later request that holds that request's answer, alone;
//! else the first message that differs), what it kept (the shared start, what was re-sent
//! before the summary, the messages after it the thread already held) and the tokens
//! before (the thread's last call) and after (the call that shows it). Only `fold` calls
//! it; it reads the two requests and pushes onto the session.

use crate::message::{BlockKind, Message, Role};
use crate::session::model::{
    Compaction, CompactionKind, KeptMessage, MessageKind, MessageOrigin, RecordedUsage, Session,
    Summary, TokenCount, TokenSource, Trigger,
};

/// The agent's compaction request, until the thread's next call shows what it left.
pub(super) struct PendingCompaction {
    pub(super) line: usize,
    pub(super) started: String,
    /// How to find its summary in the next request (`kind::summary_needle`).
    pub(super) needle: Option<String>,
    pub(super) trigger: Option<String>,
    /// The server answered it with its own compaction (the Responses API's
    /// `compaction_trigger`): a compaction of kind "server".
    pub(super) server: bool,
}

/// The call that shows a full compaction: its request's messages, how many of them start
/// the thread's last request too, the compaction request before it and its usage.
pub(super) struct Before<'a> {
    pub(super) msgs: &'a [Message],
    pub(super) common: usize,
    pub(super) pending: Option<PendingCompaction>,
    pub(super) usage: &'a RecordedUsage,
    /// The thread's last answer held the server's own compaction.
    pub(super) server: bool,
}

/// A full compaction before the call whose request is `msgs` (`common` messages
/// shared with the thread's last request; `session.messages` starts at message `base`, the
/// ones before were forgotten by a follower, `CaptureFold::forget`): what it kept, its summary, the tokens
/// before (the thread's last call) and after (this call's, when its usage is recorded).
/// The summary is the block holding the compaction request's answer when there was one
/// (Codex sends it after the prompts and the environment it re-sends, all in one user
/// message), else the first message that differs.
pub(super) fn full_compaction(
    session: &mut Session,
    base: usize,
    prev: &[Message],
    call: Before<'_>,
    origin: &dyn Fn(MessageKind) -> MessageOrigin,
) {
    let Before {
        msgs,
        common,
        pending,
        usage,
        server,
    } = call;
    // Where it happened: the compaction request, else the call that shows it.
    let here = origin(MessageKind::CompactSummary);
    let (line, started) = match &pending {
        Some(p) => (p.line, Some(p.started.clone())),
        None => (here.line, here.timestamp),
    };
    let kind = if server || pending.as_ref().is_some_and(|p| p.server) {
        CompactionKind::Server
    } else {
        CompactionKind::Full
    };
    let mut c = Compaction::new(kind, base + session.messages.len(), line);
    c.timestamp = started;
    let (needle, trigger) = pending.map_or((None, None), |p| (p.needle, p.trigger));
    c.trigger = trigger.as_deref().map(Trigger::parse);
    let (k, block) = needle
        .and_then(|n| find_summary(&msgs[common..], &n))
        .map_or((common, None), |(k, b)| (common + k, b));
    // What it re-sent before the summary: the model sees it again, nobody typed it.
    let mut injected: Vec<Message> = msgs[common..k.min(msgs.len())].to_vec();
    let mut after = Vec::new();
    let summary = match (msgs.get(k), block) {
        (Some(m), Some(b)) => {
            let blocks = m.blocks();
            if b > 0 {
                injected.push(Message::user_blocks(blocks[..b].to_vec()));
            }
            if b + 1 < blocks.len() {
                after.push(Message::user_blocks(blocks[b + 1..].to_vec()));
            }
            Some(Message::user_blocks(vec![blocks[b].clone()]))
        }
        (Some(m), None) => Some(m.clone()),
        (None, _) => None,
    };
    // Messages the thread held that follow the summary unchanged (Claude Code keeps
    // the last ones verbatim): kept, not said again.
    let rest = msgs.get(k + 1..).unwrap_or(&[]);
    let held: Vec<&Message> = prev.iter().chain(session.messages.last()).collect();
    let verbatim = if after.is_empty() {
        rest.iter()
            .take_while(|m| held.iter().any(|h| same_message(h, m)))
            .count()
    } else {
        0
    };
    c.kept = Some(
        msgs[..common]
            .iter()
            .chain(&injected)
            .chain(&rest[..verbatim])
            .map(|m| KeptMessage {
                message: m.clone(),
                from: None,
            })
            .collect(),
    );
    for m in injected {
        session.messages.push(m);
        session.info.push(origin(MessageKind::Injected));
    }
    if let Some(summary) = summary {
        c.summary = Summary::Text(summary.joined_text());
        c.summary_message = Some(base + session.messages.len());
        session.messages.push(summary);
        session.info.push(origin(MessageKind::CompactSummary));
    }
    if let Some(before) = session.calls.last() {
        c.tokens_before = Some(TokenCount {
            tokens: before.usage.context_tokens(),
            source: TokenSource::LastCallBefore,
        });
    }
    let after_tokens = usage.context_tokens();
    c.tokens_after = (after_tokens > 0).then_some(TokenCount {
        tokens: after_tokens,
        source: TokenSource::FirstCallAfter,
    });
    session.compactions.push(c);
    push_all(session, &after, origin);
    push_all(session, &rest[verbatim..], origin);
}

/// Where `needle` is in `msgs`: the message, and the text block when the content is blocks.
fn find_summary(msgs: &[Message], needle: &str) -> Option<(usize, Option<usize>)> {
    msgs.iter().enumerate().find_map(|(k, m)| {
        if m.role_kind() != Role::User {
            return None;
        }
        if let Some(t) = m.text() {
            return t.contains(needle).then_some((k, None));
        }
        m.blocks()
            .iter()
            .position(|b| {
                BlockKind::of(b) == BlockKind::Text
                    && b.get("text")
                        .and_then(serde_json::Value::as_str)
                        .is_some_and(|t| t.contains(needle))
            })
            .map(|b| (k, Some(b)))
    })
}

/// The same message as far as the conversation goes: equal, or the same role, text and
/// tool calls (an answer assembled from its response is blocks where the client may send
/// it back as a string).
fn same_message(a: &Message, b: &Message) -> bool {
    let ids = |m: &Message| -> Vec<String> {
        m.tool_uses()
            .filter_map(|b| b.get("id").and_then(serde_json::Value::as_str))
            .map(str::to_string)
            .collect()
    };
    a == b || (a.role() == b.role() && a.joined_text() == b.joined_text() && ids(a) == ids(b))
}

/// Pushes `msgs` onto the session, each with its origin.
pub(super) fn push_all(
    session: &mut Session,
    msgs: &[Message],
    origin: &dyn Fn(MessageKind) -> MessageOrigin,
) {
    for m in msgs {
        session.messages.push(m.clone());
        session.info.push(origin(MessageKind::Conversation));
    }
}

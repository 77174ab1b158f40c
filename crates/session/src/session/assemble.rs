//! Turns a stream of recorded pieces into messages in the Anthropic shape, for the Claude
//! Code and Codex readers alike.
//!
//! Both tools write one model response as several lines (Claude Code one line per content
//! block, Codex one line per item), and the tool results of a response as several lines
//! that may even be interleaved with the response's later blocks. The API sees one
//! assistant message per call and one user message holding all of its results; this
//! builder rebuilds exactly that: assistant pieces with the same request key merge into
//! the open call, results that answer the open call's tool uses gather after it, and
//! anything else closes the call first. It never reads a file.

use serde_json::{Map, Value};

use super::model::{
    Compaction, LoadWarning, MessageKind, MessageOrigin, RecordedCall, RecordedUsage, Session,
    SessionFormat,
};
use super::uuid_index::UuidIndex;
use crate::message::{BlockKind, Message, Role, block_tool_id};

/// Where a piece came from in the file.
#[derive(Debug, Clone, Default)]
pub(crate) struct Origin {
    pub line: usize,
    pub timestamp: Option<String>,
    pub uuid: Option<String>,
}

/// The call being assembled: its assistant blocks and the results answering them.
#[derive(Debug)]
struct OpenCall {
    key: String,
    origin: Origin,
    blocks: Vec<Value>,
    tool_ids: Vec<String>,
    results: Vec<Value>,
    results_origin: Option<Origin>,
    usage: Option<(RecordedUsage, usize, Option<String>)>,
    model: Option<String>,
}

/// A piece held until the open call's results are in.
#[derive(Debug)]
enum Held {
    Message(Message, Origin, MessageKind),
    /// Assistant blocks of a later request (Codex's reasoning item written before the
    /// output of the call before it).
    Assistant(String, Vec<Value>, Origin),
}

/// Builds one `Session` from pieces in file order.
#[derive(Debug)]
pub(crate) struct Builder {
    pub session: Session,
    open: Option<OpenCall>,
    /// Messages that came between the open call's tool uses and their results, placed
    /// after the results when the call closes (`push_between`).
    between: Vec<Held>,
    /// Claude Code's line uuids -> index of the message that holds the line.
    pub uuid_index: UuidIndex,
    /// A numbers-only read (`detail::Detail::Numbers`): each message is held as its
    /// sized outline once it is in the list (`held`).
    pub slim: bool,
    /// Hears each message as the list takes it, whole, before it is slimmed (a read that
    /// sizes every message for `inspect --calls`: `sized_read`).
    pub on_held: Option<HeldHook>,
    /// Messages a follower dropped off the front of the list once reported
    /// (`forget_messages`): every index the builder hands out or stores (a call's message,
    /// a compaction's `at`, `uuid_index`) counts them, so indices stay those of the whole
    /// file. Always 0 for a whole-file read.
    forgotten: usize,
    /// The index of the last assistant message among the forgotten ones (a rewind and
    /// `current_assistant` look back at roles only).
    forgotten_assistant: Option<usize>,
}

/// What `Builder::on_held` calls with each message the list takes, in order.
pub(crate) struct HeldHook(pub Box<dyn FnMut(&Message)>);

impl std::fmt::Debug for HeldHook {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("HeldHook")
    }
}

impl Builder {
    pub fn new(format: SessionFormat) -> Builder {
        Builder {
            session: Session::empty(format),
            open: None,
            between: Vec::new(),
            uuid_index: UuidIndex::default(),
            slim: false,
            on_held: None,
            forgotten: 0,
            forgotten_assistant: None,
        }
    }

    /// A message as the list holds it: whole, or for a numbers-only read its outline (its
    /// size, role and tool ids; a result's text only where it is Claude Code's persisted
    /// output, which `inspect` counts). The readers never look back at a message's text.
    fn held(&mut self, message: Message) -> Message {
        if let Some(hook) = &mut self.on_held {
            (hook.0)(&message);
        }
        if !self.slim {
            return message;
        }
        let persisted = |t: &str| super::claude_persisted::claude_code_persisted(t).is_some();
        message.into_sized_outline(&persisted)
    }

    /// How many messages were closed so far, the forgotten ones included: the index the
    /// next message gets.
    pub fn end(&self) -> usize {
        self.forgotten + self.session.messages.len()
    }

    /// How many messages the front of the list lost (`forget_messages`).
    pub fn forgotten(&self) -> usize {
        self.forgotten
    }

    /// Whether an assistant message is at index `from` or later (indices of the whole file).
    pub fn assistant_from(&self, from: usize) -> bool {
        self.forgotten_assistant.is_some_and(|a| a >= from)
            || self.session.messages[from
                .saturating_sub(self.forgotten)
                .min(self.session.messages.len())..]
                .iter()
                .any(|m| m.role_kind() == Role::Assistant)
    }

    /// Drops the first `n` messages held (and their origins), keeping only whether one
    /// was the model's: what a follower does with messages it reported (`watch::live`),
    /// so that what it holds follows what it shows, not the lines it read.
    pub fn forget_messages(&mut self, n: usize) {
        let n = n.min(self.session.messages.len());
        if let Some(i) = self.session.messages[..n]
            .iter()
            .rposition(|m| m.role_kind() == Role::Assistant)
        {
            self.forgotten_assistant = Some(self.forgotten + i);
        }
        self.session.messages.drain(..n);
        let infos = n.min(self.session.info.len());
        self.session.info.drain(..infos);
        self.forgotten += n;
    }

    /// How many messages exist once the open call is closed.
    pub fn len_with_open(&self) -> usize {
        let open = match &self.open {
            None => 0,
            Some(c) => 1 + usize::from(!c.results.is_empty()),
        };
        let held_messages = self
            .between
            .iter()
            .filter(|h| matches!(h, Held::Message(..)))
            .count();
        let open = open + held_messages + usize::from(self.holds_assistant());
        self.end() + open
    }

    /// Index the open call's assistant message will get, or the last assistant message.
    pub fn current_assistant(&self) -> Option<usize> {
        if self.holds_assistant() {
            return self.len_with_open().checked_sub(1);
        }
        if self.open.is_some() {
            return Some(self.end());
        }
        self.session
            .messages
            .iter()
            .rposition(|m| m.role_kind() == Role::Assistant)
            .map(|i| self.forgotten + i)
            .or(self.forgotten_assistant)
    }

    pub fn warn(&mut self, line: usize, message: impl Into<String>) {
        self.session.warnings.push(LoadWarning {
            line,
            message: message.into(),
        });
    }

    pub fn skip(&mut self, what: impl Into<String>) {
        *self.session.skipped.entry(what.into()).or_default() += 1;
    }

    fn index_uuid(&mut self, uuid: &Option<String>, index: usize) {
        if let Some(u) = uuid {
            self.uuid_index.insert(u, index);
        }
    }

    /// Assistant blocks of the request `key`: merged into the open call when it has the
    /// same key, otherwise they open a new one.
    pub fn assistant(&mut self, key: &str, blocks: Vec<Value>, origin: Origin) {
        // Closing a call may open the held one after it: close until the key matches.
        while self.open.as_ref().is_some_and(|c| c.key != key) {
            self.flush();
        }
        let index = self.end();
        self.index_uuid(&origin.uuid, index);
        let call = self.open.get_or_insert_with(|| OpenCall {
            key: key.to_string(),
            origin,
            blocks: Vec::new(),
            tool_ids: Vec::new(),
            results: Vec::new(),
            results_origin: None,
            usage: None,
            model: None,
        });
        for b in &blocks {
            if BlockKind::of(b) == BlockKind::ToolUse
                && let Some(id) = block_tool_id(b)
            {
                call.tool_ids.push(id.to_string());
            }
        }
        if call.blocks.is_empty() {
            // The call's first blocks: kept as they came, not copied.
            call.blocks = blocks;
        } else {
            call.blocks.extend(blocks);
        }
    }

    /// The usage the open call reported (the last report of a request wins: later lines
    /// of one response carry the final output count).
    pub fn call_usage(&mut self, usage: RecordedUsage, line: usize, timestamp: Option<String>) {
        if let Some(call) = &mut self.open {
            call.usage = Some((usage, line, timestamp));
        }
    }

    pub fn call_model(&mut self, model: &str) {
        if let Some(call) = &mut self.open {
            call.model = Some(model.to_string());
        }
        self.session.meta.saw_model(model);
    }

    /// A user message made of blocks, some of them tool results. Results answering the open
    /// call join its results message; anything else becomes its own message.
    pub fn results(&mut self, blocks: Vec<Value>, origin: Origin) {
        let answers = |open: &Option<OpenCall>| {
            open.as_ref().is_some_and(|c| {
                blocks.iter().any(|b| {
                    BlockKind::of(b) == BlockKind::ToolResult
                        && block_tool_id(b).is_some_and(|id| c.tool_ids.iter().any(|t| t == id))
                })
            })
        };
        let mut answers_open = answers(&self.open);
        if !answers_open && self.holds_assistant() {
            // It may answer the held call: close the open one, which opens the held one.
            self.flush();
            answers_open = answers(&self.open);
        }
        if !answers_open {
            let line = origin.line;
            self.push(
                Message::user_blocks(blocks),
                origin,
                MessageKind::Conversation,
            );
            self.warn(
                line,
                "tool result answers no tool use of the call before it; kept as its own message",
            );
            return;
        }
        let index = self.end() + 1;
        self.index_uuid(&origin.uuid, index);
        if let Some(call) = &mut self.open {
            if call.results_origin.is_none() {
                call.results_origin = Some(origin);
            }
            call.results.extend(blocks);
        }
        if !self.waiting_for_results() && self.holds_assistant() {
            // Every result is in: the held call is the open one from now on.
            self.flush();
        }
    }

    /// A whole message (user text, injected context, a summary): closes the open call first.
    pub fn push(&mut self, message: Message, origin: Origin, kind: MessageKind) -> usize {
        self.close_all();
        let index = self.end();
        self.index_uuid(&origin.uuid, index);
        let message = self.held(message);
        self.session.messages.push(message);
        self.session.info.push(MessageOrigin {
            line: origin.line,
            timestamp: origin.timestamp,
            uuid: origin.uuid,
            kind,
        });
        index
    }

    /// Whether the open call has a tool use no result has answered yet.
    pub fn waiting_for_results(&self) -> bool {
        self.open.as_ref().is_some_and(|c| {
            c.tool_ids.iter().any(|id| {
                !c.results.iter().any(|r| {
                    BlockKind::of(r) == BlockKind::ToolResult && block_tool_id(r) == Some(id)
                })
            })
        })
    }

    /// Whether assistant blocks of a later request are held for after the open call.
    pub fn holds_assistant(&self) -> bool {
        self.between
            .iter()
            .any(|h| matches!(h, Held::Assistant(..)))
    }

    /// A whole message that may have come between a call's tool uses and their results
    /// (Codex writes developer and user messages there): while the open call still waits
    /// for a result, it is held and placed right after the results message, so each result
    /// stays in the message after its call (docs/pipeline.md, "Reading sessions").
    pub fn push_between(&mut self, message: Message, origin: Origin, kind: MessageKind) {
        if self.waiting_for_results() {
            self.between.push(Held::Message(message, origin, kind));
        } else {
            self.push(message, origin, kind);
        }
    }

    /// Assistant blocks that may have come between a call's tool uses and their results:
    /// blocks of the open call's own request merge into it; a later request's blocks wait
    /// until the results are in and then open that request's call.
    pub fn assistant_between(&mut self, key: &str, blocks: Vec<Value>, origin: Origin) {
        let other_key = self.open.as_ref().is_some_and(|c| c.key != key);
        if (other_key && self.waiting_for_results()) || self.holds_assistant() {
            self.between
                .push(Held::Assistant(key.to_string(), blocks, origin));
        } else {
            self.assistant(key, blocks, origin);
        }
    }

    /// Records a model call on the open call's message (or the last assistant message).
    pub fn record_call(&mut self, mut call: RecordedCall) {
        call.message = self.current_assistant();
        self.session.calls.push(call);
    }

    /// Closes the open call: its assistant message, then its results.
    pub fn flush(&mut self) {
        let Some(call) = self.open.take() else {
            return;
        };
        let index = self.end();
        if let Some((usage, line, timestamp)) = call.usage {
            self.session.calls.push(RecordedCall {
                message: Some(index),
                line,
                timestamp,
                model: call.model.clone(),
                usage,
                context_window: None,
            });
        }
        let answer = self.held(Message::assistant_blocks(call.blocks));
        self.session.messages.push(answer);
        self.session.info.push(MessageOrigin {
            line: call.origin.line,
            timestamp: call.origin.timestamp,
            uuid: call.origin.uuid,
            kind: MessageKind::Conversation,
        });
        if let Some(origin) = call.results_origin {
            let results = self.held(Message::user_blocks(call.results));
            self.session.messages.push(results);
            self.session.info.push(MessageOrigin {
                line: origin.line,
                timestamp: origin.timestamp,
                uuid: origin.uuid,
                kind: MessageKind::Conversation,
            });
        }
        for held in std::mem::take(&mut self.between) {
            match held {
                Held::Message(message, origin, kind) => {
                    self.push(message, origin, kind);
                }
                Held::Assistant(key, blocks, origin) => self.assistant(&key, blocks, origin),
            }
        }
    }

    /// Closes the open call and the held call after it, if any.
    pub fn close_all(&mut self) {
        // Holds exist only beside an open call, and each flush drains them.
        while self.open.is_some() {
            self.flush();
        }
    }

    /// Starts a compaction at the current end of the message list.
    pub fn compaction(&mut self, mut c: Compaction) -> usize {
        self.close_all();
        c.at = self.end();
        self.session.compactions.push(c);
        self.session.compactions.len() - 1
    }

    /// The call being assembled, as far as its lines have come: what a follower reports
    /// before the call closes (`watch::live`).
    pub fn open_call(&self) -> Option<OpenCallView<'_>> {
        let call = self.open.as_ref()?;
        Some(OpenCallView {
            key: &call.key,
            blocks: &call.blocks,
            usage: call.usage.as_ref().map(|(u, line, _)| (u, *line)),
            model: call.model.as_deref(),
        })
    }

    /// Fills the token counts the file did not record from the calls around each
    /// compaction, and returns the session.
    pub fn finish(mut self) -> Session {
        self.close_all();
        fill_tokens_from_calls(&mut self.session);
        self.session
    }
}

/// The open call as `Builder::open_call` shows it.
pub(crate) struct OpenCallView<'a> {
    pub key: &'a str,
    pub blocks: &'a [Value],
    /// The usage reported so far and the line that reported it.
    pub usage: Option<(&'a RecordedUsage, usize)>,
    pub model: Option<&'a str>,
}

pub(crate) fn fill_tokens_from_calls(s: &mut Session) {
    use super::model::{TokenCount, TokenSource};
    let calls: Vec<(usize, u64)> = s
        .calls
        .iter()
        .filter_map(|c| Some((c.message?, c.usage.context_tokens())))
        .collect();
    for c in &mut s.compactions {
        // Calls are in file order: the ones before `at` answered before the compaction.
        let split = calls.partition_point(|(m, _)| *m < c.at);
        if c.tokens_before.is_none()
            && let Some((_, t)) = split.checked_sub(1).map(|i| calls[i])
        {
            c.tokens_before = Some(TokenCount {
                tokens: t,
                source: TokenSource::LastCallBefore,
            });
        }
        if c.tokens_after.is_none()
            && let Some((_, t)) = calls.get(split)
        {
            c.tokens_after = Some(TokenCount {
                tokens: *t,
                source: TokenSource::FirstCallAfter,
            });
        }
    }
}

/// A JSON object's string field.
pub(crate) fn str_field<'a>(o: &'a Map<String, Value>, key: &str) -> Option<&'a str> {
    o.get(key).and_then(Value::as_str)
}

/// A JSON object's whole-number field (tolerates floats written by other tools).
pub(crate) fn u64_field(o: &Map<String, Value>, key: &str) -> Option<u64> {
    let v = o.get(key)?;
    v.as_u64()
        .or_else(|| v.as_f64().filter(|f| *f >= 0.0).map(|f| f as u64))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::message::block;
    use serde_json::json;

    fn at(line: usize) -> Origin {
        Origin {
            line,
            ..Origin::default()
        }
    }

    #[test]
    fn blocks_of_one_request_merge_and_interleaved_results_gather_after_them() {
        let mut b = Builder::new(SessionFormat::ClaudeCode);
        b.push(Message::user_text("go"), at(1), MessageKind::Conversation);
        b.assistant("m1", vec![block::text("Let me look.")], at(2));
        b.assistant(
            "m1",
            vec![block::tool_use("a", "Read", json!({"file_path": "x"}))],
            at(3),
        );
        b.results(vec![block::tool_result("a", "1")], at(4));
        b.assistant(
            "m1",
            vec![block::tool_use("b", "Read", json!({"file_path": "y"}))],
            at(5),
        );
        b.results(vec![block::tool_result("b", "2")], at(6));
        b.assistant("m2", vec![block::text("Done.")], at(7));
        let s = b.finish();
        assert_eq!(s.messages.len(), 4);
        assert_eq!(s.messages[1].blocks().len(), 3);
        let ids: Vec<_> = s.messages[2]
            .tool_results()
            .filter_map(block_tool_id)
            .collect();
        assert_eq!(ids, ["a", "b"]);
        assert_eq!(crate::message::tool_pairing_error(&s.messages), None);
        assert_eq!(s.info[2].line, 4);
        assert_eq!(s.info[3].line, 7);
    }

    #[test]
    fn a_result_for_no_open_call_stays_and_is_reported() {
        let mut b = Builder::new(SessionFormat::ClaudeCode);
        b.push(Message::user_text("go"), at(1), MessageKind::Conversation);
        b.results(vec![block::tool_result("zz", "1")], at(2));
        let s = b.finish();
        assert_eq!(s.messages.len(), 2);
        assert_eq!(s.warnings.len(), 1);
        assert_eq!(s.warnings[0].line, 2);
    }

    #[test]
    fn usage_counts_once_per_request_and_the_last_report_wins() {
        let mut b = Builder::new(SessionFormat::ClaudeCode);
        let u = |out| RecordedUsage {
            input_tokens: 10,
            cache_read_tokens: 100,
            cache_creation_tokens: 5,
            output_tokens: out,
        };
        b.assistant("m1", vec![block::text("a")], at(1));
        b.call_usage(u(1), 1, None);
        b.assistant("m1", vec![block::text("b")], at(2));
        b.call_usage(u(40), 2, None);
        let s = b.finish();
        assert_eq!(s.calls.len(), 1);
        assert_eq!(s.calls[0].usage.output_tokens, 40);
        assert_eq!(s.calls[0].usage.context_tokens(), 115);
        assert_eq!(s.calls[0].message, Some(0));
    }
}

//! Claude Code's session files (`~/.claude/projects/<project>/<session>.jsonl`) into the
//! session model.
//!
//! One JSON object per line. `user` and `assistant` lines carry an API message; an
//! assistant reply is split over several lines, one content block each, sharing
//! `message.id` (usage is counted once per request). Tool results are `user` lines of
//! `tool_result` blocks. A `system` line with subtype `compact_boundary` marks a compaction
//! (`compactMetadata`: trigger, preTokens, newer postTokens, durationMs, preservedSegment
//! or the newer preservedMessages), followed by the `user` line with `isCompactSummary`
//! holding the summary; older files have only that summary line. `microcompact_boundary`
//! marks cleared tool results. Lines with `isSidechain` belong to subagents and become
//! sessions of their own. The request record of newer files (`api-request-shape`,
//! `api-request`, `api-request-blob`, attachments' `rendered` text) is read by
//! `claude_requests`. Every other line type is counted and skipped, a known one as `line
//! type x`, any other as `unknown line type x` (`inspect` names those); a line that is not
//! JSON is a warning, never the end.

use std::collections::HashMap;

use serde_json::{Map, Value};

use super::assemble::{Builder, Origin, str_field, u64_field};
use super::claude_kept::{Preserved, PreservedKind, resolve_kept};
use super::claude_line::ParentField;
use super::claude_line::{ClaudeLine, MessageField, ParsedClaudeLine, Unread};
use super::claude_requests::{RECORD_TYPES, RecordReader};
use super::claude_rewind::{Parent, before_user_message, index_other_line};
use super::detail::Detail;
use super::model::{
    Compaction, CompactionKind, MessageKind, RecordedUsage, Session, SessionFormat, Summary,
    TokenCount, TokenSource, Trigger,
};
use crate::message::{BlockKind, Message};

/// Line types Claude Code writes that hold nothing for the model's context: counted as
/// known metadata (`line type x`), never as unknown. `attachment` lines are read when they
/// carry `rendered` text (`claude_requests`); the others are metadata too. 2.1.332 added
/// `cost-state` (running cost), `mode`, `tools-used`, `atis-latch`.
const KNOWN_OTHER_TYPES: &[&str] = &[
    "file-history-snapshot",
    "attachment",
    "progress",
    "queue-operation",
    "custom-title",
    "tag",
    "agent-name",
    "last-prompt",
    "permission-mode",
    "pr-link",
    "cost-state",
    "mode",
    "tools-used",
    "atis-latch",
];

/// One conversation being read: the main one or a subagent's.
pub(super) struct Thread {
    pub(super) builder: Builder,
    /// The boundaries' preserved messages, resolved once the file is read (a streamed read
    /// resolves each as its compaction is handed over: `claude_windows`).
    pub(super) preserved: Vec<Preserved>,
    /// A message line named a parent: the file records a chain (`claude_rewind`).
    chained: bool,
    /// A line was read in a way a read that held every line's uuid might not have read it
    /// (`claude_windows`: only a read that dropped some can be unsure).
    pub(super) unsure: bool,
    /// The file's record of its requests (`claude_requests`).
    record: RecordReader,
}

impl Thread {
    pub(super) fn new() -> Thread {
        Thread {
            builder: Builder::new(SessionFormat::ClaudeCode),
            preserved: Vec::new(),
            chained: false,
            unsure: false,
            record: RecordReader::default(),
        }
    }

    /// What a follower may drop (`watch::live`): the request record's matches, which
    /// only a whole-file read reports.
    pub(super) fn forget_record(&mut self) {
        self.record.forget_matched();
    }

    /// What a follower may drop of the uuid index (issue 39, item 5): the lines of the
    /// messages before the last compaction, since a rewind behind a compaction is left as
    /// recorded whether its parent is found or not (`claude_rewind`); and past `cap`
    /// entries, the oldest, so that a session that never compacts is bounded too. True
    /// when some of the latter went: a rewind that far back is then not marked. The
    /// boundaries' preserved messages go as well: only a whole read resolves them.
    pub(super) fn forget_uuids(&mut self, cap: usize) -> bool {
        let b = &mut self.builder;
        if let Some(c) = b.session.compactions.last() {
            b.uuid_index.forget_before(c.at);
        }
        self.preserved.clear();
        b.uuid_index.bound(cap)
    }

    /// Uuids indexed, for a follower's test of what it holds.
    #[cfg(test)]
    pub(super) fn uuids_held(&self) -> usize {
        self.builder.uuid_index.len() + self.preserved.len()
    }

    fn finish(self) -> Session {
        let Thread {
            mut builder,
            preserved,
            record,
            ..
        } = self;
        builder.flush();
        builder.session.request_record = record.record;
        resolve_kept(&mut builder, preserved);
        builder.finish()
    }
}

/// Reads the parsed lines of a Claude Code session file.
pub(crate) fn read_claude(lines: impl IntoIterator<Item = ParsedClaudeLine>) -> Session {
    read_claude_detail(lines, Detail::Full)
}

/// `read_claude` holding what `detail` asks (a numbers-only read holds each message's
/// outline, `Builder::slim`).
pub(crate) fn read_claude_detail(
    lines: impl IntoIterator<Item = ParsedClaudeLine>,
    detail: Detail,
) -> Session {
    read_claude_hooked(lines, detail, None)
}

/// `read_claude_detail` with `hook` hearing each message of the main thread as it is
/// held (`Builder::on_held`; the sidechains' are not heard).
pub(crate) fn read_claude_hooked(
    lines: impl IntoIterator<Item = ParsedClaudeLine>,
    detail: Detail,
    hook: Option<super::assemble::HeldHook>,
) -> Session {
    let thread = || {
        let mut t = Thread::new();
        t.builder.slim = detail == Detail::Numbers;
        t
    };
    let mut main = thread();
    main.builder.on_held = hook;
    let mut sides: Vec<(String, Thread)> = Vec::new();
    let mut side_of_uuid: HashMap<String, usize> = HashMap::new();
    let mut count = 0;
    for parsed in lines {
        count += 1;
        let Some((number, o)) = read_or_warn(&mut main.builder, parsed) else {
            continue;
        };
        if o.is_sidechain {
            let key = o.agent_id.clone();
            let parent = match &o.parent {
                ParentField::Text(p) => side_of_uuid.get(p.as_str()).copied(),
                _ => None,
            };
            let index = match (key, parent) {
                (Some(k), _) => match sides.iter().position(|(sk, _)| *sk == k) {
                    Some(i) => i,
                    None => {
                        sides.push((k, thread()));
                        sides.len() - 1
                    }
                },
                (None, Some(i)) => i,
                (None, None) => {
                    let k = o.uuid.as_deref().unwrap_or("sidechain").to_string();
                    sides.push((k, thread()));
                    sides.len() - 1
                }
            };
            if let Some(u) = &o.uuid {
                side_of_uuid.insert(u.clone(), index);
            }
            let thread = &mut sides[index].1;
            thread.builder.session.lines += 1;
            read_line(thread, number, o);
        } else {
            main.builder.session.lines += 1;
            read_line(&mut main, number, o);
        }
    }
    let mut session = main.finish();
    let sidechains: Vec<Session> = sides
        .into_iter()
        .map(|(key, t)| {
            let mut s = t.finish();
            if s.meta.agent_id.is_none() && key != "sidechain" {
                s.meta.agent_id = Some(key);
            }
            s
        })
        .collect();
    // A subagent's own file holds only sidechain lines: it is that subagent's session.
    if session.messages.is_empty() && session.compactions.is_empty() && sidechains.len() == 1 {
        let mut only = sidechains
            .into_iter()
            .next()
            .unwrap_or_else(|| session.clone());
        only.warnings.extend(session.warnings);
        only.lines = count;
        return only;
    }
    session.sidechains = sidechains;
    session.lines = count;
    session
}

/// The warning for a line that is no JSON object, skipped.
/// A parsed line's number and content, or None after the warning of a line that could
/// not be read (every reader of the main thread skips it the same way).
pub(super) fn read_or_warn(
    b: &mut Builder,
    parsed: ParsedClaudeLine,
) -> Option<(usize, ClaudeLine)> {
    let ParsedClaudeLine { number, line } = parsed;
    match line {
        Ok(o) => Some((number, o)),
        Err(Unread::NotObject) => {
            b.warn(number, "line is JSON but not an object; skipped");
            None
        }
        Err(Unread::Malformed(e)) => {
            b.warn(number, format!("malformed line skipped: {e}"));
            None
        }
    }
}

fn origin(number: usize, o: &ClaudeLine) -> Origin {
    Origin {
        line: number,
        timestamp: o.timestamp.clone(),
        uuid: o.uuid.clone(),
    }
}

pub(super) fn read_line(t: &mut Thread, number: usize, mut o: ClaudeLine) {
    let b = &mut t.builder;
    let meta = &mut b.session.meta;
    if let Some(ts) = &o.timestamp {
        meta.saw_timestamp(ts);
    }
    for (value, slot) in [
        (&mut o.session_id, &mut meta.session_id),
        (&mut o.version, &mut meta.version),
        (&mut o.cwd, &mut meta.cwd),
        (&mut o.git_branch, &mut meta.git_branch),
        (&mut o.agent_id, &mut meta.agent_id),
    ] {
        if slot.is_none() && value.as_ref().is_some_and(|v| !v.is_empty()) {
            // Taken, not copied: nothing after reads these but the sidechain's agent id,
            // read before.
            *slot = value.take();
        }
    }
    // Taken out of the line rather than copied: nothing after reads the line's type.
    let kind = o.kind.take().unwrap_or_default();
    let parent = Parent::of(&o.parent, &t.builder.uuid_index);
    let uuid = o.uuid.clone();
    if matches!(parent, Parent::Line(_)) && matches!(kind.as_str(), "user" | "assistant") {
        t.chained = true;
    }
    let b = &mut t.builder;
    match kind.as_str() {
        "user" => user_line(t, number, &mut o, &parent),
        "assistant" => {
            if let Some((key, model)) = assistant_line(b, number, &mut o) {
                let request_ref = o.request_ref.as_deref();
                t.record
                    .assistant(number, &key, model.as_deref(), request_ref);
            }
        }
        "system" => system_line(t, number, &o),
        "summary" => {
            b.session.meta.summary_lines += 1;
            if let Some(title) = o.summary.take() {
                b.session.meta.title = Some(title);
            }
        }
        "attachment" if t.record.attachment(number, &o.rest) => {}
        k if RECORD_TYPES.contains(&k) => {
            if !t.record.read(k, &o.rest) {
                b.skip(format!("line type {k} without its fields"));
            }
        }
        k if KNOWN_OTHER_TYPES.contains(&k) => b.skip(format!("line type {k}")),
        "" => b.skip("line without a type"),
        k => b.skip(format!("unknown line type {k}")),
    }
    index_other_line(&mut t.builder, uuid.as_deref(), &parent);
}

/// The blocks of a content list that are JSON objects; others are reported and dropped.
/// Filtered in place: the list read is the list kept (one allocation fewer a line).
fn object_blocks(b: &mut Builder, number: usize, items: Vec<Value>) -> Vec<Value> {
    items
        .into_iter()
        .filter_map(|item| match item {
            Value::Object(mut block) => {
                if block
                    .get("type")
                    .and_then(Value::as_str)
                    .map(BlockKind::from_word)
                    == Some(BlockKind::ToolResult)
                {
                    match block.get("content") {
                        None | Some(Value::Null | Value::String(_) | Value::Array(_)) => {}
                        Some(other) => {
                            let text = other.to_string();
                            block.insert("content".into(), Value::String(text));
                            b.warn(number, "a tool result's content was neither text nor a list; kept as its JSON text");
                        }
                    }
                }
                Some(Value::Object(block))
            }
            _ => {
                b.warn(number, "a content block that is not an object was dropped");
                None
            }
        })
        .collect()
}

fn text_of(content: &Value) -> String {
    match content {
        Value::String(s) => s.clone(),
        Value::Array(blocks) => blocks
            .iter()
            .filter(|b| BlockKind::of(b) == BlockKind::Text)
            .filter_map(|b| b.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

fn user_line(t: &mut Thread, number: usize, o: &mut ClaudeLine, parent: &Parent) {
    let origin = origin(number, o);
    let b = &mut t.builder;
    let content = match &mut o.message {
        Some(MessageField::Object(m)) if m.content.is_some() => {
            m.content.take().unwrap_or_default()
        }
        _ => {
            b.warn(number, "user line without message content; skipped");
            return;
        }
    };
    if o.is_compact_summary {
        let text = text_of(&content);
        let len = b.len_with_open();
        let pending = b.session.compactions.last().is_some_and(|c| {
            c.kind == CompactionKind::Full && c.summary == Summary::NotRecorded && c.at == len
        });
        let k = if pending {
            b.session.compactions.len() - 1
        } else {
            // Older files record a compaction only by its summary line.
            let mut c = Compaction::new(CompactionKind::Full, 0, number);
            c.timestamp = origin.timestamp.clone();
            c.kept = Some(Vec::new());
            b.compaction(c)
        };
        let message = match content {
            Value::Array(items) => Message::user_blocks(object_blocks(b, number, items)),
            other => Message::user_text(text_of(&other)),
        };
        let index = b.push(message, origin, MessageKind::CompactSummary);
        let c = &mut b.session.compactions[k];
        c.summary = Summary::Text(text);
        c.summary_message = Some(index);
        return;
    }
    let injected = o.is_meta;
    let answers_a_tool = match &content {
        Value::Array(items) => items
            .iter()
            .any(|x| BlockKind::of(x) == BlockKind::ToolResult),
        _ => false,
    };
    if !answers_a_tool {
        before_user_message(b, t.chained, parent);
    }
    match content {
        Value::String(s) => {
            let kind = if injected {
                MessageKind::Injected
            } else {
                MessageKind::Conversation
            };
            b.push(Message::user_text(s), origin, kind);
        }
        Value::Array(items) => {
            let blocks = object_blocks(b, number, items);
            if blocks
                .iter()
                .any(|x| BlockKind::of(x) == BlockKind::ToolResult)
            {
                b.results(blocks, origin);
            } else {
                let kind = if injected {
                    MessageKind::Injected
                } else {
                    MessageKind::Conversation
                };
                b.push(Message::user_blocks(blocks), origin, kind);
            }
        }
        _ => {
            // A parent not found among the uuids a streamed read kept may have been one it
            // dropped: a whole read would have closed the open call here (`claude_rewind`).
            let unsure = matches!(parent, Parent::Line(p) if b.uuid_index.get_key(*p).is_none())
                && b.uuid_index.dropped_some()
                && b.open_call().is_some();
            b.warn(
                number,
                "user line whose content is neither text nor a list; skipped",
            );
            t.unsure |= unsure;
        }
    }
}

/// Reads an assistant line; its call's key and model, when it is a model call.
fn assistant_line(
    b: &mut Builder,
    number: usize,
    o: &mut ClaudeLine,
) -> Option<(String, Option<String>)> {
    let origin = origin(number, o);
    let Some(MessageField::Object(message)) = o.message.take() else {
        b.warn(number, "assistant line without a message; skipped");
        return None;
    };
    let model = message.model;
    // Claude Code's own stand-ins (API errors, "No response requested.") are no model call.
    if model.as_deref() == Some("<synthetic>") {
        b.skip("synthetic assistant line");
        return None;
    }
    let key = message
        .id
        .or_else(|| o.request_id.take())
        .or_else(|| origin.uuid.clone())
        .unwrap_or_else(|| format!("line {number}"));
    let blocks = match message.content {
        Some(Value::Array(items)) => object_blocks(b, number, items),
        Some(Value::String(s)) => vec![crate::message::block::text(s)],
        _ => Vec::new(),
    };
    let timestamp = origin.timestamp.clone();
    b.assistant(&key, blocks, origin);
    if let Some(m) = &model {
        b.call_model(m);
    }
    if let Some(u) = message.usage {
        let usage = RecordedUsage {
            input_tokens: u.input_tokens.unwrap_or(0),
            cache_read_tokens: u.cache_read_input_tokens.unwrap_or(0),
            cache_creation_tokens: u.cache_creation_input_tokens.unwrap_or(0),
            output_tokens: u.output_tokens.unwrap_or(0),
        };
        b.call_usage(usage, number, timestamp);
    }
    Some((key, model))
}

fn recorded(tokens: Option<u64>) -> Option<TokenCount> {
    tokens.map(|tokens| TokenCount {
        tokens,
        source: TokenSource::Recorded,
    })
}

fn system_line(t: &mut Thread, number: usize, o: &ClaudeLine) {
    let b = &mut t.builder;
    let subtype = o.subtype.as_deref().unwrap_or("");
    let timestamp = o.timestamp.clone();
    match subtype {
        "compact_boundary" => {
            let empty = Map::new();
            let meta = match o.rest.get("compactMetadata") {
                Some(Value::Object(m)) => m,
                _ => &empty,
            };
            let mut c = Compaction::new(CompactionKind::Full, 0, number);
            c.timestamp = timestamp;
            c.trigger = str_field(meta, "trigger").map(Trigger::parse);
            c.tokens_before = recorded(u64_field(meta, "preTokens"));
            c.tokens_after = recorded(u64_field(meta, "postTokens"));
            c.duration_ms = u64_field(meta, "durationMs");
            c.kept = Some(Vec::new());
            let messages = match meta.get("preservedMessages") {
                Some(Value::Object(pm)) => Some(match pm.get("uuids") {
                    Some(Value::Array(ids)) => Some(
                        ids.iter()
                            .filter_map(Value::as_str)
                            .map(str::to_string)
                            .collect::<Vec<_>>(),
                    ),
                    _ => None,
                }),
                _ => None,
            };
            let segment = match meta.get("preservedSegment") {
                Some(Value::Object(seg)) => Some((
                    str_field(seg, "headUuid").map(str::to_string),
                    str_field(seg, "tailUuid").map(str::to_string),
                )),
                _ => None,
            };
            let k = b.compaction(c);
            let what = match (messages, segment) {
                (Some(Some(uuids)), _) => Some(PreservedKind::Uuids(uuids)),
                (_, Some((Some(head), Some(tail)))) => Some(PreservedKind::Segment { head, tail }),
                (None, None) => None,
                (Some(None), _) => {
                    b.session.compactions[k].kept = None;
                    b.warn(number, "preserved messages without a uuids list");
                    None
                }
                (None, Some(_)) => {
                    b.session.compactions[k].kept = None;
                    b.warn(number, "preserved segment without head and tail uuids");
                    None
                }
            };
            if let Some(what) = what {
                t.preserved.push(Preserved {
                    compaction: k,
                    line: number,
                    what,
                });
            }
        }
        "microcompact_boundary" => {
            let empty = Map::new();
            let meta = match o.rest.get("microcompactMetadata") {
                Some(Value::Object(m)) => m,
                _ => &empty,
            };
            let mut c = Compaction::new(CompactionKind::Micro, 0, number);
            c.timestamp = timestamp;
            c.trigger = str_field(meta, "trigger").map(Trigger::parse);
            let before = u64_field(meta, "preTokens");
            c.tokens_before = recorded(before);
            c.tokens_after = recorded(
                before.and_then(|p| u64_field(meta, "tokensSaved").map(|s| p.saturating_sub(s))),
            );
            c.cleared_tool_ids = match meta.get("compactedToolIds") {
                Some(Value::Array(ids)) => ids
                    .iter()
                    .filter_map(Value::as_str)
                    .map(str::to_string)
                    .collect(),
                _ => Vec::new(),
            };
            b.compaction(c);
        }
        "" => b.skip("system line without a subtype"),
        other => b.skip(format!("system line {other}")),
    }
}

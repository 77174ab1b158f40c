//! Codex rollouts (`~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl`) into the session model.
//!
//! Each line is `{timestamp, type, payload}` (Codex 0.171 adds an `ordinal`, and a
//! `metadata` beside an item's payload): `session_meta` (the session, and from 0.171 the
//! system prompt in `base_instructions`), `turn_context` (the model), `response_item` (an
//! item of the conversation, converted by `codex_items`; the item a compaction's summary
//! came back as is marked `compaction_output` and is no conversation message),
//! `event_msg` (`token_count` carries each call's usage and the context window;
//! `context_compacted`, or 0.171's `item_completed` of a `ContextCompaction`, marks a
//! compaction), `token_usage_record` (0.171: one per API call, read by `codex_usage`),
//! `world_state` (0.171: the harness's settings, what they inject is in the items) and
//! `compacted` (a compaction: the summary in `message`, the new history in
//! `replacement_history`, read by `codex_compaction`).
//! Rollouts from 2025 have no envelope: a first `{id, timestamp, instructions}` line, then
//! bare items and `{"record_type": "state"}` lines. Both are read here; anything unknown is
//! counted and skipped by name, a line that is not JSON is a warning.

use serde_json::{Map, Value};

use super::assemble::{Builder, Origin, str_field, u64_field};
use super::codex_compaction::{
    PromptIndex, ReadHistory, is_compaction_item, item_duration_ms, read_history, user_item_message,
};
use super::codex_counted::{COUNTED_KEY, Counted};
use super::codex_items::{Item, convert_item};
use super::codex_usage::{UsageLines, openai_usage};
use super::detail::Detail;
use super::detail::HistoryCounts;
use super::lines::ParsedLine;
use super::model::{
    Compaction, CompactionKind, MessageKind, RecordedCall, Replacement, Session, SessionFormat,
    Summary, Trigger, looks_like_time,
};
use crate::message::BlockKind;

pub(super) struct CodexReader {
    pub(super) b: Builder,
    /// Bumped whenever a model call is known to be over, so the next answer is a new call.
    request: usize,
    last_total: Option<Value>,
    model: Option<String>,
    /// The last compaction was opened by a `context_compacted` event and waits for its
    /// `compacted` line.
    pending_event: bool,
    usage: UsageLines,
    /// Typed user messages by their text, for what a compaction kept.
    prompts: PromptIndex,
    /// The text of the item the compaction's summary came back as, until its `compacted`
    /// line (which holds the summary as the model reads it).
    summary_item: Option<String>,
    /// How much of each compaction's new history is held (`detail`).
    detail: Detail,
    /// Steps taken: one per line, per item of a replacement history, per message indexed
    /// or looked up. The reader is linear when this grows with the file (a test checks).
    pub(super) work: u64,
}

/// Reads the parsed lines of a Codex rollout (either layout).
pub(crate) fn read_codex(
    lines: impl IntoIterator<Item = ParsedLine>,
    format: SessionFormat,
    detail: Detail,
) -> Session {
    read_codex_counting(lines, format, detail).0
}

/// `read_codex` with the steps it took (`CodexReader::work`).
pub(crate) fn read_codex_counting(
    lines: impl IntoIterator<Item = ParsedLine>,
    format: SessionFormat,
    detail: Detail,
) -> (Session, u64) {
    read_codex_hooked(lines, format, detail, None)
}

/// `read_codex_counting` with `hook` hearing each message as it is held
/// (`Builder::on_held`).
pub(crate) fn read_codex_hooked(
    lines: impl IntoIterator<Item = ParsedLine>,
    format: SessionFormat,
    detail: Detail,
    hook: Option<super::assemble::HeldHook>,
) -> (Session, u64) {
    let mut r = CodexReader::new(format, detail);
    // A whole-file numbers-only read holds each message's outline (a follower, which
    // shows each message once as it comes, slims them itself after showing them).
    r.b.slim = detail == Detail::Numbers;
    r.b.on_held = hook;
    for ParsedLine { number, value } in lines {
        r.b.session.lines += 1;
        match value {
            Ok(Value::Object(o)) => r.line(number, o),
            Ok(_) => r.b.warn(number, "line is JSON but not an object; skipped"),
            Err(e) => r.b.warn(number, format!("malformed line skipped: {e}")),
        }
    }
    (r.b.finish(), r.work)
}

fn cwd_from_environment(text: &str) -> Option<String> {
    let start = text.find("<cwd>")? + "<cwd>".len();
    let end = text[start..].find("</cwd>")? + start;
    Some(text[start..end].trim().to_string())
}

impl CodexReader {
    pub(crate) fn new(format: SessionFormat, detail: Detail) -> CodexReader {
        CodexReader {
            b: Builder::new(format),
            request: 0,
            last_total: None,
            model: None,
            pending_event: false,
            usage: UsageLines::default(),
            prompts: PromptIndex::default(),
            summary_item: None,
            detail,
            work: 0,
        }
    }

    pub(super) fn line(&mut self, number: usize, mut o: Map<String, Value>) {
        self.work += 1;
        // The 2025 layout's header line says when the session began (`session_meta`).
        let legacy_header = !o.contains_key("type") && !o.contains_key("payload");
        if let Some(ts) = str_field(&o, "timestamp")
            && !legacy_header
        {
            self.b.session.meta.saw_timestamp(ts);
        }
        let origin = Origin {
            line: number,
            timestamp: str_field(&o, "timestamp").map(str::to_string),
            uuid: None,
        };
        let kind = str_field(&o, "type").unwrap_or("").to_string();
        let payload = match o.remove("payload") {
            Some(Value::Object(p)) => Some(p),
            Some(_) => {
                self.b.warn(number, "payload is not an object; skipped");
                return;
            }
            None => None,
        };
        match (kind.as_str(), payload) {
            ("session_meta", Some(p)) => self.session_meta(&p),
            ("turn_context", Some(p)) => {
                if let Some(m) = str_field(&p, "model") {
                    self.model = Some(m.to_string());
                    self.b.session.meta.saw_model(m);
                }
                if self.b.session.meta.cwd.is_none() {
                    self.b.session.meta.cwd = str_field(&p, "cwd").map(str::to_string);
                }
            }
            ("response_item", Some(p)) if is_compaction_output(&o) => self.compaction_output(&p),
            ("response_item", Some(p)) => self.item(&p, origin),
            ("event_msg", Some(p)) => self.event(number, &p, origin),
            ("token_usage_record", Some(p)) => self.usage_record(number, &p, origin),
            ("world_state", Some(_)) => self.b.skip("world_state"),
            ("compacted", Some(p)) => self.compacted(number, &p, origin),
            (k, Some(_)) => self.b.skip(format!("unknown line type {k}")),
            // No envelope: the 2025 layout.
            (_, None) if o.contains_key("record_type") => self.b.skip("legacy state line"),
            ("", None) if o.contains_key("id") && self.b.session.meta.session_id.is_none() => {
                self.session_meta(&o);
                if o.get("instructions").is_some_and(|i| !i.is_null()) {
                    self.b.skip("legacy instructions");
                }
            }
            ("", None) => self.b.skip("line without a type"),
            (_, None) => self.item(&o, origin),
        }
    }

    fn session_meta(&mut self, p: &Map<String, Value>) {
        let meta = &mut self.b.session.meta;
        if meta.session_id.is_some() {
            // A forked rollout repeats its parent's meta line.
            self.b.skip("repeated session_meta");
            return;
        }
        meta.session_id = str_field(p, "id").map(str::to_string);
        meta.version = str_field(p, "cli_version").map(str::to_string);
        if let Some(cwd) = str_field(p, "cwd") {
            meta.cwd = Some(cwd.to_string());
        }
        // When the session began, not a line's time: the 2025 layout's items carry no
        // time of their own, so its end stays not recorded.
        if let Some(ts) = str_field(p, "timestamp").filter(|ts| looks_like_time(ts))
            && meta.started.is_none()
        {
            meta.started = Some(ts.to_string());
        }
        if let Some(Value::Object(git)) = p.get("git") {
            meta.git_branch = str_field(git, "branch").map(str::to_string);
        }
        // Codex 0.171: the system prompt, `{text, provenance}` (a plain string tolerated).
        let system = match p.get("base_instructions") {
            Some(Value::Object(b)) => str_field(b, "text"),
            Some(Value::String(s)) => Some(s.as_str()),
            _ => None,
        };
        meta.system_prompt = system.filter(|t| !t.is_empty()).map(str::to_string);
    }

    /// Whether a compaction's summary came back and its `compacted` line is still to come:
    /// a call recorded now is that compaction's own (0.171 writes its record in between).
    pub(crate) fn compaction_in_flight(&self) -> bool {
        self.summary_item.is_some()
    }

    /// Drops the first `n` recorded calls (a follower's, once reported and no longer needed
    /// for a compaction's token counts: `watch::live`).
    pub(crate) fn forget_calls(&mut self, n: usize) {
        let n = n.min(self.b.session.calls.len());
        self.b.session.calls.drain(..n);
        self.usage.forget_calls(n);
    }

    /// The item a compaction's summary came back as: not a message of the conversation.
    fn compaction_output(&mut self, p: &Map<String, Value>) {
        if let Item::Assistant(blocks) = convert_item(p) {
            let text: Vec<&str> = blocks
                .iter()
                .filter(|b| BlockKind::of(b) == BlockKind::Text)
                .filter_map(|b| b.get("text").and_then(Value::as_str))
                .collect();
            self.summary_item = Some(text.join("\n"));
        }
        self.b.skip("compaction summary item");
    }

    /// Codex 0.171's record of one API call.
    fn usage_record(&mut self, number: usize, p: &Map<String, Value>, origin: Origin) {
        let Some(Value::Object(u)) = p.get("usage") else {
            self.b.skip("token_usage_record without usage");
            return;
        };
        self.usage.records = true;
        self.b.record_call(RecordedCall {
            message: None,
            line: number,
            timestamp: origin.timestamp,
            model: self.model.clone(),
            usage: openai_usage(u),
            context_window: self.usage.window,
        });
        if let Some(id) = str_field(p, "response_id") {
            let index = self.b.session.calls.len() - 1;
            self.usage.remember(id, index);
        }
        self.request += 1;
    }

    fn item(&mut self, o: &Map<String, Value>, origin: Origin) {
        match convert_item(o) {
            Item::User {
                content,
                injected,
                role,
            } => {
                if injected
                    && self.b.session.meta.cwd.is_none()
                    && let Some(t) = content.as_str()
                {
                    self.b.session.meta.cwd = cwd_from_environment(t);
                }
                self.request += 1;
                let message = user_item_message(content, role);
                let kind = if injected {
                    MessageKind::Injected
                } else {
                    MessageKind::Conversation
                };
                self.b.push_between(message, origin, kind);
            }
            Item::Assistant(blocks) => {
                let key = self.request.to_string();
                self.b.assistant_between(&key, blocks, origin);
            }
            Item::ToolResult(block) => {
                // A later request already began (its blocks are held until this result is
                // in): the result does not start another one.
                let later_began = self.b.holds_assistant();
                self.b.results(vec![block], origin);
                if !later_began {
                    self.request += 1;
                }
            }
            Item::EncryptedSummary => {
                let len = self.b.len_with_open();
                let open = self
                    .b
                    .session
                    .compactions
                    .last_mut()
                    .filter(|c| c.at == len);
                match open {
                    Some(c) if c.summary == Summary::NotRecorded => {
                        c.summary = Summary::Encrypted;
                        c.kind = CompactionKind::Server;
                    }
                    Some(_) => {}
                    None => {
                        let mut c = Compaction::new(CompactionKind::Server, 0, origin.line);
                        c.timestamp = origin.timestamp;
                        c.summary = Summary::Encrypted;
                        self.b.compaction(c);
                    }
                }
            }
            Item::Skip(reason) => self.b.skip(reason),
        }
    }

    fn event(&mut self, number: usize, p: &Map<String, Value>, origin: Origin) {
        match str_field(p, "type").unwrap_or("") {
            "token_count" => {
                let Some(Value::Object(info)) = p.get("info") else {
                    self.b.skip("token_count without info");
                    return;
                };
                if let Some(w) = u64_field(info, "model_context_window") {
                    self.usage.saw_window(w, &mut self.b.session.calls);
                }
                if self.usage.records {
                    // Its call came as a token_usage_record just before it.
                    self.b.skip("token_count beside a token_usage_record");
                    return;
                }
                let total = info.get("total_token_usage").cloned();
                if total.is_some() && total == self.last_total {
                    self.b.skip("repeated token_count");
                    return;
                }
                self.last_total = total;
                let Some(Value::Object(last)) = info.get("last_token_usage") else {
                    self.b.skip("token_count without last_token_usage");
                    return;
                };
                self.b.record_call(RecordedCall {
                    message: None,
                    line: number,
                    timestamp: origin.timestamp,
                    model: self.model.clone(),
                    usage: openai_usage(last),
                    context_window: u64_field(info, "model_context_window"),
                });
                self.request += 1;
            }
            "context_compacted" => self.compaction_event(number, origin, None),
            "item_completed" if is_compaction_item(p) => {
                self.compaction_event(number, origin, item_duration_ms(p))
            }
            "" => self.b.skip("event without a type"),
            other => self.b.skip(format!("event {other}")),
        }
    }

    /// An event that marks a compaction: it opens one unless its `compacted` line came
    /// first (Codex 0.171 writes the line, then the `ContextCompaction` item with its
    /// duration).
    fn compaction_event(&mut self, number: usize, origin: Origin, duration_ms: Option<u64>) {
        let len = self.b.len_with_open();
        match self
            .b
            .session
            .compactions
            .last_mut()
            .filter(|c| c.at == len)
        {
            Some(c) => c.duration_ms = c.duration_ms.or(duration_ms),
            None => {
                let mut c = Compaction::new(CompactionKind::Full, 0, number);
                c.timestamp = origin.timestamp;
                c.duration_ms = duration_ms;
                self.b.compaction(c);
                self.pending_event = true;
            }
        }
        self.request += 1;
    }

    fn compacted(&mut self, number: usize, p: &Map<String, Value>, origin: Origin) {
        let len = self.b.len_with_open();
        let reuse = self.pending_event
            && self
                .b
                .session
                .compactions
                .last()
                .is_some_and(|c| c.at == len && c.kept_messages().is_none());
        self.pending_event = false;
        let k = if reuse {
            self.b.close_all();
            self.b.session.compactions.len() - 1
        } else {
            let mut c = Compaction::new(CompactionKind::Full, 0, number);
            c.timestamp = origin.timestamp.clone();
            self.b.compaction(c)
        };
        let hold = self.detail.holds_histories();
        if hold {
            // Only a held history names where its kept messages came from.
            self.work += self.prompts.catch_up(&self.b);
        }
        let message = str_field(p, "message").unwrap_or("");
        let counted = p.get(COUNTED_KEY).and_then(Counted::from_value);
        let history = match p.get("replacement_history") {
            _ if counted.is_some() => counted.map(|c| self.counted_history(number, c)),
            Some(Value::Array(items)) => {
                let metadata = match p.get("replacement_history_metadata") {
                    Some(Value::Array(m)) => Some(m.as_slice()),
                    _ => None,
                };
                self.work += items.len() as u64;
                Some(read_history(
                    &mut self.b,
                    &self.prompts,
                    number,
                    items,
                    metadata,
                    message,
                    hold,
                ))
            }
            _ => None,
        };
        let own_call = str_field(p, "compaction_response_id").and_then(|id| {
            self.usage
                .take(id, &mut self.b.session.calls)
                .or_else(|| latest_record_of(p, id))
        });
        let summary_item = self.summary_item.take().filter(|t| !t.is_empty());
        let encrypted = history.as_ref().is_some_and(|h| h.encrypted);
        let c = &mut self.b.session.compactions[k];
        c.line = number;
        if encrypted {
            // The summary is the server's own `compaction` item: it compacted the context.
            c.kind = CompactionKind::Server;
        }
        c.summary = if !message.is_empty() {
            Summary::Text(message.to_string())
        } else if encrypted {
            Summary::Encrypted
        } else if let Some(t) = summary_item {
            Summary::Text(t)
        } else {
            Summary::NotRecorded
        };
        match history {
            Some(h) if hold => {
                c.kept = Some(h.kept);
                c.replacement = Some(h.replacement);
            }
            Some(h) => c.counted = Some(h.counts),
            None => {}
        }
        c.own_call = own_call.or(c.own_call);
        c.trigger = str_field(p, "trigger").map(Trigger::parse);
        self.request += 1;
    }
}

impl CodexReader {
    /// A history the parser counted (`codex_counted`, a numbers-only read): what
    /// `read_history` would have noted of it, and its counts.
    fn counted_history(&mut self, number: usize, c: Counted) -> ReadHistory {
        self.work += c.items as u64;
        for _ in 0..c.not_objects {
            self.b
                .warn(number, "a replacement_history item is not an object");
        }
        for reason in c.skipped {
            self.b.skip(format!("replacement_history: {reason}"));
        }
        ReadHistory {
            counts: HistoryCounts {
                kept: c.kept,
                reinjected: c.reinjected,
            },
            replacement: Replacement {
                order: Vec::new(),
                anew: Vec::new(),
                reinjected: c.reinjected,
                summary: None,
            },
            kept: Vec::new(),
            encrypted: c.encrypted,
        }
    }
}

/// The usage of the compaction's own call as its `compacted` line repeats it
/// (`latest_token_usage_record`), when it is that call's.
fn latest_record_of(
    p: &Map<String, Value>,
    response_id: &str,
) -> Option<super::model::RecordedUsage> {
    let r = p.get("latest_token_usage_record")?.as_object()?;
    if str_field(r, "response_id") != Some(response_id) {
        return None;
    }
    Some(openai_usage(r.get("usage")?.as_object()?))
}

/// Whether a `response_item` line is the item a compaction's summary came back as
/// (Codex 0.171 marks it in the line's `metadata`).
fn is_compaction_output(o: &Map<String, Value>) -> bool {
    o.get("metadata")
        .and_then(|m| m.get("compaction_output"))
        .and_then(Value::as_bool)
        == Some(true)
}

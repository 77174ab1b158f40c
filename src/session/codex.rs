//! Codex rollouts (`~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl`) into the session model.
//!
//! Each line is `{timestamp, type, payload}`: `session_meta`, `turn_context` (the model),
//! `response_item` (an item of the conversation, converted by `codex_items`), `event_msg`
//! (`token_count` carries each call's usage and the context window; `context_compacted`
//! marks a compaction) and `compacted` (a compaction: the summary in `message`, or what the
//! model kept in `replacement_history`, where the summary may be an encrypted item).
//! Rollouts from 2025 have no envelope: a first `{id, timestamp, instructions}` line, then
//! bare items and `{"record_type": "state"}` lines. Both are read here; anything unknown is
//! counted and skipped, a line that is not JSON is a warning.

use serde_json::{Map, Value};

use super::assemble::{Builder, Origin, str_field, u64_field};
use super::codex_items::{Item, convert_item};
use super::lines::ParsedLine;
use super::model::{
    Compaction, CompactionKind, KeptMessage, MessageKind, RecordedCall, RecordedUsage, Session,
    SessionFormat, Summary, Trigger, looks_like_time,
};
use crate::message::Message;

pub(super) struct CodexReader {
    pub(super) b: Builder,
    /// Bumped whenever a model call is known to be over, so the next answer is a new call.
    request: usize,
    last_total: Option<Value>,
    model: Option<String>,
    /// The last compaction was opened by a `context_compacted` event and waits for its
    /// `compacted` line.
    pending_event: bool,
}

/// Reads the parsed lines of a Codex rollout (either layout).
pub(crate) fn read_codex(
    lines: impl IntoIterator<Item = ParsedLine>,
    format: SessionFormat,
) -> Session {
    let mut r = CodexReader::new(format);
    for ParsedLine { number, value } in lines {
        r.b.session.lines += 1;
        match value {
            Ok(Value::Object(o)) => r.line(number, o),
            Ok(_) => r.b.warn(number, "line is JSON but not an object; skipped"),
            Err(e) => r.b.warn(number, format!("malformed line skipped: {e}")),
        }
    }
    r.b.finish()
}

fn cwd_from_environment(text: &str) -> Option<String> {
    let start = text.find("<cwd>")? + "<cwd>".len();
    let end = text[start..].find("</cwd>")? + start;
    Some(text[start..end].trim().to_string())
}

impl CodexReader {
    pub(super) fn new(format: SessionFormat) -> CodexReader {
        CodexReader {
            b: Builder::new(format),
            request: 0,
            last_total: None,
            model: None,
            pending_event: false,
        }
    }

    pub(super) fn line(&mut self, number: usize, mut o: Map<String, Value>) {
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
            ("response_item", Some(p)) => self.item(&p, origin),
            ("event_msg", Some(p)) => self.event(number, &p, origin),
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
    }

    fn item(&mut self, o: &Map<String, Value>, origin: Origin) {
        match convert_item(o) {
            Item::User { content, injected } => {
                if injected
                    && self.b.session.meta.cwd.is_none()
                    && let Some(t) = content.as_str()
                {
                    self.b.session.meta.cwd = cwd_from_environment(t);
                }
                self.request += 1;
                let message = match content {
                    Value::Array(blocks) => Message::user_blocks(blocks),
                    Value::String(s) => Message::user_text(s),
                    other => Message::user_text(other.to_string()),
                };
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
                    Some(c) if c.summary == Summary::NotRecorded => c.summary = Summary::Encrypted,
                    Some(_) => {}
                    None => {
                        let mut c = Compaction::new(CompactionKind::Full, 0, origin.line);
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
                // OpenAI counts cached tokens inside input_tokens; the model keeps them apart.
                let input = u64_field(last, "input_tokens").unwrap_or(0);
                let cached = u64_field(last, "cached_input_tokens").unwrap_or(0);
                self.b.record_call(RecordedCall {
                    message: None,
                    line: number,
                    timestamp: origin.timestamp,
                    model: self.model.clone(),
                    usage: RecordedUsage {
                        input_tokens: input.saturating_sub(cached),
                        cache_read_tokens: cached.min(input),
                        cache_creation_tokens: 0,
                        output_tokens: u64_field(last, "output_tokens").unwrap_or(0),
                    },
                    context_window: u64_field(info, "model_context_window"),
                });
                self.request += 1;
            }
            "context_compacted" => {
                let len = self.b.len_with_open();
                let recorded = self
                    .b
                    .session
                    .compactions
                    .last()
                    .is_some_and(|c| c.at == len);
                if !recorded {
                    let mut c = Compaction::new(CompactionKind::Full, 0, number);
                    c.timestamp = origin.timestamp;
                    self.b.compaction(c);
                    self.pending_event = true;
                }
                self.request += 1;
            }
            "" => self.b.skip("event without a type"),
            other => self.b.skip(format!("event {other}")),
        }
    }

    fn compacted(&mut self, number: usize, p: &Map<String, Value>, origin: Origin) {
        let len = self.b.len_with_open();
        let reuse = self.pending_event
            && self
                .b
                .session
                .compactions
                .last()
                .is_some_and(|c| c.at == len && c.kept.is_none());
        self.pending_event = false;
        let k = if reuse {
            self.b.close_all();
            self.b.session.compactions.len() - 1
        } else {
            let mut c = Compaction::new(CompactionKind::Full, 0, number);
            c.timestamp = origin.timestamp.clone();
            self.b.compaction(c)
        };
        let mut encrypted = false;
        let kept = match p.get("replacement_history") {
            Some(Value::Array(items)) => {
                let mut kept = Vec::new();
                for item in items {
                    let Value::Object(o) = item else {
                        self.b
                            .warn(number, "a replacement_history item is not an object");
                        continue;
                    };
                    match convert_item(o) {
                        Item::User { content, .. } => {
                            let message = match content {
                                Value::Array(blocks) => Message::user_blocks(blocks),
                                Value::String(s) => Message::user_text(s),
                                other => Message::user_text(other.to_string()),
                            };
                            let from = self.b.session.messages.iter().rposition(|m| *m == message);
                            kept.push(KeptMessage { message, from });
                        }
                        Item::Assistant(blocks) => kept.push(KeptMessage {
                            message: Message::assistant_blocks(blocks),
                            from: None,
                        }),
                        Item::ToolResult(block) => kept.push(KeptMessage {
                            message: Message::user_blocks(vec![block]),
                            from: None,
                        }),
                        Item::EncryptedSummary => {
                            encrypted = true;
                            kept.push(KeptMessage {
                                message: Message::user_text(
                                    "[compaction summary: encrypted by the provider]",
                                ),
                                from: None,
                            });
                        }
                        Item::Skip(reason) => self.b.skip(format!("replacement_history: {reason}")),
                    }
                }
                Some(kept)
            }
            _ => None,
        };
        let message = str_field(p, "message").unwrap_or("");
        let c = &mut self.b.session.compactions[k];
        c.line = number;
        c.summary = if !message.is_empty() {
            Summary::Text(message.to_string())
        } else if encrypted {
            Summary::Encrypted
        } else {
            Summary::NotRecorded
        };
        c.kept = kept;
        c.trigger = str_field(p, "trigger").map(Trigger::parse);
        self.request += 1;
    }
}

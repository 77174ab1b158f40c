//! Claude Code's own record of what it sent (2.1.x files): the parts of each request that
//! are no transcript message. `api-request-shape` lines hold a request's system prompt and
//! tool schemas once per distinct `shapeHash`; an `api-request` line before each call
//! names the shape it used (and its betas, its `context_management` edits, the blobs of
//! its messages); `attachment` lines carry in `rendered` the reminder text Claude Code put
//! into the next user message (`renderedRole` says how it is framed). An
//! `api-request-blob` line is one user message exactly as sent: the transcript's text with
//! the rendered attachments in it, so it is counted through those two and never again
//! (docs/pipeline.md, "Where the context goes").
//!
//! This module keeps sizes' sources only (texts, line numbers, hashes); the breakdown
//! counts them. It never reads a file.

use std::collections::{BTreeMap, HashMap};

use serde_json::{Map, Value};

use crate::message::system_text;

/// One request shape: the system prompt and the tool schemas as the API got them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RequestShape {
    /// The system prompt's text, its blocks joined as a capture joins them.
    pub system: String,
    /// The tool schemas as JSON text, as a capture sizes them.
    pub tools: String,
}

/// An attachment's rendered text: context Claude Code sent inside the next user message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RenderedAttachment {
    /// 1-based line of the file.
    pub line: usize,
    pub text: String,
}

/// What a Claude Code file records of its requests beyond the transcript.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RequestRecord {
    /// Request shapes by `shapeHash`.
    pub shapes: BTreeMap<String, RequestShape>,
    /// The `shapeHash` of the request each call answered, by the line of each of the
    /// call's assistant lines (a call's usage line is one of them).
    pub shape_of_line: BTreeMap<usize, String>,
    /// Rendered attachments, in file order.
    pub attachments: Vec<RenderedAttachment>,
    /// `api-request` lines read, and how many were matched to a call.
    pub requests: usize,
    pub requests_matched: usize,
    /// `api-request-blob` lines: the user messages as sent (counted through the
    /// transcript and the attachments).
    pub blobs: usize,
    /// The `context_management` edits the requests asked the API for (server-side context
    /// editing, such as `clear_thinking_20251015`), by type: how many requests named each.
    pub context_edits: BTreeMap<String, usize>,
}

impl RequestRecord {
    pub fn is_empty(&self) -> bool {
        self.shapes.is_empty()
            && self.attachments.is_empty()
            && self.requests == 0
            && self.blobs == 0
    }

    /// The shape of the request a call answered, found by the call's usage line.
    pub fn shape_of_call(&self, line: usize) -> Option<&RequestShape> {
        self.shapes.get(self.shape_of_line.get(&line)?)
    }
}

/// An `api-request` line not yet matched to a call.
#[derive(Debug)]
struct Pending {
    id: Option<String>,
    shape: Option<String>,
    model: Option<String>,
}

/// Most unmatched `api-request` lines kept: side requests (a title, a summary) write one
/// and get no assistant line, so only the latest few can still be the next call's.
const PENDING_MAX: usize = 8;

/// Most distinct `context_management` edit types kept (they come from a file).
const EDIT_TYPES_MAX: usize = 16;

/// The record being read with one conversation.
#[derive(Debug, Default)]
pub(super) struct RecordReader {
    pub(super) record: RequestRecord,
    pending: Vec<Pending>,
    /// Each call's shape, by a keyed hash of its key (the message id its lines share) (one
    /// entry a call, no copy of the key; `uuid_index` says why a keyed hash).
    shape_of_key: HashMap<u64, Option<String>>,
    keys: std::hash::RandomState,
}

/// The line types that make the record; `read` takes them.
pub(super) const RECORD_TYPES: &[&str] = &["api-request-shape", "api-request", "api-request-blob"];

/// A line's text field (this module is a leaf beside `model`, so it has its own).
fn str_field<'a>(o: &'a Map<String, Value>, key: &str) -> Option<&'a str> {
    o.get(key).and_then(Value::as_str)
}

impl RecordReader {
    /// Reads a line of one of `RECORD_TYPES`; false when it is not usable (then it is
    /// counted as skipped by the caller).
    pub(super) fn read(&mut self, kind: &str, o: &Map<String, Value>) -> bool {
        match kind {
            "api-request-shape" => {
                let (Some(hash), Some(Value::Object(shape))) =
                    (str_field(o, "shapeHash"), o.get("shape"))
                else {
                    return false;
                };
                if !self.record.shapes.contains_key(hash) {
                    let tools = match shape.get("tools") {
                        Some(t @ Value::Array(_)) => serde_json::to_string(t).unwrap_or_default(),
                        _ => String::new(),
                    };
                    let shape = RequestShape {
                        system: system_text(shape.get("system")),
                        tools,
                    };
                    self.record.shapes.insert(hash.to_string(), shape);
                }
                true
            }
            "api-request" => {
                self.record.requests += 1;
                let params = o.get("params");
                let model = params
                    .and_then(|p| p.get("model"))
                    .and_then(Value::as_str)
                    .map(str::to_string);
                let edits = params
                    .and_then(|p| p.pointer("/context_management/edits"))
                    .and_then(Value::as_array);
                let mut named = std::collections::BTreeSet::new();
                for e in edits.into_iter().flatten() {
                    if let Some(t) = e.get("type").and_then(Value::as_str)
                        && named.len() < EDIT_TYPES_MAX
                    {
                        named.insert(t);
                    }
                }
                for t in named {
                    if self.record.context_edits.len() < EDIT_TYPES_MAX
                        || self.record.context_edits.contains_key(t)
                    {
                        *self.record.context_edits.entry(t.to_string()).or_default() += 1;
                    }
                }
                if self.pending.len() == PENDING_MAX {
                    self.pending.remove(0);
                }
                self.pending.push(Pending {
                    id: str_field(o, "id").map(str::to_string),
                    shape: str_field(o, "shapeHash").map(str::to_string),
                    model,
                });
                true
            }
            "api-request-blob" => {
                self.record.blobs += 1;
                true
            }
            _ => false,
        }
    }

    /// An attachment line: its rendered text, when it has one (false when not).
    pub(super) fn attachment(&mut self, line: usize, o: &Map<String, Value>) -> bool {
        let Some(Value::Array(items)) = o.get("rendered") else {
            return false;
        };
        let texts: Vec<String> = items
            .iter()
            .filter_map(|r| match r.get("content") {
                Some(Value::String(s)) => Some(s.clone()),
                Some(Value::Array(blocks)) => Some(
                    blocks
                        .iter()
                        .filter_map(|b| b.get("text").and_then(Value::as_str))
                        .collect::<Vec<_>>()
                        .join("\n"),
                ),
                _ => None,
            })
            .collect();
        if texts.is_empty() {
            return false;
        }
        self.record.attachments.push(RenderedAttachment {
            line,
            text: texts.join("\n"),
        });
        true
    }

    /// An assistant line of the call `key` (its model and its `requestRef` as the line
    /// names them): the call's first line takes the pending request its `requestRef` names
    /// (2.1.332 writes the `api-request` line's `id` there); without one, the latest pending
    /// request of that model (or naming none), since side requests (a title, a summary)
    /// write one too and get no assistant line. The older pending ones are dropped.
    /// Forgets which calls were matched to a request and the shape of each line: a
    /// follower never reads the record, only needs `pending` consumed as a whole-file read
    /// does (`watch::live`), so what it holds stays bounded.
    pub(super) fn forget_matched(&mut self) {
        self.shape_of_key.clear();
        self.record.shape_of_line.clear();
    }

    pub(super) fn assistant(
        &mut self,
        line: usize,
        key: &str,
        model: Option<&str>,
        request_ref: Option<&str>,
    ) {
        let key = std::hash::BuildHasher::hash_one(&self.keys, key);
        if !self.shape_of_key.contains_key(&key) {
            let by_ref = request_ref.and_then(|r| {
                self.pending
                    .iter()
                    .rposition(|p| p.id.as_deref() == Some(r))
            });
            let found = by_ref.or_else(|| {
                self.pending.iter().rposition(|p| {
                    p.model.is_none() || model.is_none() || p.model.as_deref() == model
                })
            });
            let shape = match found {
                Some(i) => {
                    self.record.requests_matched += 1;
                    let p = self.pending.remove(i);
                    self.pending.clear();
                    p.shape
                }
                None => None,
            };
            self.shape_of_key.insert(key, shape);
        }
        if let Some(Some(hash)) = self.shape_of_key.get(&key) {
            self.record.shape_of_line.insert(line, hash.clone());
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn obj(v: Value) -> Map<String, Value> {
        match v {
            Value::Object(o) => o,
            _ => unreachable!(),
        }
    }

    fn request(r: &mut RecordReader, id: &str, shape: &str, model: &str) {
        let line = json!({"type": "api-request", "id": id, "shapeHash": shape,
            "params": {"model": model, "context_management": {"edits": [
                {"type": "clear_thinking_20251015", "keep": "all"}]}}});
        assert!(r.read("api-request", &obj(line)));
    }

    #[test]
    fn a_call_takes_the_request_its_request_ref_names() {
        let mut r = RecordReader::default();
        request(&mut r, "main", "shape-main", "claude-sonnet-4-6");
        // A side request written after the main one, of the same model.
        request(&mut r, "side", "shape-side", "claude-sonnet-4-6");
        r.assistant(10, "msg_1", Some("claude-sonnet-4-6"), Some("main"));
        r.assistant(11, "msg_1", Some("claude-sonnet-4-6"), Some("main"));
        assert_eq!(r.record.shape_of_line.get(&10).unwrap(), "shape-main");
        assert_eq!(r.record.shape_of_line.get(&11).unwrap(), "shape-main");
        assert_eq!(r.record.requests_matched, 1);
        assert_eq!(r.record.context_edits["clear_thinking_20251015"], 2);
    }

    #[test]
    fn without_a_ref_a_call_takes_the_latest_request_of_its_model() {
        let mut r = RecordReader::default();
        request(&mut r, "a", "shape-main", "claude-sonnet-4-6");
        request(&mut r, "b", "shape-title", "claude-haiku-4-5");
        r.assistant(5, "msg_1", Some("claude-sonnet-4-6"), None);
        assert_eq!(r.record.shape_of_line.get(&5).unwrap(), "shape-main");
        // A call with no request pending has no shape.
        r.assistant(9, "msg_2", Some("claude-sonnet-4-6"), None);
        assert!(!r.record.shape_of_line.contains_key(&9));
    }

    #[test]
    fn attachments_keep_their_rendered_text_and_shapes_their_sizes() {
        let mut r = RecordReader::default();
        let with = json!({"type": "attachment", "rendered": [{"content": "<system-reminder>\nx\n</system-reminder>"}]});
        assert!(r.attachment(3, &obj(with)));
        let without = json!({"type": "attachment", "attachment": {"type": "session_context"}});
        assert!(!r.attachment(4, &obj(without)));
        assert_eq!(r.record.attachments.len(), 1);
        assert_eq!(r.record.attachments[0].line, 3);
        let shape = json!({"type": "api-request-shape", "shapeHash": "h",
            "shape": {"system": [{"type": "text", "text": "ab"}, {"type": "text", "text": "cd"}],
                "tools": [{"name": "Bash"}]}});
        assert!(r.read("api-request-shape", &obj(shape)));
        let s = &r.record.shapes["h"];
        assert_eq!(s.system, "ab\n\ncd");
        assert_eq!(s.tools, r#"[{"name":"Bash"}]"#);
        assert!(!r.read(
            "api-request-shape",
            &obj(json!({"type": "api-request-shape"}))
        ));
    }
}

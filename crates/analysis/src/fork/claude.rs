//! A fork in Claude Code's format. `prefix`: the original's lines before the compaction's
//! boundary, each line's `uuid` new (its `parentUuid` and every other whole-string
//! reference renamed with it) and the new `sessionId`; Claude Code follows the `parentUuid`
//! chain back from the last message, so it resumes exactly the history the agent had.
//! `with_messages`: what Claude Code itself writes where a summary stands in: a
//! `compact_boundary` system line (no parent), the summary as a user line marked
//! `isCompactSummary`, then the kept messages chained after it.

use std::collections::HashMap;

use serde_json::{Map, Value, json};

use super::ids::{iso_ms, uuid_v4};
use super::lines::{Line, rename, to_line};
use super::{ForkError, Written};
use crate::message::{Message, Role};

/// The words Claude Code opens its own summary message with.
pub const SUMMARY_OPENING: &str = "This session is being continued from a previous conversation that ran out of context. The summary below covers the earlier portion of the conversation.\n\n";

/// Fields every line of the session repeats, copied from the original's last message.
const COMMON: [&str; 5] = ["userType", "entrypoint", "cwd", "version", "gitBranch"];

/// The boundary line of the compaction at `cut_line`, or why not.
fn cut_index(lines: &[Line], cut_line: usize) -> Result<usize, ForkError> {
    lines
        .iter()
        .position(|l| {
            l.number == cut_line
                && l.str_field("type") == Some("system")
                && l.str_field("subtype")
                    .is_some_and(|s| s.ends_with("compact_boundary"))
        })
        .ok_or(ForkError::CutNotFound(cut_line))
}

fn old_session_id(lines: &[Line]) -> Option<String> {
    lines
        .iter()
        .find_map(|l| l.str_field("sessionId"))
        .map(str::to_string)
}

/// The original's lines before the boundary at `cut_line`, renamed.
pub fn prefix(lines: &[Line], cut_line: usize, new_id: &str) -> Result<Written, ForkError> {
    let cut = cut_index(lines, cut_line)?;
    let kept = &lines[..cut];
    let mut map: HashMap<String, String> = HashMap::new();
    if let Some(old) = old_session_id(kept) {
        map.insert(old, new_id.to_string());
    }
    for l in kept {
        if let Some(u) = l.str_field("uuid") {
            map.insert(u.to_string(), uuid_v4());
        }
    }
    let mut text = String::new();
    for l in kept {
        let mut v = Value::Object(l.value.clone());
        rename(&mut v, &map);
        if let Value::Object(m) = v {
            text.push_str(&to_line(&m)?);
        }
    }
    Ok(Written {
        text,
        holds: String::new(),
    })
}

/// A summary the user gave, opened as Claude Code opens its own.
pub fn summary_message(summary: &str) -> Message {
    Message::user_text(format!("{SUMMARY_OPENING}{}", summary.trim_end()))
}

/// The common fields of the original's last message line before `cut` (or the first
/// after it, when nothing comes before: a fork of a fork starts with its boundary).
fn common_fields(lines: &[Line], cut: usize) -> (Map<String, Value>, Option<String>) {
    let is_message = |l: &&Line| matches!(l.str_field("type"), Some("user" | "assistant"));
    let last = lines[..cut]
        .iter()
        .rev()
        .find(is_message)
        .or_else(|| lines[cut..].iter().find(is_message));
    let mut out = Map::new();
    let mut model = None;
    if let Some(l) = last {
        for k in COMMON {
            if let Some(v) = l.value.get(k) {
                out.insert(k.to_string(), v.clone());
            }
        }
    }
    for l in lines[..cut].iter().rev().chain(&lines[cut..]) {
        if let Some(m) = l
            .value
            .get("message")
            .and_then(|m| m.get("model"))
            .and_then(Value::as_str)
            .filter(|m| !m.is_empty())
        {
            model = Some(m.to_string());
            break;
        }
    }
    (out, model)
}

/// What every new line repeats.
struct Chain<'a> {
    common: &'a Map<String, Value>,
    session_id: &'a str,
    model: Option<&'a str>,
}

/// One message as a line chained after `parent`; `index` names an assistant message.
fn message_line(
    c: &Chain<'_>,
    m: &Message,
    parent: &str,
    uuid: &str,
    at_ms: u64,
    index: usize,
) -> Map<String, Value> {
    let (common, session_id, model) = (c.common, c.session_id, c.model);
    let mut line = Map::new();
    line.insert("parentUuid".into(), json!(parent));
    line.insert("isSidechain".into(), json!(false));
    let role = if m.role_kind() == Role::Assistant {
        "assistant"
    } else {
        "user"
    };
    let message = if role == "assistant" {
        let content = match m.text() {
            Some(t) => json!([{"type": "text", "text": t}]),
            None => Value::Array(m.blocks().to_vec()),
        };
        json!({
            "id": format!("msg_fork_{index}"),
            "type": "message",
            "role": "assistant",
            "model": model.unwrap_or(""),
            "content": content,
            "stop_reason": null,
            "stop_sequence": null,
        })
    } else {
        json!({"role": "user", "content": m.as_map().get("content").cloned().unwrap_or(json!(""))})
    };
    line.insert("type".into(), json!(role));
    line.insert("message".into(), message);
    line.insert("uuid".into(), json!(uuid));
    line.insert("timestamp".into(), json!(iso_ms(at_ms)));
    for (k, v) in common {
        line.insert(k.clone(), v.clone());
    }
    line.insert("sessionId".into(), json!(session_id));
    line
}

/// A session of a boundary, `summary` marked as the compact summary, and `tail` after it.
pub fn with_messages(
    lines: &[Line],
    cut_line: usize,
    summary: &Message,
    tail: &[Message],
    new_id: &str,
    now_ms: u64,
    pre_tokens: Option<u64>,
) -> Result<Written, ForkError> {
    let cut = cut_index(lines, cut_line)?;
    let (common, model) = common_fields(lines, cut);
    let boundary = uuid_v4();
    let mut b = Map::new();
    b.insert("parentUuid".into(), Value::Null);
    b.insert("logicalParentUuid".into(), Value::Null);
    b.insert("isSidechain".into(), json!(false));
    b.insert("type".into(), json!("system"));
    b.insert("subtype".into(), json!("compact_boundary"));
    b.insert("content".into(), json!("Conversation compacted"));
    b.insert("isMeta".into(), json!(false));
    b.insert("timestamp".into(), json!(iso_ms(now_ms)));
    b.insert("uuid".into(), json!(boundary));
    b.insert("level".into(), json!("info"));
    let mut meta = Map::new();
    meta.insert("trigger".into(), json!("manual"));
    if let Some(t) = pre_tokens {
        meta.insert("preTokens".into(), json!(t));
    }
    b.insert("compactMetadata".into(), Value::Object(meta));
    for (k, v) in &common {
        b.insert(k.clone(), v.clone());
    }
    b.insert("sessionId".into(), json!(new_id));
    let mut text = to_line(&b)?;
    let summary_uuid = uuid_v4();
    let chain = Chain {
        common: &common,
        session_id: new_id,
        model: model.as_deref(),
    };
    let mut s = message_line(&chain, summary, &boundary, &summary_uuid, now_ms, 0);
    // Claude Code's own summary line: a user message shown only in the transcript view.
    s.insert("type".into(), json!("user"));
    s.insert(
        "message".into(),
        json!({"role": "user", "content": summary.as_map().get("content").cloned().unwrap_or(json!(""))}),
    );
    s.insert("isVisibleInTranscriptOnly".into(), json!(true));
    s.insert("isCompactSummary".into(), json!(true));
    text.push_str(&to_line(&s)?);
    let mut parent = summary_uuid;
    for (i, m) in tail.iter().enumerate() {
        let uuid = uuid_v4();
        let line = message_line(&chain, m, &parent, &uuid, now_ms + 1 + i as u64, i + 1);
        text.push_str(&to_line(&line)?);
        parent = uuid;
    }
    Ok(Written {
        text,
        holds: String::new(),
    })
}

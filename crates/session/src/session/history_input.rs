//! `ctxlab pipeline`'s input: `{"messages": [...], "active_request": "..."}` or a bare list
//! of messages. Also the shape `ctxlab replay` accepts for a JSON session. Only parses: the
//! error names the position, the caller adds the file name.

use serde_json::Value;

use crate::compact::request::latest_request;
use crate::message::{Message, MessageError, json_kind};

/// Why an input file cannot be used. The text names the position; the caller adds the file.
#[derive(Debug, thiserror::Error)]
pub enum InputError {
    #[error("not valid JSON: {0}")]
    Json(#[from] serde_json::Error),
    #[error(
        "expected {{\"messages\": [...], \"active_request\": \"...\"}} or a list of messages, found {0}"
    )]
    Shape(&'static str),
    #[error("\"active_request\" must be a string, found {0}")]
    ActiveRequest(&'static str),
    #[error("messages[{index}]: {source}")]
    Message { index: usize, source: MessageError },
}

/// A history and the request it works on.
#[derive(Debug, Clone)]
pub struct HistoryInput {
    pub messages: Vec<Message>,
    pub active_request: String,
}

/// Parses `{"messages": [...], "active_request": "..."}` or a bare list of messages.
pub fn parse_history_input(text: &str) -> Result<HistoryInput, InputError> {
    history_input_from_value(serde_json::from_str(text)?)
}

/// `parse_history_input` for a value already parsed.
pub fn history_input_from_value(value: Value) -> Result<HistoryInput, InputError> {
    let (list, active) = match value {
        Value::Array(items) => (items, None),
        Value::Object(mut map) => {
            let list = match map.remove("messages") {
                Some(Value::Array(items)) => items,
                Some(other) => return Err(InputError::Shape(json_kind(&other))),
                None => return Err(InputError::Shape("an object without \"messages\"")),
            };
            let active = match map.remove("active_request") {
                None | Some(Value::Null) => None,
                Some(Value::String(s)) => Some(s),
                Some(other) => return Err(InputError::ActiveRequest(json_kind(&other))),
            };
            (list, active)
        }
        other => return Err(InputError::Shape(json_kind(&other))),
    };
    let messages = list
        .into_iter()
        .enumerate()
        .map(|(index, v)| {
            Message::from_value(v).map_err(|source| InputError::Message { index, source })
        })
        .collect::<Result<Vec<_>, _>>()?;
    let active_request = active
        .or_else(|| latest_request(&messages))
        .unwrap_or_default();
    Ok(HistoryInput {
        messages,
        active_request,
    })
}

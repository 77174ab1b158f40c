//! What a request on a Responses WebSocket sent the model: Codex sends the whole context in
//! a connection's first `response.create`, then only the items after the response it names
//! in `previous_response_id` (the server keeps the rest). The capture is to hold the request
//! the model saw, so the proxy carries the named response's context (its input as expanded
//! here, then its output) before the message's own input (docs/capture.md, "WebSocket").
//! Only the connection's last completed response is kept: Codex names that one. Pure data,
//! no I/O.

use serde_json::Value;

/// The last completed response of one connection: its id, and the items the model had
/// after it (its whole input, then its output).
#[derive(Debug, Default)]
pub struct Chain {
    last: Option<(String, Vec<Value>)>,
}

/// A `response.create` message read for the capture.
#[derive(Debug)]
pub struct Expanded {
    /// The message with its `input` preceded by the carried items (the message as sent
    /// when it names no response, or one this connection did not complete).
    pub body: Value,
    pub previous_response_id: Option<String>,
    /// Items carried before its own input, when it named a response this chain holds.
    pub items_carried: Option<u64>,
}

impl Chain {
    /// The message (already known to be a `response.create` object) with its context.
    pub fn expand(&self, mut message: Value) -> Expanded {
        let previous = message
            .get("previous_response_id")
            .and_then(Value::as_str)
            .map(str::to_string);
        let carried = match (&previous, &self.last) {
            (Some(id), Some((last_id, items))) if id == last_id => Some(items),
            _ => None,
        };
        let items_carried = carried.map(|items| items.len() as u64);
        if let (Some(items), Some(obj)) = (carried, message.as_object_mut()) {
            let own = match obj.remove("input") {
                Some(Value::Array(own)) => own,
                // A string input is one user message.
                Some(Value::String(text)) => vec![serde_json::json!({
                    "type": "message", "role": "user",
                    "content": [{"type": "input_text", "text": text}]
                })],
                _ => Vec::new(),
            };
            let mut input = items.clone();
            input.extend(own);
            obj.insert("input".to_string(), Value::Array(input));
        }
        Expanded {
            body: message,
            previous_response_id: previous,
            items_carried,
        }
    }

    /// A response completed: `request` (as `expand` gave it) and the response object of its
    /// final event become the context a next message may name by the response's id.
    pub fn completed(&mut self, request: &Value, response: &Value) {
        let Some(id) = response.get("id").and_then(Value::as_str) else {
            return;
        };
        let mut items: Vec<Value> = request
            .get("input")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        items.extend(
            response
                .get("output")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .cloned(),
        );
        self.last = Some((id.to_string(), items));
    }
}

/// Whether a client's text message is a request: a JSON object of `type`
/// `response.create`. Parsed only when it holds that word (a message that cannot be one
/// costs no parse).
pub fn as_request(text: &str) -> Option<Value> {
    if !text.contains("response.create") {
        return None;
    }
    let v: Value = serde_json::from_str(text).ok()?;
    (v.get("type").and_then(Value::as_str) == Some("response.create")).then_some(v)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn msg(id: &str, text: &str) -> Value {
        json!({"type": "message", "id": id, "role": "user",
               "content": [{"type": "input_text", "text": text}]})
    }

    #[test]
    fn a_message_naming_the_last_response_gets_its_input_and_output_first() {
        let mut chain = Chain::default();
        let first = chain.expand(json!({"type": "response.create", "input": [msg("a", "hi")]}));
        assert_eq!(first.items_carried, None);
        let call =
            json!({"type": "function_call", "call_id": "c1", "name": "sh", "arguments": "{}"});
        chain.completed(&first.body, &json!({"id": "resp_1", "output": [call]}));
        let out = json!({"type": "function_call_output", "call_id": "c1", "output": "ok"});
        let second = chain.expand(json!({"type": "response.create",
            "previous_response_id": "resp_1", "input": [out]}));
        assert_eq!(second.items_carried, Some(2));
        assert_eq!(second.previous_response_id.as_deref(), Some("resp_1"));
        let input = second.body["input"].as_array().unwrap();
        assert_eq!(input.len(), 3);
        assert_eq!(input[0]["id"], "a");
        assert_eq!(input[1]["call_id"], "c1");
        assert_eq!(input[2]["type"], "function_call_output");
        // The chain goes on: a third message carries all three and the second's output.
        chain.completed(
            &second.body,
            &json!({"id": "resp_2", "output": [msg("b", "done")]}),
        );
        let third = chain.expand(json!({"type": "response.create",
            "previous_response_id": "resp_2", "input": "next"}));
        assert_eq!(third.items_carried, Some(4));
        assert_eq!(third.body["input"][4]["content"][0]["text"], "next");
    }

    #[test]
    fn a_response_this_connection_did_not_complete_is_not_invented() {
        let mut chain = Chain::default();
        chain.completed(
            &json!({"input": [msg("a", "x")]}),
            &json!({"id": "resp_1", "output": []}),
        );
        let sent = json!({"type": "response.create", "previous_response_id": "resp_other",
            "input": [msg("b", "y")]});
        let e = chain.expand(sent.clone());
        assert_eq!(e.items_carried, None);
        assert_eq!(e.body, sent);
    }

    #[test]
    fn only_response_create_objects_are_requests() {
        assert!(as_request(r#"{"type":"response.create","input":[]}"#).is_some());
        assert!(as_request(r#"{"type":"response.cancel"}"#).is_none());
        assert!(as_request(r#"{"note":"response.create"}"#).is_none());
        assert!(as_request("response.create, not JSON").is_none());
    }
}

//! A hand-written Anthropic Messages stub on 127.0.0.1 for tests of the real binary: every
//! request gets the SSE answer a closure picks from the request body. Plain threads and
//! blocking sockets, so sync tests and pty tests can use it without a runtime.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};

/// What the stub answers to one request body.
pub type Script = dyn Fn(&Value) -> String + Send + Sync;

pub struct Stub {
    pub url: String,
    /// Every request body received, in order.
    pub requests: Arc<Mutex<Vec<Value>>>,
}

fn sse(events: &[Value]) -> String {
    events
        .iter()
        .map(|e| format!("event: {}\ndata: {e}\n\n", e["type"].as_str().unwrap()))
        .collect()
}

fn start_event() -> Value {
    json!({"type": "message_start", "message": {"id": "msg_stub", "type": "message",
        "role": "assistant", "content": [], "model": "stub", "stop_reason": null,
        "stop_sequence": null, "usage": {"input_tokens": 10, "output_tokens": 1}}})
}

fn end_events(stop: &str) -> [Value; 2] {
    [
        json!({"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": null},
            "usage": {"output_tokens": 5}}),
        json!({"type": "message_stop"}),
    ]
}

/// An answer that is one text block.
pub fn text_answer(text: &str) -> String {
    let mut ev = vec![
        start_event(),
        json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
        json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": text}}),
        json!({"type": "content_block_stop", "index": 0}),
    ];
    ev.extend(end_events("end_turn"));
    sse(&ev)
}

/// An answer that is one text block stopped at its output limit (`max_tokens`).
pub fn cut_answer(text: &str) -> String {
    let mut ev = vec![
        start_event(),
        json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
        json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": text}}),
        json!({"type": "content_block_stop", "index": 0}),
    ];
    ev.extend(end_events("max_tokens"));
    sse(&ev)
}

/// An answer that calls `bash` with `command`.
pub fn bash_answer(id: &str, command: &str) -> String {
    let input = json!({ "command": command }).to_string();
    let mut ev = vec![
        start_event(),
        json!({"type": "content_block_start", "index": 0, "content_block": {"type": "tool_use", "id": id, "name": "bash", "input": {}}}),
        json!({"type": "content_block_delta", "index": 0, "delta": {"type": "input_json_delta", "partial_json": input}}),
        json!({"type": "content_block_stop", "index": 0}),
    ];
    ev.extend(end_events("tool_use"));
    sse(&ev)
}

/// Whether the request's last message carries tool results (the tools ran).
pub fn after_tools(body: &Value) -> bool {
    body["messages"]
        .as_array()
        .and_then(|m| m.last())
        .and_then(|m| m["content"].as_array())
        .is_some_and(|blocks| blocks.iter().any(|b| b["type"] == "tool_result"))
}

/// The script most tests want: run `command` with bash once, then answer `done`.
pub fn bash_then_done(command: &str) -> Arc<Script> {
    let command = command.to_string();
    Arc::new(move |body: &Value| {
        if after_tools(body) {
            text_answer("done")
        } else {
            bash_answer("toolu_stub_1", &command)
        }
    })
}

/// Whether a request is the summarizer's (compact_history, reactive_compact).
pub fn is_summary_request(body: &Value) -> bool {
    let system = match &body["system"] {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    system.contains("Create a compact factual state summary")
}

/// Runs `command` with bash on the first call only; summaries get a fixed text and every
/// other call `done`, so a compaction in between cannot loop.
pub fn bash_once(command: &str) -> Arc<Script> {
    let command = command.to_string();
    let asked = std::sync::atomic::AtomicBool::new(false);
    Arc::new(move |body: &Value| {
        if is_summary_request(body) {
            text_answer("facts: the user asked for the environment")
        } else if !asked.swap(true, std::sync::atomic::Ordering::SeqCst) {
            bash_answer("toolu_stub_1", &command)
        } else {
            text_answer("done")
        }
    })
}

fn read_request(stream: &mut impl Read) -> Option<Value> {
    let mut reader = BufReader::new(stream);
    let mut length = 0usize;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).ok()? == 0 {
            return None;
        }
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        if let Some((k, v)) = line.split_once(':')
            && k.eq_ignore_ascii_case("content-length")
        {
            length = v.trim().parse().ok()?;
        }
    }
    let mut body = vec![0u8; length];
    reader.read_exact(&mut body).ok()?;
    serde_json::from_slice(&body).ok()
}

/// Starts the stub; it serves until the test process ends.
pub fn start(script: Arc<Script>) -> Stub {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let requests = Arc::new(Mutex::new(Vec::new()));
    let seen = requests.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let script = script.clone();
            let seen = seen.clone();
            std::thread::spawn(move || {
                let Some(body) = read_request(&mut stream) else {
                    return;
                };
                let answer = script(&body);
                seen.lock().unwrap().push(body);
                let head = format!(
                    "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncontent-length: {}\r\nconnection: close\r\n\r\n",
                    answer.len()
                );
                let _ = stream.write_all(head.as_bytes());
                let _ = stream.write_all(answer.as_bytes());
                let _ = stream.flush();
            });
        }
    });
    Stub { url, requests }
}

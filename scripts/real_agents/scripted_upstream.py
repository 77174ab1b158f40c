#!/usr/bin/env python3
"""A scripted model server on 127.0.0.1 for the real Claude Code and Codex CLIs.

It speaks the two wire formats the agents use, both streamed as server-sent events:
Anthropic Messages (`POST /v1/messages`, and `count_tokens`) and OpenAI Responses
(`POST /v1/responses`). Its answers are a script, not a model: each turn asks for a few
shell commands (one of them with an output large enough for the agent to persist it),
then answers with text; a summary request gets a fixed, factual summary. The usage it
reports grows with the request (a quarter of the body's bytes, plus `--usage-bonus` per
tool result), so Codex crosses its `model_auto_compact_token_limit` and compacts by
itself.

Every request it answered is appended to `--log` (one JSON line: path, the headers that
say what a request is, the body as JSON, the usage it reported, the kind it took it for):
the record the harness checks ctxlab's figures against, never ctxlab's own.

Standard library only, so the harness needs nothing installed but the agents.
"""

import argparse
import json
import sys
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import planted_script
import subagent_script
import ws_frames

# How many shell calls one user turn gets before the scripted model answers with text.
CALLS_PER_TURN = 3
# The command whose output the agent should persist (about 98,000 characters: over Claude
# Code's 30,000-character inline limit for Bash and over Codex's truncation).
BIG_COMMAND = "seq 100000 116000"
SMALL_COMMANDS = ["echo scripted-step-{n}", "ls -1 | head -n 5"]

SUMMARY_TEXT = (
    "Summary of the session so far. The user asked for scripted steps in this folder. "
    "The assistant ran `seq 100000 116000` (a long listing) and `echo scripted-step` "
    "commands; all succeeded. Constraint from the user: keep the file notes.txt unchanged. "
    "Pending: nothing."
)

LOG_LOCK = threading.Lock()


def estimate_tokens(raw: bytes) -> int:
    return max(1, len(raw) // 4)


def claude_is_summary_request(body: dict) -> bool:
    """Claude Code's compaction asks for a summary in a text block of its last user message
    (it keeps its tools in that request, so the tools do not tell)."""
    messages = body.get("messages") or []
    if not messages:
        return False
    content = messages[-1].get("content")
    texts = [content] if isinstance(content, str) else [
        b.get("text", "") for b in content or [] if isinstance(b, dict) and b.get("type") == "text"
    ]
    return any("summary of the conversation so far" in t for t in texts)


def count_tool_results_since_prompt(messages) -> int:
    """Tool results after the last user message that carries typed text (the turn's prompt)."""
    n = 0
    for message in reversed(messages):
        content = message.get("content")
        if message.get("role") == "user":
            if isinstance(content, str):
                return n
            blocks = content or []
            results = [b for b in blocks if isinstance(b, dict) and b.get("type") == "tool_result"]
            texts = [
                b
                for b in blocks
                if isinstance(b, dict)
                and b.get("type") == "text"
                and not b.get("text", "").startswith("<system-reminder>")
            ]
            if results:
                n += len(results)
                continue
            if texts:
                return n
    return n


def command_for_step(step: int) -> str:
    if step == 0:
        return BIG_COMMAND
    return SMALL_COMMANDS[(step - 1) % len(SMALL_COMMANDS)].format(n=step)


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "scripted-upstream/1"

    def log_message(self, fmt, *args):  # noqa: N802 - quiet: the JSON log says what happened
        pass

    # -- plumbing ---------------------------------------------------------------------
    def read_body(self) -> bytes:
        if "chunked" in (self.headers.get("transfer-encoding") or "").lower():
            parts = []
            while True:
                size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    self.rfile.readline()
                    return b"".join(parts)
                parts.append(self.rfile.read(size))
                self.rfile.readline()
        length = int(self.headers.get("content-length") or 0)
        return self.rfile.read(length) if length else b""

    def record(self, kind: str, raw: bytes, usage=None, extra=None):
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = None
        line = {
            "n": self.server.next_n(),
            "time": time.time(),
            "method": self.command,
            "path": self.path,
            "kind": kind,
            "headers": {
                k.lower(): v
                for k, v in self.headers.items()
                if k.lower().startswith(("x-codex", "anthropic-", "openai-", "x-app", "user-agent"))
            },
            "body": body,
            "usage": usage,
        }
        if extra:
            line.update(extra)
        with LOG_LOCK:
            with open(self.server.log_path, "a", encoding="utf-8") as f:
                f.write(json.dumps(line) + "\n")

    def start_sse(self):
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("cache-control", "no-cache")
        self.send_header("transfer-encoding", "chunked")
        self.end_headers()

    def sse(self, event: str, data: dict):
        chunk = f"event: {event}\ndata: {json.dumps(data)}\n\n".encode()
        self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
        self.wfile.flush()

    def end_sse(self):
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()

    def send_json(self, status: int, data: dict):
        raw = json.dumps(data).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(raw)))
        self.end_headers()
        self.wfile.write(raw)

    # -- routes -----------------------------------------------------------------------
    def do_HEAD(self):  # noqa: N802
        self.send_response(200)
        self.send_header("content-length", "0")
        self.end_headers()

    def do_GET(self):  # noqa: N802
        if self.path.split("?")[0].endswith("/responses") and "websocket" in (self.headers.get("upgrade") or "").lower():
            self.responses_websocket()
            return
        # Codex asks for its model list; an empty list makes it use the configured model.
        raw = b""
        self.record("get", raw)
        if self.path.split("?")[0].endswith("/models"):
            self.send_json(200, {"object": "list", "data": [], "models": []})
        else:
            self.send_json(404, {"error": {"message": "not scripted", "type": "not_found"}})

    def do_POST(self):  # noqa: N802
        raw = self.read_body()
        path = self.path.split("?")[0]
        try:
            body = json.loads(raw) if raw else {}
        except ValueError:
            body = {}
        if path.endswith("/v1/messages/count_tokens"):
            tokens = estimate_tokens(raw)
            self.record("count_tokens", raw, usage={"input_tokens": tokens})
            self.send_json(200, {"input_tokens": tokens})
        elif path.endswith("/v1/messages"):
            self.anthropic(raw, body)
        elif path.endswith("/responses"):
            self.openai_responses(raw, body)
        else:
            self.record("unknown", raw)
            self.send_json(404, {"error": {"message": "not scripted", "type": "not_found"}})

    # -- Anthropic Messages -----------------------------------------------------------
    def anthropic(self, raw: bytes, body: dict):
        messages = body.get("messages") or []
        usage_in = estimate_tokens(raw) + self.server.usage_bonus * sum(
            1
            for m in messages
            for b in (m.get("content") if isinstance(m.get("content"), list) else [])
            if isinstance(b, dict) and b.get("type") == "tool_result"
        )
        planted = self.server.script == "planted"
        if claude_is_summary_request(body):
            kind = "summary"
            text = planted_script.SUMMARY_TEXT if planted else SUMMARY_TEXT
            blocks = [{"type": "text", "text": f"<analysis>Scripted.</analysis>\n<summary>{text}</summary>"}]
            stop = "end_turn"
        elif not body.get("tools"):
            kind = "side"
            blocks = [{"type": "text", "text": "Scripted session"}]
            stop = "end_turn"
        else:
            step = count_tool_results_since_prompt(messages)
            has_bash = any(t.get("name") == "Bash" for t in body.get("tools") or [])
            call = planted_script.next_call(body, step) if planted else None
            if self.server.script == "subagent":
                kind, narration, name, tool_input = subagent_script.answer(body, step)
                blocks = [{"type": "text", "text": narration}]
                stop = "end_turn"
                if name:
                    blocks.append({"type": "tool_use", "id": "toolu_" + uuid.uuid4().hex[:24], "name": name, "input": tool_input})
                    stop = "tool_use"
            elif planted and call:
                kind = "tool_call"
                narration, name, tool_input = call
                blocks = [
                    {"type": "text", "text": narration},
                    {"type": "tool_use", "id": "toolu_" + uuid.uuid4().hex[:24], "name": name, "input": tool_input},
                ]
                stop = "tool_use"
            elif planted:
                kind = "answer"
                blocks = [{"type": "text", "text": planted_script.final_text(body)}]
                stop = "end_turn"
            elif step < CALLS_PER_TURN and has_bash:
                kind = "tool_call"
                blocks = [
                    {"type": "text", "text": f"Running step {step + 1}."},
                    {
                        "type": "tool_use",
                        "id": "toolu_" + uuid.uuid4().hex[:24],
                        "name": "Bash",
                        "input": {"command": command_for_step(step), "description": f"scripted step {step + 1}"},
                    },
                ]
                stop = "tool_use"
            else:
                kind = "answer"
                blocks = [{"type": "text", "text": f"Done: {step} scripted steps ran."}]
                stop = "end_turn"
        usage = {
            "input_tokens": usage_in,
            "cache_creation_input_tokens": 0,
            "cache_read_input_tokens": 0,
            "output_tokens": 20 + 10 * len(blocks),
        }
        self.record(kind, raw, usage=usage)
        message_id = "msg_" + uuid.uuid4().hex[:24]
        model = body.get("model") or "claude-sonnet-4-5"
        if not body.get("stream"):
            self.send_json(
                200,
                {
                    "id": message_id,
                    "type": "message",
                    "role": "assistant",
                    "model": model,
                    "content": blocks,
                    "stop_reason": stop,
                    "stop_sequence": None,
                    "usage": usage,
                },
            )
            return
        self.start_sse()
        start_usage = dict(usage, output_tokens=1)
        self.sse(
            "message_start",
            {
                "type": "message_start",
                "message": {
                    "id": message_id,
                    "type": "message",
                    "role": "assistant",
                    "model": model,
                    "content": [],
                    "stop_reason": None,
                    "stop_sequence": None,
                    "usage": start_usage,
                },
            },
        )
        for i, block in enumerate(blocks):
            if block["type"] == "text":
                self.sse("content_block_start", {"type": "content_block_start", "index": i, "content_block": {"type": "text", "text": ""}})
                self.sse("content_block_delta", {"type": "content_block_delta", "index": i, "delta": {"type": "text_delta", "text": block["text"]}})
            else:
                start = dict(block, input={})
                self.sse("content_block_start", {"type": "content_block_start", "index": i, "content_block": start})
                self.sse(
                    "content_block_delta",
                    {"type": "content_block_delta", "index": i, "delta": {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}},
                )
            self.sse("content_block_stop", {"type": "content_block_stop", "index": i})
        self.sse(
            "message_delta",
            {"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": None}, "usage": {"output_tokens": usage["output_tokens"]}},
        )
        self.sse("message_stop", {"type": "message_stop"})
        self.end_sse()

    # -- OpenAI Responses -------------------------------------------------------------
    def openai_responses(self, raw: bytes, body: dict):
        self.start_sse()
        for event in self.responses_events(raw, body):
            self.sse(event["type"], event)
        self.end_sse()

    def responses_websocket(self):
        """Codex's Responses WebSocket transport: each `response.create` message is answered
        with the same events as the SSE route, one text message each. The handshake's headers
        are logged (`kind: websocket`), and each request as the SSE route logs it."""
        self.record("websocket", b"", extra={"all_headers": {k.lower(): v for k, v in self.headers.items() if "auth" not in k.lower() and "key" not in k.lower()}})
        if not ws_frames.handshake(self):
            return
        # The connection's responses by id (their whole input and output): a request naming a
        # `previous_response_id` sends only the items after that response, as the real API
        # allows, so the context is that response's input and output, then these.
        history = {}
        for opcode, payload in ws_frames.messages(self):
            try:
                message = json.loads(payload)
            except ValueError:
                continue
            if not isinstance(message, dict) or message.get("type") != "response.create":
                self.record("websocket_other", payload, extra={"transport": "websocket"})
                continue
            body = {k: v for k, v in message.items() if k != "type"}
            previous = history.get(body.get("previous_response_id"))
            if previous is not None:
                body["input"] = previous + list(body.get("input") or [])
            if body.get("generate") is False:
                # Codex's prewarm: the request's prefix is cached, nothing is generated.
                self.record("prewarm", json.dumps(body).encode(), extra={"transport": "websocket"})
                events = self.completed_events(body, [], {"input_tokens": 0, "input_tokens_details": {"cached_tokens": 0}, "output_tokens": 0, "output_tokens_details": {"reasoning_tokens": 0}, "total_tokens": 0})
            else:
                events = self.responses_events(json.dumps(body).encode(), body, transport="websocket")
            done = events[-1]["response"]
            history = {done["id"]: list(body.get("input") or []) + done["output"]}
            for event in events:
                ws_frames.send_text(self, json.dumps(event))

    def responses_events(self, raw: bytes, body: dict, transport="http"):
        items = body.get("input") or []
        # Over the WebSocket, Codex sends its turn metadata in the request's client_metadata.
        meta = (body.get("client_metadata") or {}).get("x-codex-turn-metadata") or self.headers.get("x-codex-turn-metadata") or ""
        outputs = [i for i in items if isinstance(i, dict) and i.get("type") == "function_call_output"]
        usage_in = estimate_tokens(raw) + self.server.usage_bonus * len(outputs)
        tools = body.get("tools") or []
        tool_names = [t.get("name") for t in tools if isinstance(t, dict)]
        planted = self.server.script == "planted"
        if items and isinstance(items[-1], dict) and items[-1].get("type") == "compaction_trigger":
            # Codex's server-side compaction (the built-in OpenAI provider, "remote compaction
            # v2"): the answer is one `compaction` item, opaque to the client; ours holds the
            # summary's text where the real server puts its encrypted state.
            kind = "summary"
            text = planted_script.SUMMARY_TEXT if planted else SUMMARY_TEXT
            output = [{"type": "compaction", "id": "cmp_" + uuid.uuid4().hex[:24], "encrypted_content": text}]
        elif '"compaction"' in meta or (not tools and "summary" in json.dumps(items[-1:]).lower()):
            kind = "summary"
            output = [self.message_item(planted_script.SUMMARY_TEXT if planted else SUMMARY_TEXT)]
        elif not tools:
            kind = "side"
            output = [self.message_item("Scripted session")]
        else:
            # Calls since the last user message typed by the person.
            step = 0
            for item in reversed(items):
                if item.get("type") == "function_call_output":
                    step += 1
                elif item.get("type") == "message" and item.get("role") == "user":
                    text = json.dumps(item.get("content"))
                    if "<environment_context>" in text or "<user_instructions>" in text or "AGENTS.md" in text:
                        continue
                    break
            name = next((n for n in ("exec_command", "shell_command", "shell") if n in tool_names), None)
            call = planted_script.codex_next_call(items, step, tool_names) if planted else None
            if planted and call and name:
                kind = "tool_call"
                if call[1] == "update_plan":
                    name, arguments = "update_plan", call[2]
                else:
                    command = planted_script.codex_command(call)
                    arguments = {"cmd": command} if name == "exec_command" else {"command": command}
                output = [
                    self.message_item(call[0]),
                    {
                        "type": "function_call",
                        "id": "fc_" + uuid.uuid4().hex[:24],
                        "call_id": "call_" + uuid.uuid4().hex[:24],
                        "name": name,
                        "arguments": json.dumps(arguments),
                        "status": "completed",
                    },
                ]
            elif planted:
                kind = "answer"
                output = [self.message_item(planted_script.codex_final_text(items))]
                if not planted_script.codex_after_compaction(items):
                    usage_in += planted_script.CODEX_ANSWER_USAGE_BONUS
            elif step < CALLS_PER_TURN and name:
                kind = "tool_call"
                command = command_for_step(step)
                if name == "shell":
                    arguments = {"command": ["bash", "-lc", command]}
                elif name == "exec_command":
                    arguments = {"cmd": command}
                else:
                    arguments = {"command": command}
                output = [
                    {
                        "type": "function_call",
                        "id": "fc_" + uuid.uuid4().hex[:24],
                        "call_id": "call_" + uuid.uuid4().hex[:24],
                        "name": name,
                        "arguments": json.dumps(arguments),
                        "status": "completed",
                    }
                ]
            else:
                kind = "answer"
                output = [self.message_item(f"Done: {step} scripted steps ran.")]
        usage = {
            "input_tokens": usage_in,
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens": 30,
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": usage_in + 30,
        }
        self.record(kind, raw, usage=usage, extra={"turn_metadata": meta, "transport": transport})
        return self.completed_events(body, output, usage)

    @staticmethod
    def completed_events(body: dict, output: list, usage: dict) -> list:
        response_id = "resp_" + uuid.uuid4().hex[:24]
        model = body.get("model") or "gpt-5"
        response = {"id": response_id, "object": "response", "created_at": int(time.time()), "model": model, "status": "in_progress", "output": []}
        events = [{"type": "response.created", "sequence_number": 0, "response": response}]
        seq = 1
        for index, item in enumerate(output):
            events.append({"type": "response.output_item.added", "sequence_number": seq, "output_index": index, "item": item})
            seq += 1
            events.append({"type": "response.output_item.done", "sequence_number": seq, "output_index": index, "item": item})
            seq += 1
        done = dict(response, status="completed", output=output, usage=usage)
        events.append({"type": "response.completed", "sequence_number": seq, "response": done})
        return events

    @staticmethod
    def message_item(text: str) -> dict:
        return {
            "type": "message",
            "id": "msg_" + uuid.uuid4().hex[:24],
            "role": "assistant",
            "status": "completed",
            "content": [{"type": "output_text", "text": text, "annotations": []}],
        }


class Server(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, addr, log_path, usage_bonus, script="default"):
        super().__init__(addr, Handler)
        self.script = script
        self.log_path = log_path
        self.usage_bonus = usage_bonus
        self._n = 0
        self._lock = threading.Lock()

    def next_n(self) -> int:
        with self._lock:
            self._n += 1
            return self._n


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--log", required=True, help="JSON lines, one per request answered")
    parser.add_argument("--port-file", help="written with the port once listening")
    parser.add_argument("--usage-bonus", type=int, default=0, help="tokens added to the reported usage per tool result")
    parser.add_argument(
        "--script",
        choices=["default", "planted", "subagent"],
        default="default",
        help="planted: the planted-facts session of the forgot evaluation (planted_script.py); "
        "subagent: Claude Code delegates a step to a subagent (subagent_script.py)",
    )
    args = parser.parse_args()
    server = Server(("127.0.0.1", args.port), args.log, args.usage_bonus, args.script)
    port = server.server_address[1]
    if args.port_file:
        with open(args.port_file + ".tmp", "w") as f:
            f.write(str(port))
        import os

        os.replace(args.port_file + ".tmp", args.port_file)
    print(f"scripted upstream on 127.0.0.1:{port}", file=sys.stderr, flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Writes a synthetic home of Claude Code projects and Codex rollouts for timing
`ctxlab sessions` and the browser's listing (docs/architecture.md, listing cache).

    scripts/gen_home.py OUT [--sessions 2100] [--megabytes 300]

OUT gets `claude/projects/<project>/<uuid>.jsonl` (two thirds of the sessions) and
`codex/sessions/YYYY/MM/DD/rollout-*.jsonl` (the rest); run ctxlab with
CLAUDE_CONFIG_DIR=OUT/claude CODEX_HOME=OUT/codex CTXLAB_DATA_DIR=OUT/data.
The lines follow each tool's format; the text is filler. Nothing is committed."""
import argparse, json, os, random

def claude_session(path, sid, cwd, day, turns, pad):
    parent = None
    with open(path, "w") as f:
        for i in range(turns):
            ts = f"2025-{day[0]:02d}-{day[1]:02d}T10:{i % 60:02d}:00.000Z"
            u = {"parentUuid": parent, "isSidechain": False, "cwd": cwd, "sessionId": sid,
                 "version": "2.0.30", "type": "user", "uuid": f"u{i}", "timestamp": ts,
                 "message": {"role": "user", "content": "please continue " + pad}}
            a = {"parentUuid": f"u{i}", "isSidechain": False, "cwd": cwd, "sessionId": sid,
                 "version": "2.0.30", "type": "assistant", "uuid": f"a{i}", "timestamp": ts,
                 "message": {"id": f"msg{i}", "role": "assistant", "model": "claude-sonnet-4-5",
                             "content": [{"type": "text", "text": "done " + pad}],
                             "usage": {"input_tokens": 1000 + 50 * i, "output_tokens": 20,
                                       "cache_read_input_tokens": 0,
                                       "cache_creation_input_tokens": 0}}}
            f.write(json.dumps(u) + "\n" + json.dumps(a) + "\n")
            parent = f"a{i}"

def codex_session(path, cwd, day, turns, pad):
    ts = f"2025-{day[0]:02d}-{day[1]:02d}T09:00:00.000Z"
    with open(path, "w") as f:
        f.write(json.dumps({"timestamp": ts, "type": "session_meta",
                            "payload": {"id": "x", "timestamp": ts, "cwd": cwd,
                                        "originator": "codex_cli_rs", "cli_version": "0.50.0"}}) + "\n")
        for i in range(turns):
            f.write(json.dumps({"timestamp": ts, "type": "response_item", "payload": {
                "type": "message", "role": "user",
                "content": [{"type": "input_text", "text": "go on " + pad}]}}) + "\n")
            f.write(json.dumps({"timestamp": ts, "type": "response_item", "payload": {
                "type": "message", "role": "assistant",
                "content": [{"type": "output_text", "text": "ok " + pad}]}}) + "\n")
            f.write(json.dumps({"timestamp": ts, "type": "event_msg", "payload": {
                "type": "token_count", "info": {"last_token_usage": {
                    "input_tokens": 1000 + i, "cached_input_tokens": 0, "output_tokens": 5,
                    "total_tokens": 1005 + i}, "model_context_window": 272000}}}) + "\n")

def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--sessions", type=int, default=2100)
    ap.add_argument("--megabytes", type=int, default=300)
    a = ap.parse_args()
    rnd = random.Random(22)
    per = a.megabytes * 1024 * 1024 // a.sessions
    for n in range(a.sessions):
        day = (1 + n % 12, 1 + n % 28)
        pad = "x" * rnd.randint(200, 1200)
        turns = max(1, per // (2 * (len(pad) + 400)))
        cwd = f"/home/dev/project{n % 40}"
        if n % 3 < 2:
            d = os.path.join(a.out, "claude/projects", cwd.replace("/", "-"))
            os.makedirs(d, exist_ok=True)
            sid = f"{n:08d}-0000-4000-8000-000000000000"
            claude_session(os.path.join(d, sid + ".jsonl"), sid, cwd, day, turns, pad)
        else:
            d = os.path.join(a.out, "codex/sessions/2025/%02d/%02d" % day)
            os.makedirs(d, exist_ok=True)
            codex_session(os.path.join(d, "rollout-2025-%02d-%02dT09-00-00-%06d.jsonl" % (day + (n,))),
                          cwd, day, turns, pad)

if __name__ == "__main__":
    main()

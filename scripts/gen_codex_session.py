#!/usr/bin/env python3
"""Generate a large Codex rollout for the load-time and memory measurements (not used by CI).

Two layouts. Without --template: JSON lines in Codex's 2025 envelope layout (see README,
"Reading Claude Code and Codex sessions"): a session_meta line, a turn_context, then per turn
a user message, model calls (a reasoning item, a function_call of `shell` with its JSON
arguments, and its function_call_output), a token_count event after each call, now and then
an assistant message, and a `compacted` line with its context_compacted event every few
hundred calls.

With --template ROLLOUT (a rollout Codex 0.171 wrote, such as
tests/fixtures/sessions/codex_0171.jsonl or a real one): the template's session_meta once,
then its other lines over and over, each repetition with fresh ids (call, response, message,
retained ids), its own prompts and a running `ordinal`. Each `compacted` line repeats the
whole replacement history as Codex writes it: every prompt typed so far that fits Codex's
budget for retained user messages (--retain-bytes, newest first), each with its
`retained_source`, then the template's re-injected developer and environment messages and
the summary.

Deterministic for a given --seed; stops once the file reaches --mb megabytes.

Usage: gen_codex_session.py [--mb 50] [--seed 7] [--template ROLLOUT] [--retain-bytes 80000]
                            [--out bench-data/codex-50mb.jsonl]
"""
import argparse
import json
import os
import random
import re

LINES = [
    "src/parser.rs:{n}: let token = lexer.next()?; // it's the {n}th token\n",
    "test parser::tests::case_{n} ... ok\n",
    "    Compiling ctxlab v0.1.{n} (/work/ctxlab)\n",
    "warning: unused variable `x_{n}` — 解析器 ✅\n",
]
COMMANDS = ["cargo test", "cat src/parser.rs", "rg -n 'fn parse' src", "ls -la", "git diff"]


def output(rng):
    r = rng.random()
    chars = (rng.randrange(200, 4_000) if r < 0.6 else
             rng.randrange(4_000, 20_000) if r < 0.87 else rng.randrange(30_000, 80_000))
    parts, size = [], 0
    while size < chars:
        line = rng.choice(LINES).format(n=rng.randrange(10_000))
        parts.append(line)
        size += len(line)
    return "".join(parts)[:chars]


# Ids a repetition renews; turn and thread ids stay (one session, many turns alike).
IDS = re.compile(r"\b((?:call|resp|msg|fc|fco|retained)_[0-9a-f-]+)")


def is_prompt(item):
    """A prompt a person typed: a user message Codex marks `user.text`."""
    kinds = item.get("internal_chat_message_metadata_passthrough", {}).get("content_item_kinds")
    return item.get("type") == "message" and item.get("role") == "user" and kinds == ["user.text"]


def repeat_template(args):
    with open(args.template, encoding="utf-8") as f:
        template = [line.rstrip("\n") for line in f if line.strip()]
    limit = int(args.mb * 1024 * 1024)
    os.makedirs(os.path.dirname(args.out) or ".", exist_ok=True)
    prompts = []  # (item, metadata) of every prompt typed so far, oldest first
    ordinal = 0
    written = 0
    with open(args.out, "w", encoding="utf-8") as out:
        def emit(obj):
            nonlocal ordinal, written
            obj["ordinal"] = ordinal
            ordinal += 1
            text = json.dumps(obj, ensure_ascii=False, separators=(",", ":")) + "\n"
            out.write(text)
            written += len(text.encode("utf-8"))

        emit(json.loads(template[0]))
        rep = 0
        while written < limit:
            for raw in template[1:]:
                line = json.loads(IDS.sub(lambda m: "%sr%d" % (m.group(1), rep), raw))
                p = line.get("payload", {})
                if line.get("type") == "response_item" and is_prompt(p):
                    for part in p.get("content", []):
                        if part.get("type") == "input_text":
                            part["text"] += " (part %d)" % rep
                    meta = {"retained_source": {"id": {"message_id": p.get("id"), "role": "user"},
                                                "revision": "retained_%s" % p.get("id"),
                                                "complete": True}}
                    prompts.append((p, meta))
                if line.get("type") == "compacted":
                    kept, size = [], 0
                    for item, meta in reversed(prompts):
                        size += sum(len(c.get("text", "")) for c in item.get("content", []))
                        if size > args.retain_bytes:
                            break
                        kept.append((item, meta))
                    kept.reverse()
                    history = p.get("replacement_history", [])
                    metadata = p.get("replacement_history_metadata", [{}] * len(history))
                    anew = [(i, m) for i, m in zip(history, metadata)
                            if not m.get("retained_source")]
                    both = kept + anew
                    p["replacement_history"] = [i for i, _ in both]
                    p["replacement_history_metadata"] = [m for _, m in both]
                emit(line)
                if written >= limit:
                    break
            rep += 1


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--mb", type=float, default=50)
    p.add_argument("--seed", type=int, default=7)
    p.add_argument("--template", help="a Codex 0.171 rollout to repeat")
    p.add_argument("--retain-bytes", type=int, default=80_000,
                   help="Codex's budget for retained prompts: 20,000 tokens of 4 bytes")
    p.add_argument("--out", default=os.path.join("bench-data", "codex-50mb.jsonl"))
    args = p.parse_args()
    if args.template:
        repeat_template(args)
        return
    rng = random.Random(args.seed)
    limit = int(args.mb * 1024 * 1024)
    os.makedirs(os.path.dirname(args.out) or ".", exist_ok=True)
    written = 0
    second = 0
    total = {"input_tokens": 0, "cached_input_tokens": 0, "output_tokens": 0}

    def ts():
        nonlocal second
        second += 1
        return "2025-12-01T%02d:%02d:%02d.000Z" % (second // 3600 % 24, second // 60 % 60,
                                                    second % 60)

    with open(args.out, "w", encoding="utf-8") as f:
        def line(kind, payload):
            nonlocal written
            text = json.dumps({"timestamp": ts(), "type": kind, "payload": payload},
                              ensure_ascii=False) + "\n"
            f.write(text)
            written += len(text.encode("utf-8"))

        line("session_meta", {"id": "0193a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b", "cwd": "/home/dev/big",
                              "originator": "codex_cli_rs", "cli_version": "0.63.0"})
        line("turn_context", {"cwd": "/home/dev/big", "model": "gpt-5-codex",
                              "approval_policy": "on-request"})
        call = 0
        while written < limit:
            line("response_item", {"type": "message", "role": "user", "content": [
                {"type": "input_text", "text": "Fix the failing parser tests, keep the API."}]})
            for _ in range(rng.randrange(5, 40)):
                call += 1
                line("response_item", {"type": "reasoning", "summary": [
                    {"type": "summary_text", "text": "Looking at the parser next."}],
                    "encrypted_content": "gAAAA" + "x" * rng.randrange(100, 600)})
                cmd = rng.choice(COMMANDS)
                line("response_item", {"type": "function_call", "name": "shell",
                                       "arguments": json.dumps({"command": ["bash", "-lc", cmd]}),
                                       "call_id": "call_%06d" % call})
                line("response_item", {"type": "function_call_output",
                                       "call_id": "call_%06d" % call,
                                       "output": json.dumps({"output": output(rng),
                                                             "metadata": {"exit_code": 0}})})
                last = {"input_tokens": 20_000 + call % 50_000, "cached_input_tokens": 18_000,
                        "output_tokens": rng.randrange(50, 900)}
                for k in total:
                    total[k] += last[k]
                line("event_msg", {"type": "token_count", "info": {
                    "total_token_usage": dict(total), "last_token_usage": last,
                    "model_context_window": 272_000}})
                if call % 400 == 0:
                    line("compacted", {"message": "Summary of the work so far: the parser "
                                                  "tests were fixed one by one."})
                    line("event_msg", {"type": "context_compacted"})
            line("response_item", {"type": "message", "role": "assistant", "content": [
                {"type": "output_text", "text": "Done: the tests pass."}]})


if __name__ == "__main__":
    main()

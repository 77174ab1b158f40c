#!/usr/bin/env python3
"""Generate a long agent session for the replay measurement (not used by CI).

Writes a JSON array of messages: a user request, then model calls (assistant messages
with text and one or more tool_use blocks) each followed by a user message with the
matching tool_results in order; now and then a new user request or a text-only answer.
Tool outputs are mostly small, some pages, some over 30,000 chars, and now and then a
batch over 200,000 chars in total. Deterministic for a given --seed.

Usage: gen_session.py [--calls 1500] [--seed 7] [--out bench-data/session.json]
"""
import argparse
import json
import os
import random

LINES = [
    "src/parser.rs:{n}: let token = lexer.next()?; // it's the {n}th token\n",
    "test parser::tests::case_{n} ... ok\n",
    "test parser::tests::nested_{n} ... FAILED\n",
    "    Compiling ctxlab v0.1.{n} (/work/ctxlab)\n",
    '{{"path": "src\\\\mod_{n}.rs", "ok": true, "size": {n}}}\n',
    "warning: unused variable `x_{n}` — 解析器 ✅\n",
    "\tat Parser.parse (parser.js:{n}:17)\n",
]
COMMANDS = ["cargo test", "cat src/parser.rs", "rg -n 'fn parse' src", "ls -la", "git diff"]
REQUESTS = [
    "Fix the failing parser test and keep the public API unchanged.",
    "Now also handle nested brackets.",
    "Run the whole test suite and fix what breaks.",
    "Explain what changed in the lexer.",
]


def output(rng, chars):
    parts = []
    size = 0
    while size < chars:
        line = rng.choice(LINES).format(n=rng.randrange(10_000))
        parts.append(line)
        size += len(line)
    return "".join(parts)[:chars]


def result_size(rng):
    r = rng.random()
    if r < 0.60:
        return rng.randrange(200, 4_000)
    if r < 0.87:
        return rng.randrange(4_000, 20_000)
    return rng.randrange(30_000, 80_000)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=1500)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--out", default=os.path.join("bench-data", "session.json"))
    args = parser.parse_args()
    rng = random.Random(args.seed)

    messages = [{"role": "user", "content": REQUESTS[0]}]
    next_id = 0
    for call in range(args.calls):
        if call > 0 and rng.random() < 0.03:
            # The turn ended: a text answer, then the user asks for more.
            messages.append({"role": "assistant", "content": [{"type": "text", "text": "Done; the tests pass."}]})
            messages.append({"role": "user", "content": rng.choice(REQUESTS)})
            continue
        big_batch = rng.random() < 0.02
        n = rng.randrange(3, 6) if big_batch else rng.choice([1, 1, 1, 2, 2, 3, 4])
        ids = []
        blocks = [{"type": "text", "text": "Let me check."}]
        for _ in range(n):
            next_id += 1
            tid = f"toolu_{next_id:06d}"
            ids.append(tid)
            blocks.append({"type": "tool_use", "id": tid, "name": "bash", "input": {"command": rng.choice(COMMANDS)}})
        messages.append({"role": "assistant", "content": blocks})
        results = []
        for tid in ids:
            chars = rng.randrange(45_000, 100_000) if big_batch else result_size(rng)
            results.append({"type": "tool_result", "tool_use_id": tid, "content": output(rng, chars)})
        messages.append({"role": "user", "content": results})
    messages.append({"role": "assistant", "content": [{"type": "text", "text": "All done."}]})

    os.makedirs(os.path.dirname(args.out) or ".", exist_ok=True)
    with open(args.out, "w", encoding="utf-8") as f:
        json.dump(messages, f, ensure_ascii=False)
    calls = sum(1 for m in messages if m["role"] == "assistant")
    print(f"{args.out}: {len(messages)} messages, {calls} model calls, {os.path.getsize(args.out):,} bytes")


if __name__ == "__main__":
    main()

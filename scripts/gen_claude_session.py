#!/usr/bin/env python3
"""Generate a large Claude Code session file for the load-time measurement (not used by CI).

Writes JSON lines in Claude Code's layout (see README, "Reading Claude Code and Codex
sessions"): a prompt, then model calls whose replies are split over one line per content
block sharing message.id, tool results as user lines (now and then interleaved with the
reply's later blocks), usage on every assistant line, progress and file-history lines, a
compact_boundary with its isCompactSummary line every few hundred calls, a
microcompact_boundary now and then, and subagent (isSidechain) lines. Deterministic for a
given --seed; stops once the file reaches --mb megabytes.

With --tiny-lines N: N lines of a few words each instead (issue 39's hostile case, a
million tiny lines): prompts, one-word answers with their usage, and now and then a tool
call with its one-word result, each line about 150 bytes.

Usage: gen_claude_session.py [--mb 50] [--seed 7] [--tiny-lines N]
                             [--out bench-data/claude-50mb.jsonl]
"""
import argparse
import json
import os
import random
import uuid

LINES = [
    "src/parser.rs:{n}: let token = lexer.next()?; // it's the {n}th token\n",
    "test parser::tests::case_{n} ... ok\n",
    "    Compiling ctxlab v0.1.{n} (/work/ctxlab)\n",
    "warning: unused variable `x_{n}` — 解析器 ✅\n",
]


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--mb", type=float, default=50)
    p.add_argument("--seed", type=int, default=7)
    p.add_argument("--out", default=os.path.join("bench-data", "claude-50mb.jsonl"))
    p.add_argument("--tiny-lines", type=int, default=0)
    args = p.parse_args()
    if args.tiny_lines:
        tiny_lines(args)
        return
    rng = random.Random(args.seed)
    sid = str(uuid.UUID(int=rng.getrandbits(128)))
    limit = int(args.mb * 1024 * 1024)
    os.makedirs(os.path.dirname(args.out) or ".", exist_ok=True)
    written = 0
    seq = 0
    parent = None
    f = open(args.out, "w", encoding="utf-8")

    def emit(obj):
        nonlocal written, parent
        line = json.dumps(obj, ensure_ascii=False, separators=(",", ":")) + "\n"
        f.write(line)
        written += len(line.encode("utf-8"))
        if "uuid" in obj:
            parent = obj["uuid"]

    def base(kind, **kw):
        nonlocal seq
        seq += 1
        d = {"parentUuid": parent, "isSidechain": False, "userType": "external", "cwd": "/home/dev/big",
             "sessionId": sid, "version": "2.0.30", "gitBranch": "main", "type": kind,
             "uuid": f"u{seq:08d}", "timestamp": f"2025-12-01T{(seq // 3600) % 24:02d}:{(seq // 60) % 60:02d}:{seq % 60:02d}.000Z"}
        d.update(kw)
        return d

    def output(chars):
        parts, size = [], 0
        while size < chars:
            s = rng.choice(LINES).format(n=rng.randrange(10_000))
            parts.append(s)
            size += len(s)
        return "".join(parts)[:chars]

    emit(base("user", message={"role": "user", "content": "Find and fix the flaky parser tests"}))
    call = 0
    ctx = 20_000
    while written < limit:
        call += 1
        mid = f"msg_{call:06d}"
        usage = {"input_tokens": rng.randrange(1, 50), "cache_creation_input_tokens": rng.randrange(0, 3000),
                 "cache_read_input_tokens": ctx, "output_tokens": rng.randrange(20, 600)}
        n = rng.choice([1, 1, 2, 3])
        emit(base("assistant", requestId=f"req_{call:06d}", message={
            "id": mid, "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
            "content": [{"type": "text", "text": "Let me check."}], "usage": usage}))
        for k in range(n):
            tid = f"toolu_{call:06d}_{k}"
            emit(base("assistant", requestId=f"req_{call:06d}", message={
                "id": mid, "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
                "content": [{"type": "tool_use", "id": tid, "name": "Bash", "input": {"command": "cargo test"}}],
                "usage": usage}))
            size = rng.randrange(200, 4_000) if rng.random() < 0.7 else rng.randrange(4_000, 30_000)
            text = output(size)
            emit(base("user", message={"role": "user", "content": [{"tool_use_id": tid, "type": "tool_result", "content": text}]},
                      toolUseResult={"stdout": text[:200], "stderr": "", "interrupted": False}))
        if rng.random() < 0.3:
            emit(base("progress", data={"type": "hook_progress"}))
        if rng.random() < 0.2:
            emit({"type": "file-history-snapshot", "messageId": f"u{seq:08d}", "snapshot": {}, "isSnapshotUpdate": True})
        ctx += rng.randrange(500, 6_000)
        if call % 40 == 0:
            emit(base("system", subtype="microcompact_boundary", content="Context microcompacted",
                      microcompactMetadata={"trigger": "auto", "preTokens": ctx, "tokensSaved": ctx // 5,
                                            "compactedToolIds": [f"toolu_{call - 5:06d}_0"]}))
            ctx -= ctx // 5
        if ctx > 150_000:
            last = parent
            parent = None
            emit(base("system", subtype="compact_boundary", content="Conversation compacted", logicalParentUuid=last,
                      compactMetadata={"trigger": "auto", "preTokens": ctx, "postTokens": 12_000, "durationMs": 30_000}))
            emit(base("user", isCompactSummary=True, message={"role": "user", "content":
                      "This session is being continued from a previous conversation that ran out of context. " + output(3_000)}))
            ctx = 12_000
        if call % 50 == 0:
            side = f"a{call:05d}"
            emit(base("user", isSidechain=True, agentId=side, message={"role": "user", "content": "Search the tests"}))
            emit(base("assistant", isSidechain=True, agentId=side, message={
                "id": f"side_{call}", "role": "assistant", "model": "claude-haiku-4-5",
                "content": [{"type": "text", "text": "Found them."}], "usage": usage}))
        if rng.random() < 0.03:
            emit(base("user", message={"role": "user", "content": "Keep going, and run the whole suite"}))
    f.close()
    print(f"{args.out}: {call} model calls, {written:,} bytes")


def tiny_lines(args):
    """`--tiny-lines N`: N short lines, a conversation of one-word turns."""
    os.makedirs(os.path.dirname(args.out) or ".", exist_ok=True)
    with open(args.out, "w", encoding="utf-8") as f:
        n = 0
        while n < args.tiny_lines:
            parent = "u%d" % (n - 1) if n else None
            u = "u%d" % n
            if n % 2 == 0:
                content = "go %d" % n if n % 10 or not n else [
                    {"type": "tool_result", "tool_use_id": "t%d" % (n - 1), "content": "ok"}]
                line = {"type": "user", "uuid": u, "parentUuid": parent, "sessionId": "s1",
                        "message": {"role": "user", "content": content}}
            else:
                block = ({"type": "tool_use", "id": "t%d" % n, "name": "Bash",
                          "input": {"command": "ls"}} if n % 10 == 9 else
                         {"type": "text", "text": "ok"})
                line = {"type": "assistant", "uuid": u, "parentUuid": parent, "sessionId": "s1",
                        "requestId": "r%d" % n,
                        "message": {"id": "m%d" % n, "role": "assistant", "content": [block],
                                    "usage": {"input_tokens": 1000 + n % 5000,
                                              "output_tokens": 1}}}
            f.write(json.dumps(line, separators=(",", ":")) + "\n")
            n += 1
    print(f"{args.out}: {args.tiny_lines} tiny lines")


if __name__ == "__main__":
    main()

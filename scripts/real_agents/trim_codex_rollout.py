#!/usr/bin/env python3
"""Trim a rollout the real Codex CLI wrote against scripted_upstream.py into a test fixture.

Every line stays (its type, ids, ordinal and every recorded number: token_usage_record,
token_count, compacted's latest_token_usage_record), only long texts are cut: the base
instructions, the skills list, tool outputs and aggregated command output, world_state's
skills body. A text is cut the same way wherever it appears, so a prompt a compaction
retained in its replacement_history still equals the original. The server's log is cut to
what the tests compare: each request's number, kind, request_kind and reported usage.

Usage: trim_codex_rollout.py ROLLOUT UPSTREAM OUT_ROLLOUT OUT_UPSTREAM
"""
import json
import sys

KEEP = 240


def cut(text):
    if len(text) <= KEEP:
        return text
    return text[:KEEP] + "\n[... trimmed for the fixture]"


def walk(v, key=None):
    if isinstance(v, str):
        long_keys = {"text", "output", "aggregated_output", "body", "message"}
        return cut(v) if key in long_keys else v
    if isinstance(v, list):
        return [walk(x, key) for x in v]
    if isinstance(v, dict):
        return {k: walk(x, k) for k, x in v.items()}
    return v


def main():
    rollout, upstream, out_rollout, out_upstream = sys.argv[1:5]
    with open(rollout, encoding="utf-8") as f, open(out_rollout, "w", encoding="utf-8") as out:
        for line in f:
            if line.strip():
                out.write(json.dumps(walk(json.loads(line)), separators=(",", ":")) + "\n")
    with open(upstream, encoding="utf-8") as f, open(out_upstream, "w", encoding="utf-8") as out:
        for line in f:
            r = json.loads(line)
            meta = json.loads(r.get("headers", {}).get("x-codex-turn-metadata", "{}"))
            out.write(json.dumps({
                "n": r["n"], "kind": r["kind"], "request_kind": meta.get("request_kind"),
                "window_number": meta.get("window_number"), "usage": r.get("usage"),
            }, separators=(",", ":")) + "\n")


if __name__ == "__main__":
    main()

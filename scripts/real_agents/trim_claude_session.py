#!/usr/bin/env python3
"""Trims a Claude Code session file that the real CLI wrote in our harness (against
scripted_upstream.py, so its content is ours) into a small test fixture, keeping every line
and its structure:

- each `api-request-shape`: the long system block cut to SYSTEM_KEEP chars, each tool's
  description to DESC_KEEP chars, a large input schema replaced by an empty object schema;
- long rendered attachments (the skill listing) cut to LISTING_KEEP chars, the same text
  cut the same way in the attachment's payload and in the `api-request-blob` messages that
  carry it, so the record stays consistent;
- `prompt_snapshot` attachments, listing payloads (`addedLines`) and `toolUseResult.stdout`
  (metadata ctxlab skips) cut;
- each call's `input_tokens` lowered by a quarter of the bytes cut from its request (the
  scripted server's own rule: usage is a quarter of the request body's bytes), so the
  usage still matches what the file holds. `compactMetadata` is left as written.

Usage: trim_claude_session.py SESSION.jsonl > FIXTURE.jsonl
"""

import json
import sys

SYSTEM_KEEP = 800
DESC_KEEP = 100
SCHEMA_KEEP = 400
LISTING_KEEP = 300
SNAPSHOT_KEEP = 60
STDOUT_KEEP = 200


def nbytes(v) -> int:
    return len(json.dumps(v, ensure_ascii=False, separators=(",", ":")).encode())


def trim_shape(shape: dict) -> dict:
    system = [
        dict(b, text=b["text"][:SYSTEM_KEEP]) if isinstance(b.get("text"), str) else b
        for b in shape.get("system", [])
    ]
    tools = []
    for t in shape.get("tools", []):
        t = dict(t)
        if isinstance(t.get("description"), str):
            t["description"] = t["description"][:DESC_KEEP]
        if nbytes(t.get("input_schema", {})) > SCHEMA_KEEP:
            t["input_schema"] = {"type": "object", "properties": {}}
        tools.append(t)
    return dict(shape, system=system, tools=tools)


def cut_listing(text: str) -> str:
    if len(text) <= LISTING_KEEP:
        return text
    return text[:LISTING_KEEP] + "\n</system-reminder>"


def main() -> None:
    lines = [json.loads(l) for l in open(sys.argv[1], encoding="utf-8") if l.strip()]
    replaced = {}  # old rendered text -> new
    removed_at = []  # (line index, bytes cut from the context from there on)
    boundaries = []
    for i, o in enumerate(lines):
        kind = o.get("type")
        if kind == "api-request-shape":
            new = trim_shape(o["shape"])
            removed_at.append((i, nbytes(o["shape"]) - nbytes(new), "shape"))
            o["shape"] = new
        elif kind == "attachment":
            a = o.get("attachment", {})
            if a.get("type") == "prompt_snapshot":
                a["systemPrompt"] = [s[:SNAPSHOT_KEEP] for s in a.get("systemPrompt", [])]
                if "tools" in a:
                    a["tools"] = [t.get("name") if isinstance(t, dict) else t for t in a["tools"]]
            for r in o.get("rendered", []):
                text = r.get("content")
                if isinstance(text, str) and len(text) > LISTING_KEEP + 100:
                    new = cut_listing(text)
                    replaced[text] = new
                    r["content"] = new
                    removed_at.append((i, len(text.encode()) - len(new.encode()), "attachment"))
                    if isinstance(a.get("content"), str):
                        a["content"] = a["content"][:LISTING_KEEP]
                    if isinstance(a.get("addedLines"), list):
                        a["addedLines"] = a["addedLines"][:2]
        elif kind == "user" and isinstance(o.get("toolUseResult"), dict):
            tur = o["toolUseResult"]
            if isinstance(tur.get("stdout"), str):
                tur["stdout"] = tur["stdout"][:STDOUT_KEEP]
        elif kind == "system" and o.get("subtype") == "compact_boundary":
            boundaries.append(i)
    for o in lines:
        if o.get("type") == "api-request-blob":
            content = o.get("message", {}).get("content")
            if isinstance(content, list):
                for b in content:
                    t = b.get("text")
                    for old, new in replaced.items():
                        if t in (old, old + "\n"):
                            b["text"] = new + t[len(old):]
    # The shape is sent with every call; an attachment with every call after it until
    # the next compaction boundary.
    shape_cut = max((n for _, n, k in removed_at if k == "shape"), default=0)
    for i, o in enumerate(lines):
        if o.get("type") != "assistant":
            continue
        usage = o.get("message", {}).get("usage")
        if not isinstance(usage, dict):
            continue
        start = max((b for b in boundaries if b < i), default=-1)
        cut = shape_cut + sum(
            n for j, n, k in removed_at if k == "attachment" and start < j < i
        )
        usage["input_tokens"] = max(1, usage.get("input_tokens", 0) - cut // 4)
    out = sys.stdout
    for o in lines:
        out.write(json.dumps(o, ensure_ascii=False, separators=(",", ":")) + "\n")


if __name__ == "__main__":
    main()

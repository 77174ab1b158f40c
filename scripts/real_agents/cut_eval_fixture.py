#!/usr/bin/env python3
"""Cuts a session the real agent wrote against the scripted server's planted script
(`planted.py`) into a small fixture for the forgot evaluation (tests/it/forgot_eval.rs):
only the lines `ctxlab forgot` reads for the conversation, and none of the agent's own
prompt prose.

- Claude Code: the `user`, `assistant` and `system` lines (the conversation, the compact
  boundary, the summary); the request records, attachments and bookkeeping lines go. The
  text of each `<system-reminder>` block the agent put into a message is replaced by
  filler of the same length (the tags stay), and so is the frame Claude Code puts around a
  subagent's report (`[Subagent hand-back]`). A subagent's own file is cut the same way.
- Codex: every line but `world_state` and the `item_completed` events; `base_instructions` and the text of developer
  messages and of the injected instruction messages become filler of the same length.

The conversation, the tool calls and their results are the scripted server's and the
planted project's: they stay as written.

Usage: cut_eval_fixture.py claude|codex SESSION.jsonl > FIXTURE.jsonl
"""

import json
import re
import sys

REMINDER = re.compile(r"(<system-reminder>)(.*?)(</system-reminder>)", re.S)
# The frame Claude Code puts around a subagent's report in the Agent tool's result.
HAND_BACK = re.compile(r"(\[Subagent hand-back\] )(.*?)(The report follows:)", re.S)
WORDS = "scripted filler words of ours standing in for the agent's own text".split()


def filler(text: str) -> str:
    out, i = [], 0
    while sum(len(w) + 1 for w in out) < len(text):
        out.append(WORDS[i % len(WORDS)])
        i += 1
    return " ".join(out)[: len(text)]


def scrub_reminders(v):
    if isinstance(v, str):
        v = REMINDER.sub(lambda m: m.group(1) + filler(m.group(2)) + m.group(3), v)
        return HAND_BACK.sub(lambda m: m.group(1) + filler(m.group(2)) + m.group(3), v)
    if isinstance(v, list):
        return [scrub_reminders(x) for x in v]
    if isinstance(v, dict):
        return {k: scrub_reminders(x) for k, x in v.items()}
    return v


INJECTED = ("<environment_context>", "<user_instructions>", "# AGENTS.md", "<permissions", "<collaboration_mode>")


def scrub_codex(o: dict) -> dict:
    p = o.get("payload")
    if not isinstance(p, dict):
        return o
    if o.get("type") == "session_meta" and isinstance(p.get("base_instructions"), dict):
        b = p["base_instructions"]
        if isinstance(b.get("text"), str):
            b["text"] = filler(b["text"])
    if isinstance(p.get("base_instructions"), str):
        p["base_instructions"] = filler(p["base_instructions"])
    items = [p] if p.get("type") == "message" else []
    items += [i for i in p.get("replacement_history") or [] if isinstance(i, dict)]
    for item in items:
        for c in item.get("content") or []:
            t = c.get("text")
            if not isinstance(t, str):
                continue
            if item.get("role") == "developer" or (item.get("role") == "user" and t.lstrip().startswith(INJECTED)):
                # Keep the opening tag, so the reader still knows the kind of message.
                head = t[: t.find(">") + 1] if t.lstrip().startswith("<") else ""
                c["text"] = head + filler(t[len(head):])
    return o


def main() -> None:
    agent, path = sys.argv[1], sys.argv[2]
    for line in open(path, encoding="utf-8"):
        if not line.strip():
            continue
        o = json.loads(line)
        if agent == "claude":
            if o.get("type") not in ("user", "assistant", "system"):
                continue
            o = scrub_reminders(o)
        else:
            if o.get("type") == "world_state" or (o.get("payload") or {}).get("type") == "item_completed":
                continue
            o = scrub_codex(o)
        sys.stdout.write(json.dumps(o, ensure_ascii=False, separators=(",", ":")) + "\n")


if __name__ == "__main__":
    main()

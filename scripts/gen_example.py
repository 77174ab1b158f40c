#!/usr/bin/env python3
"""Write assets/examples/every-stage.json: a history that crosses every threshold.

60 messages of a plausible debugging session (so snip fires), many tool results over
120 chars (micro), a final batch of five results totalling ~260,000 chars with several
over 30,000 (budget), and still over 50,000 chars after all that (compact_history).
Deterministic: no randomness, no clock.
"""
import json

REQUEST = "Find why the nightly import job drops records and fix it without changing the CSV format."
messages = [{"role": "user", "content": REQUEST}]
n = 0
def tid():
    global n
    n += 1
    return "toolu_ex_%03d" % n

steps = [
    ("bash", {"command": "ls -R src"}, "src:\nimport.rs\nlib.rs\nparse.rs\nschema.rs\n" * 4),
    ("read_file", {"path": "src/import.rs"}, "".join("fn step_%d(rec: &Record) -> Result<(), Error> { validate(rec)?; store(rec) }\n" % i for i in range(12))),
    ("bash", {"command": "grep -n 'skip' src/*.rs"}, "".join("src/parse.rs:%d:    if line.is_empty() { continue; } // skip\n" % (40 + i) for i in range(8))),
]
for i in range(27):
    name, inp, out = steps[i % len(steps)]
    inp = dict(inp)
    if name == "bash":
        inp["command"] = inp["command"] + "  # pass %d" % i
    t = tid()
    messages.append({"role": "assistant", "content": [
        {"type": "text", "text": "Checking step %d of the import path." % i},
        {"type": "tool_use", "id": t, "name": name, "input": inp}]})
    messages.append({"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": t, "content": out + "(pass %d)\n" % i}]})

big = []
uses = []
for k, size in enumerate([90000, 80000, 60000, 40000, 33000]):
    t = tid()
    uses.append({"type": "tool_use", "id": t, "name": "bash", "input": {"command": "cat logs/nightly-%d.log" % k}})
    line = "2026-11-2%d 03:14:%02d import: record %%06d ok\n" % (k, k)
    text = ""
    j = 0
    while len(text) < size:
        text += line % j
        j += 1
    big.append({"type": "tool_result", "tool_use_id": t, "content": text[:size]})
messages.append({"role": "assistant", "content": [{"type": "text", "text": "Reading the five nightly logs."}] + uses})
messages.append({"role": "user", "content": big})

json.dump({"messages": messages, "active_request": REQUEST},
          open("assets/examples/every-stage.json", "w"), indent=1, ensure_ascii=False)
print(len(messages), "messages")

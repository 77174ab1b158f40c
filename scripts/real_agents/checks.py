"""The invariant: every number ctxlab shows about a real agent's run equals the agent's own.

For one run, the agent's own record (read here, independently of ctxlab, from what the
agent wrote: Claude Code's assistant usage and `compactMetadata`, Codex's
`token_usage_record` and `compacted` lines) and the scripted server's log are the truth.
Each of ctxlab's surfaces is read through its machine-readable output (`--json`, the
export's recorded section, `watch --json`, the status line) and compared number by number.
docs/real-agents.md lists which source each number comes from.
"""

import html
import json
import re
import subprocess
from pathlib import Path

MAIN_KINDS = ("tool_call", "answer")


# -- the agents' own records ---------------------------------------------------------------

def read_jsonl(path: Path):
    out = []
    for line in path.read_text(errors="replace").splitlines():
        line = line.strip()
        if not line:
            continue
        try:
            out.append(json.loads(line))
        except ValueError:
            continue
    return out


def claude_record(session: Path) -> dict:
    """Claude Code's own figures: one call per API message id with usage (main chain), tool
    pairs by id, and each compact boundary's `compactMetadata` (its `preTokens` is the last
    call's prompt plus its output; its `postTokens` is Claude Code's estimate of what it
    kept), with the usage of the calls on either side for what a capture measures."""
    calls, seen = [], set()
    uses, results = set(), set()
    compactions = []
    events = []
    for line in read_jsonl(session):
        if line.get("isSidechain"):
            continue
        kind = line.get("type")
        message = line.get("message") or {}
        if kind == "assistant":
            mid = message.get("id")
            usage = message.get("usage")
            if mid and usage and mid not in seen:
                seen.add(mid)
                tokens = usage.get("input_tokens", 0) + usage.get("cache_read_input_tokens", 0) + usage.get("cache_creation_input_tokens", 0)
                calls.append(tokens)
                events.append(("call", tokens))
            for block in message.get("content") or []:
                if isinstance(block, dict) and block.get("type") == "tool_use":
                    uses.add(block.get("id"))
        elif kind == "user" and isinstance(message.get("content"), list):
            for block in message["content"]:
                if isinstance(block, dict) and block.get("type") == "tool_result":
                    results.add(block.get("tool_use_id"))
        elif kind == "system" and line.get("subtype") == "compact_boundary":
            meta = line.get("compactMetadata") or {}
            compactions.append({"trigger": meta.get("trigger"), "before": meta.get("preTokens"), "after": meta.get("postTokens")})
            events.append(("compaction", len(compactions) - 1))
    around_calls(events, compactions)
    return {"calls": len(calls), "tool_pairs": len(uses & results), "compactions": compactions, "peak": max(calls, default=0), "last_context": calls[-1] if calls else None}


def around_calls(events, compactions):
    """Each compaction's neighbours: the usage of the last call before it and the first after."""
    for i, (kind, which) in enumerate(events):
        if kind != "compaction":
            continue
        compactions[which]["before_usage"] = next((t for k, t in reversed(events[:i]) if k == "call"), None)
        compactions[which]["after_usage"] = next((t for k, t in events[i + 1:] if k == "call"), None)


def codex_record(session: Path) -> dict:
    """Codex's own figures: `token_usage_record` per API call (the compaction calls named by
    `compacted.compaction_response_id` are not conversation calls), tool pairs by call id,
    and each compaction between the last main call before it and the first after."""
    lines = read_jsonl(session)
    compaction_ids = {line["payload"].get("compaction_response_id") for line in lines if line.get("type") == "compacted"}
    events = []  # ("call", tokens) and ("compaction", None) in file order
    calls, uses, outputs = [], set(), set()
    for line in lines:
        kind = line.get("type")
        payload = line.get("payload") or {}
        if kind == "token_usage_record" and payload.get("response_id") not in compaction_ids:
            tokens = (payload.get("usage") or {}).get("input_tokens", 0)
            calls.append(tokens)
            events.append(("call", tokens))
        elif kind == "compacted":
            events.append(("compaction", None))
        elif kind == "response_item":
            item_type = payload.get("type")
            if item_type in ("function_call", "custom_tool_call", "local_shell_call"):
                uses.add(payload.get("call_id"))
            elif item_type in ("function_call_output", "custom_tool_call_output"):
                outputs.add(payload.get("call_id"))
    compactions = []
    for i, (kind, _) in enumerate(events):
        if kind != "compaction":
            continue
        before = next((t for k, t in reversed(events[:i]) if k == "call"), None)
        after = next((t for k, t in events[i + 1:] if k == "call"), None)
        compactions.append({"trigger": "auto", "before": before, "after": after, "before_usage": before, "after_usage": after})
    return {"calls": len(calls), "tool_pairs": len(uses & outputs), "compactions": compactions, "peak": max(calls, default=0), "last_context": calls[-1] if calls else None}


def server_record(requests) -> dict:
    main = [r for r in requests if r.get("kind") in MAIN_KINDS]
    return {"calls": len(main), "summary_requests": sum(1 for r in requests if r.get("kind") == "summary")}


# -- ctxlab's surfaces ---------------------------------------------------------------------

def ctxlab_json(ctxlab: Path, *args):
    result = subprocess.run([str(ctxlab), *args], capture_output=True, text=True, timeout=120)
    if result.returncode != 0:
        return None, f"`ctxlab {' '.join(args[:2])}` exited {result.returncode}: {result.stderr.strip()[-300:]}"
    try:
        return json.loads(result.stdout), None
    except ValueError:
        return None, f"`ctxlab {' '.join(args[:2])}` printed no JSON"


def from_inspect(doc) -> dict:
    def tokens(value):
        return value.get("tokens") if isinstance(value, dict) else value

    return {
        "calls": doc.get("calls"),
        "tool_pairs": doc.get("tool_pairs"),
        "compactions": [{"before": tokens(c.get("tokens_before")), "after": tokens(c.get("tokens_after"))} for c in doc.get("compactions") or []],
        "peak": doc.get("peak_context_tokens"),
        "unknown": sorted(set(doc.get("unknown_types") or {}) | {k for k in (doc.get("skipped") or {}) if "unknown" in k}),
    }


def from_sessions(rows, session: Path) -> dict:
    row = next((r for r in rows if Path(r.get("path", "")).resolve() == session.resolve()), None)
    if row is None:
        return {"error": "not listed"}
    return {"calls": row.get("calls"), "compactions_count": row.get("compactions"), "peak": row.get("peak_context_tokens")}


def from_forgot(doc) -> dict:
    out = []
    for c in doc.get("compactions") or []:
        before = c.get("tokens_before")
        out.append({"before": before.get("tokens") if isinstance(before, dict) else before})
    return {"compactions": out}


def from_watch(lines) -> dict:
    calls = [line for line in lines if line.get("event") == "call" and not line.get("summary_call")]
    compactions = {}
    for line in lines:
        if line.get("event") in ("compaction", "compaction_update"):
            compactions[line.get("index")] = line
    # watch names each tool call by id and counts, on each message, the results it carries.
    uses = {line.get("id") for line in lines if line.get("event") == "tool_call"}
    answered = sum(line.get("tool_results") or 0 for line in lines if line.get("event") == "message")
    return {
        "calls": len(calls),
        "tool_pairs": min(len(uses), answered),
        "compactions": [{"before": c.get("tokens_before"), "after": c.get("tokens_after")} for _, c in sorted(compactions.items())],
        "peak": max((c.get("context_tokens") or 0 for c in calls), default=0),
    }


RECORDED_RE = re.compile(r"Recorded by [\w-]+: (\d+) model calls?.*?peak context ([\d,]+) tokens; (\d+) compactions?")
# `#1 at message 16 (line 82): full manual, 48,048 -> 2,748 tokens` (docs/pipeline.md).
COMPACTION_RE = re.compile(r"#\d+ at message \d+[^:]*: [^#>]*?~?([\d,?]+)(?: \([^)]*\))? -> ~?([\d,?]+)")


def from_export(page: str) -> dict:
    start = page.find('id="recorded"')
    if start < 0:
        return {"error": "no recorded section"}
    text = re.sub(r"<[^>]+>", " ", page[start:start + 20000])
    text = re.sub(r"\s+", " ", html.unescape(text))
    m = RECORDED_RE.search(text)
    if not m:
        return {"error": "recorded section unreadable"}

    def num(s):
        return None if "?" in s else int(s.replace(",", ""))

    section = text[m.end():]
    cut = section.find("Request size per model call")
    section = section[:cut] if cut >= 0 else section
    compactions = [{"before": num(a), "after": num(b)} for a, b in COMPACTION_RE.findall(section)]
    return {"calls": int(m.group(1)), "peak": num(m.group(2)), "compactions_count": int(m.group(3)), "compactions": compactions}


# -- the comparison ------------------------------------------------------------------------

# Differences known and not yet fixed, each as (agent, surface, number) -> the range (low,
# high) of ctxlab's figure minus the agent's. A known difference outside its range, or gone,
# fails too (then this table is to be corrected). None at present: codex-ws's watch counted
# each server compaction's own call (Codex writes its `token_usage_record` just before the
# `compacted` line that names it); the live reader now holds such a call back a line.
KNOWN_DIFFERENCES = {}


def compare(agent: str, truth: dict, surfaces: dict) -> list:
    failures = []
    rows = []
    for surface, got in surfaces.items():
        if "error" in got:
            failures.append(f"{agent} {surface}: {got['error']}")
            continue
        for key in ("calls", "tool_pairs", "peak"):
            if key in got:
                rows.append((surface, key, truth[key], got[key]))
        if "compactions_count" in got:
            rows.append((surface, "compactions", len(truth["compactions"]), got["compactions_count"]))
        if "compactions" in got:
            rows.append((surface, "compactions", len(truth["compactions"]), len(got["compactions"])))
            for i, (want, have) in enumerate(zip(truth["compactions"], got["compactions"])):
                for side in ("before", "after"):
                    if side in have:
                        # A capture measures the requests themselves: the calls on either
                        # side, not the figures the agent wrote on its boundary line.
                        key = f"{side}_usage" if surface == "capture" else side
                        rows.append((surface, f"compaction #{i + 1} tokens {side}", want[key], have[side]))
        if got.get("unknown"):
            failures.append(f"{agent} {surface}: line types still unknown: {', '.join(got['unknown'])}")
    print(f"\n{agent}: every number, against the agent's own record")
    print(f"  {'surface':<12} {'number':<28} {'agent':>10} {'ctxlab':>10}")
    for surface, key, want, have in rows:
        known = KNOWN_DIFFERENCES.get((agent, surface, key))
        if known is not None and isinstance(want, int) and isinstance(have, int) and known[0] <= have - want <= known[1]:
            print(f"  {surface:<12} {key:<28} {str(want):>10} {str(have):>10}   <- known difference (checks.KNOWN_DIFFERENCES)")
            continue
        mark = "" if want == have else "   <- differs"
        print(f"  {surface:<12} {key:<28} {str(want):>10} {str(have):>10}{mark}")
        if want != have or known is not None:
            note = " (a known difference changed or went away: correct checks.KNOWN_DIFFERENCES)" if known is not None else ""
            failures.append(f"{agent} {surface}: {key} is {have}, the agent recorded {want}{note}")
    return failures


def check_run(agent: str, root: Path, ctxlab: Path) -> list:
    failures = []
    logs = root / "logs"
    upstream = read_jsonl(logs / "upstream.jsonl") if (logs / "upstream.jsonl").exists() else []
    home = root / "home"
    if agent == "claude":
        sessions = sorted((home / ".claude" / "projects").glob("*/*.jsonl"))
    else:
        sessions = sorted((home / ".codex" / "sessions").glob("*/*/*/rollout-*.jsonl"))
    if len(sessions) != 1:
        return [f"{agent}: expected one session file, found {len(sessions)}"]
    session = sessions[0]
    truth = claude_record(session) if agent == "claude" else codex_record(session)
    server = server_record(upstream)
    if server["calls"] != truth["calls"]:
        failures.append(f"{agent}: the server answered {server['calls']} conversation calls, the session file records {truth['calls']}")
    if server["summary_requests"] < len(truth["compactions"]):
        failures.append(f"{agent}: {len(truth['compactions'])} compactions recorded but only {server['summary_requests']} summary requests answered")
    if not truth["compactions"]:
        failures.append(f"{agent}: the run did not compact (the harness must drive a compaction)")

    surfaces = {}
    doc, err = ctxlab_json(ctxlab, "inspect", "--json", str(session))
    surfaces["inspect"] = from_inspect(doc) if doc else {"error": err}
    doc, err = ctxlab_json(ctxlab, "sessions", "--json", str(session))
    surfaces["sessions"] = from_sessions(doc, session) if doc is not None else {"error": err}
    doc, err = ctxlab_json(ctxlab, "forgot", "--json", str(session))
    surfaces["forgot"] = from_forgot(doc) if doc else {"error": err}
    export_path = root / "export.html"
    result = subprocess.run([str(ctxlab), "export", "--out", str(export_path), str(session)], capture_output=True, text=True, timeout=120)
    surfaces["export"] = from_export(export_path.read_text()) if result.returncode == 0 else {"error": f"export exited {result.returncode}: {result.stderr[-300:]}"}
    watch_path = logs / "watch.jsonl"
    surfaces["watch"] = from_watch(read_jsonl(watch_path)) if watch_path.exists() else {"error": "watch wrote nothing"}
    capture = root / "capture.jsonl"
    doc, err = ctxlab_json(ctxlab, "inspect", "--json", str(capture))
    surfaces["capture"] = from_inspect(doc) if doc else {"error": err}
    if "unknown" in surfaces["capture"]:
        surfaces["capture"].pop("unknown")
    failures += compare(agent, truth, surfaces)
    if agent == "codex-ws":
        over_ws = [line for line in read_jsonl(capture) if (line.get("request") or {}).get("websocket")]
        print(f"\n{agent}: {len(over_ws)} exchanges captured on the WebSocket")
        if not over_ws:
            failures.append(f"{agent}: the capture holds no WebSocket exchange")
    if watch_path.exists():
        failures += check_headroom(agent, read_jsonl(watch_path), truth)
    if agent == "claude":
        failures += check_statusline(logs / "statusline", truth)
    return failures


# Where each agent of the harness compacts by itself: Claude Code's rule for a 200,000
# window; Codex's model_auto_compact_token_limit from the run's config.toml.
EXPECTED_THRESHOLD = {"claude": 167_000, "codex": 30_000, "codex-ws": 30_000}


def check_headroom(agent: str, lines, truth: dict) -> list:
    """watch measures headroom to the agent's own threshold, and the agent compacted by
    itself (Codex) once a call had passed it."""
    limits = {(line.get("headroom") or {}).get("limit_tokens") for line in lines if line.get("event") == "call"}
    want = EXPECTED_THRESHOLD[agent]
    print(f"\n{agent}: headroom (watch) against where the agent compacted")
    print(f"  watch measured to: {sorted(x for x in limits if x)}; the agent's threshold: {want:,}")
    failures = []
    if limits != {want}:
        failures.append(f"{agent} watch: headroom measured to {sorted(x for x in limits if x)}, the agent's threshold is {want:,}")
    for i, c in enumerate(truth["compactions"]):
        if c.get("trigger") == "auto":
            before = c.get("before_usage")
            print(f"  compaction #{i + 1}: by itself after a call at {before:,} ({before - want:+,} past the threshold)")
            if before is not None and before < want * 0.85:
                failures.append(f"{agent}: compaction #{i + 1} came at {before:,}, far below the threshold {want:,}")
    return failures


def check_statusline(folder: Path, truth: dict) -> list:
    """The status line against Claude Code's own status JSON of the same moment."""
    inputs = sorted(folder.glob("*.in.json"))
    if not inputs:
        return ["claude statusline: Claude Code never ran the status line"]
    failures = []
    last = inputs[-1]
    out = last.with_name(last.name.replace(".in.json", ".out.txt")).read_text(errors="replace").strip()
    try:
        status = json.loads(last.read_text())
    except ValueError:
        return [f"claude statusline: Claude Code's input {last.name} is not JSON"]
    window = status.get("context_window") or {}
    usage = window.get("current_usage") or {}
    own = None
    if usage:
        own = usage.get("input_tokens", 0) + usage.get("cache_read_input_tokens", 0) + usage.get("cache_creation_input_tokens", 0)
    print("\nclaude: the status line")
    print(f"  Claude Code's own figure (context_window.current_usage): {own}")
    print(f"  the agent's last call in its session file:              {truth['last_context']}")
    print(f"  ctxlab statusline printed: {out!r}")
    if not out:
        failures.append("claude statusline: printed nothing")
    want = own if own is not None else truth["last_context"]
    if want is not None and f"{want:,}" not in out and str(want) not in out:
        failures.append(f"claude statusline: does not show the context {want:,} (printed {out!r})")
    count = len(truth["compactions"])
    if count and not re.search(rf"\b{count} compaction", out):
        failures.append(f"claude statusline: does not count the session's {count} compaction(s) (printed {out!r})")
    return failures

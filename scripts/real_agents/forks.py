"""The fork step: `ctxlab fork` on each agent's run, resumed by the real agent.

After an agent's run, its HOME is copied to `<run>/fork/home` (the run's own files are
never touched), a second scripted server is started without the usage bonus (so the
resumed agent does not compact again at once), and for each case `ctxlab fork` writes a
new session into the copied HOME, `ctxlab inspect` reads it, and the real agent resumes it
with a prompt of its own (`claude --resume ID -p PROMPT`, `codex exec resume ID PROMPT`).
The first request the agent sends is then compared with what the fork was meant to hold:

- `--summary none`: exactly the conversation of the original's summary request for that
  compaction (the history the agent had), then the prompt (Claude Code may put back the
  answer it had preserved across its compaction);
- a summary (a FILE, or a strategy with `--summary-text`): the summary, what the strategy
  kept, then the prompt; no tool call the summary replaced;
- always: nothing the original (or the forked fork) said after the fork point.

Injected context (Claude Code's `<system-reminder>` blocks, Codex's developer and
`<environment_context>` messages) is set aside on both sides: the agent adds it itself.
docs/real-agents.md ("The fork step") says the same.
"""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import agents
from agents import HarnessError, Service

HERE = Path(__file__).resolve().parent
NO_COMPACT_LIMIT = 10_000_000


# -- the requests, as comparable items ---------------------------------------------------

def request_items(body: dict) -> list:
    """(role, kind, value) per block or item: text blocks with their text, tool calls and
    outputs with their call id, in order."""
    out = []
    if "messages" in body:
        for m in body["messages"]:
            content = m.get("content")
            if isinstance(content, str):
                content = [{"type": "text", "text": content}]
            for b in content or []:
                kind = b.get("type")
                if kind == "text":
                    out.append((m["role"], "text", b.get("text", "")))
                elif kind == "tool_use":
                    out.append((m["role"], "call", b.get("id")))
                elif kind == "tool_result":
                    out.append((m["role"], "output", b.get("tool_use_id")))
        return out
    for item in body.get("input") or []:
        kind = item.get("type")
        if kind == "message":
            text = "".join(p.get("text", "") for p in item.get("content") or [] if isinstance(p, dict))
            out.append((item.get("role"), "text", text))
        elif kind in ("function_call", "custom_tool_call", "local_shell_call"):
            out.append(("assistant", "call", item.get("call_id")))
        elif kind in ("function_call_output", "custom_tool_call_output"):
            out.append(("tool", "output", item.get("call_id")))
    return out


def injected(item) -> bool:
    """Context the agent adds by itself, on every request or on resume."""
    role, kind, value = item
    if role in ("developer", "system"):
        return True
    if kind != "text":
        return False
    text = value.lstrip()
    return text.startswith("<") or value == "No response requested."


def conversation(body: dict) -> list:
    return [i for i in request_items(body) if not injected(i)]


def render(items, width=90) -> list:
    """One line per item; `*` marks context the agent injects by itself."""
    return [f"{'*' if injected((role, kind, value)) else ' '} {role:<9} {kind:<6} {str(value).replace(chr(10), ' ')[:width]}" for role, kind, value in items]


def side_by_side(left_title, left, right_title, right) -> str:
    a, b = render(left, 58), render(right, 58)
    rows = [f"{left_title:<80} | {right_title}", "-" * 160]
    for i in range(max(len(a), len(b))):
        rows.append(f"{(a[i] if i < len(a) else ''):<80} | {b[i] if i < len(b) else ''}")
    return "\n".join(rows) + "\n"


# -- the cases -----------------------------------------------------------------------------

class Case:
    def __init__(self, label, before, summary, prompt, source=None, summary_text=None, marker=None, parent=None, exact=False):
        self.label = label
        self.before = before
        self.summary = summary
        self.prompt = prompt
        self.source = source  # a case whose fork is forked again (a fork of a fork)
        self.summary_text = summary_text
        self.marker = marker  # text the summary must carry
        self.parent = parent
        self.exact = exact  # --summary none: the original's history, exactly
        self.fork = None
        self.requests = []


def claude_cases(summary_file: Path, summary_file2: Path) -> list:
    file1 = Case("file-1", 1, str(summary_file), "FORK-PROMPT claude file-1", marker="FORK-FILE-SUMMARY")
    return [
        Case("none-1", 1, "none", "FORK-PROMPT claude none-1", exact=True),
        file1,
        Case("s08-1", 1, "s08", "FORK-PROMPT claude s08-1", summary_text="FORK-S08-SUMMARY", marker="FORK-S08-SUMMARY"),
        Case("fork-of-file-1", 1, str(summary_file2), "FORK-PROMPT claude fork-of-fork", source=file1, marker="FORK-FILE2-SUMMARY"),
    ]


def codex_cases(summary_file: Path) -> list:
    none2 = Case("none-2", 2, "none", "FORK-PROMPT codex none-2", exact=True)
    return [
        none2,
        Case("none-1", 1, "none", "FORK-PROMPT codex none-1", exact=True),
        Case("file-1", 1, str(summary_file), "FORK-PROMPT codex file-1", marker="FORK-FILE-SUMMARY"),
        Case("s08-2", 2, "s08", "FORK-PROMPT codex s08-2", summary_text="FORK-S08-SUMMARY", marker="FORK-S08-SUMMARY"),
        Case("fork-of-none-2", 1, "guarded", "FORK-PROMPT codex fork-of-fork", source=none2, summary_text="FORK-GUARDED-SUMMARY", marker="FORK-GUARDED-SUMMARY"),
    ]


# -- driving -------------------------------------------------------------------------------

def read_log(path: Path) -> list:
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def fork_env(agent: str, home: Path) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CODEX_", "CLAUDE_"))}
    env["HOME"] = str(home)
    if agent == "codex":
        env["CODEX_HOME"] = str(home / ".codex")
    return env


def make_fork(ctxlab: Path, agent: str, home: Path, source: Path, case: Case) -> dict:
    cmd = [str(ctxlab), "fork", str(source), "--before", str(case.before), "--summary", case.summary, "--json"]
    if case.summary_text:
        cmd += ["--summary-text", case.summary_text]
    result = subprocess.run(cmd, capture_output=True, text=True, env=fork_env(agent, home), timeout=120)
    if result.returncode != 0:
        raise HarnessError(f"{agent} fork {case.label}: `ctxlab fork` exited {result.returncode}: {result.stderr.strip()[-500:]}")
    return json.loads(result.stdout)


def resume(agent: str, bins, run_root: Path, home: Path, url: str, fork: dict, prompt: str, log: Path):
    if agent == "claude":
        env = agents.claude_env(home, url)
        cmd = agents.claude_command(bins, "--resume", fork["session_id"], "-p", prompt)
    else:
        env = agents.codex_env(home)
        cmd = [str(bins["codex"]), "exec", "--skip-git-repo-check", "--dangerously-bypass-approvals-and-sandbox", "--json", "resume", fork["session_id"], prompt]
    agents.run_agent(cmd, run_root / "project", env, log)


def write_codex_fork_config(home: Path, url: str):
    agents.write_codex_config(home, url)
    path = home / ".codex" / "config.toml"
    text = path.read_text().replace(f"model_auto_compact_token_limit = {agents.CODEX_AUTO_COMPACT_TOKENS}", f"model_auto_compact_token_limit = {NO_COMPACT_LIMIT}")
    path.write_text(text)


def original_session(agent: str, home: Path) -> Path:
    if agent == "claude":
        found = sorted((home / ".claude" / "projects").glob("*/*.jsonl"))
    else:
        found = sorted((home / ".codex" / "sessions").glob("*/*/*/rollout-*.jsonl"))
    if len(found) != 1:
        raise HarnessError(f"{agent} fork: expected one session in {home}, found {len(found)}")
    return found[0]


def run_forks(agent: str, root: Path, ctxlab: Path, bins) -> list:
    fork_root = root / "fork"
    if fork_root.exists():
        shutil.rmtree(fork_root)
    logs = fork_root / "logs"
    logs.mkdir(parents=True)
    home = fork_root / "home"
    shutil.copytree(root / "home", home, symlinks=True)
    source = original_session(agent, home)
    summary_file = fork_root / "summary.md"
    summary_file.write_text("FORK-FILE-SUMMARY: the scripted steps ran; keep notes.txt unchanged.\n")
    summary_file2 = fork_root / "summary2.md"
    summary_file2.write_text("FORK-FILE2-SUMMARY: a second summary, for the fork of the fork.\n")
    cases = claude_cases(summary_file, summary_file2) if agent == "claude" else codex_cases(summary_file)
    upstream_log = logs / "upstream.jsonl"
    port_file = logs / "upstream.port"
    server = Service("fork-upstream", [sys.executable, str(HERE / "scripted_upstream.py"), "--log", str(upstream_log), "--port-file", str(port_file)], logs)
    try:
        server.wait_for_stderr("scripted upstream on")
        url = f"http://127.0.0.1:{port_file.read_text().strip()}"
        if agent == "codex":
            write_codex_fork_config(home, url)
        for case in cases:
            src = Path(case.source.fork["path"]) if case.source else source
            before_bytes = src.read_bytes()
            case.fork = make_fork(ctxlab, agent, home, src, case)
            # The original is only read; the fork is its owner's alone.
            case.untouched = src.read_bytes() == before_bytes
            case.mode = Path(case.fork["path"]).stat().st_mode & 0o777
            case.inspect = inspect_fork(ctxlab, Path(case.fork["path"]))
            case.against = forgot_against(ctxlab, src, Path(case.fork["path"]), case.before)
            before = len(read_log(upstream_log))
            resume(agent, bins, root, home, url, case.fork, case.prompt, logs / f"{agent}-{case.label}.log")
            case.requests = read_log(upstream_log)[before:]
    finally:
        server.stop()
    original = read_log(root / "logs" / "upstream.jsonl")
    known_gaps = set((inspect_fork(ctxlab, source).get("skipped") or {}).keys())
    return check_forks(agent, original, cases, logs, known_gaps)


def forgot_against(ctxlab: Path, original: Path, fork: Path, before: int) -> dict:
    """`ctxlab forgot ORIGINAL --against FORK`, before the agent adds anything to the fork."""
    cmd = [str(ctxlab), "forgot", str(original), "--against", str(fork), "--compaction", str(before), "--json"]
    result = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    if result.returncode != 0:
        return {"error": result.stderr.strip()[-300:]}
    return json.loads(result.stdout)


def inspect_fork(ctxlab: Path, path: Path) -> dict:
    result = subprocess.run([str(ctxlab), "inspect", "--json", str(path)], capture_output=True, text=True, timeout=120)
    if result.returncode != 0:
        return {"error": result.stderr.strip()[-300:]}
    return json.loads(result.stdout)


# -- checking ------------------------------------------------------------------------------

def keys(items) -> set:
    return {(kind, value) for role, kind, value in items if kind != "text" or role == "user"}


def check_forks(agent: str, original: list, cases: list, logs: Path, known_gaps: set) -> list:
    """`known_gaps`: the line types ctxlab skips in the original itself (the readers' own
    check reports those); a fork must add none."""
    failures = []
    summaries = [r for r in original if r.get("kind") == "summary"]
    print(f"\n{agent}: forks resumed by the agent (first request after resuming)")
    print(f"  {'fork':<16} {'--before':>8} {'--summary':<12} {'items':>5} {'lost facts in fork':>18}  result")
    for case in cases:
        where = f"{agent} fork {case.label}"
        problems = []
        if not case.untouched:
            problems.append("ctxlab fork changed the file it forked")
        if case.mode != 0o600:
            problems.append(f"the fork's mode is {case.mode:o}, not 600")
        if "error" in case.inspect:
            problems.append(f"ctxlab inspect failed: {case.inspect['error']}")
        else:
            new = sorted(k for k in (case.inspect.get("skipped") or {}) if k not in known_gaps)
            if new:
                problems.append(f"ctxlab inspect skips lines the original does not have: {new}")
        if not case.requests:
            failures.append(f"{where}: the agent sent no request")
            continue
        if case.before > len(summaries):
            failures.append(f"{where}: the original has no summary request {case.before}")
            continue
        first = conversation(case.requests[0]["body"])
        reference = conversation(summaries[case.before - 1]["body"])[:-1]
        # What the original said after the fork point: every request after that summary.
        later = set()
        for r in original[original.index(summaries[case.before - 1]) + 1:]:
            later |= keys(conversation(r["body"]))
        forbidden = later - keys(reference)
        if case.source is not None:
            # The forked fork's own turn and summary come after this fork's point too.
            for r in case.source.requests:
                forbidden |= keys(conversation(r["body"])) - keys(reference)
        if not first or first[-1] != ("user", "text", case.prompt):
            problems.append(f"the last message is not the prompt {case.prompt!r}: {render(first[-1:])}")
        leaked = [k for k in keys(first[:-1]) if k in forbidden]
        if leaked:
            shown = [f"{kind} {str(value)[:60]!r}" for kind, value in sorted(leaked)[:3]]
            problems.append(f"holds {len(leaked)} item(s) from after the fork point: {shown}")
        texts = "\n".join(str(v) for _, kind, v in first if kind == "text")
        if case.exact:
            if first[:len(reference)] != reference:
                problems.append("does not start with the original's history before the compaction")
            rest = first[len(reference):-1]
            if any(role != "assistant" or kind != "text" for role, kind, _ in rest):
                problems.append(f"holds more than the history and the prompt: {render(rest)[:3]}")
            expected_compactions = case.before - 1
        else:
            if case.marker not in texts:
                problems.append(f"the summary {case.marker!r} is not in the request")
            calls_before = {v for _, kind, v in reference if kind == "call"}
            stray = [v for _, kind, v in first if kind == "call" and v not in calls_before]
            if stray:
                problems.append(f"tool calls the original did not make before the fork point: {stray[:3]}")
            if case.summary not in ("s08", "s08-latest", "s06", "guarded") and any(kind == "call" for _, kind, _ in first):
                problems.append("a summary FILE stands in for every tool call, but the request holds some")
            expected_compactions = 1
        if "error" in case.against:
            problems.append(f"ctxlab forgot --against failed: {case.against['error']}")
        elif case.exact:
            # The whole history is back: every fact the summary lost is in the fork.
            for c in case.against.get("compactions") or []:
                if c["carried_by_fork"] != c["lost"]:
                    problems.append(f"forgot --against: the fork carries {c['carried_by_fork']} of {c['lost']} lost facts, expected all")
        if "compactions" in case.inspect and len(case.inspect["compactions"]) != expected_compactions:
            problems.append(f"ctxlab inspect finds {len(case.inspect['compactions'])} compactions in the fork, expected {expected_compactions}")
        (logs / f"{case.label}.side-by-side.txt").write_text(
            side_by_side(f"original: summary request {case.before}", request_items(summaries[case.before - 1]["body"]),
                         f"fork {case.label}: first request after resuming", request_items(case.requests[0]["body"])))
        mark = "ok" if not problems else "FAILED: " + "; ".join(problems)
        carried = ", ".join(f"{c['carried_by_fork']}/{c['lost']}" for c in case.against.get("compactions") or [])
        print(f"  {case.label:<16} {case.before:>8} {Path(case.summary).name:<12} {len(first):>5} {carried:>18}  {mark}")
        failures += [f"{where}: {p}" for p in problems]
    return failures

#!/usr/bin/env python3
"""The real-agent harness: the real Claude Code and Codex CLIs, offline, as ctxlab's oracle.

For each agent it starts the scripted server (`scripted_upstream.py`) and `ctxlab proxy` in
front of it, drives the CLI through turns that call tools, persist a large output and
compact (Claude Code with `/compact`, Codex by itself when the reported usage passes its
limit), with `ctxlab watch --json` following the session file, and runs Claude Code once
interactively in a pseudo-terminal with `ctxlab statusline` as its status line. Then
`checks.py` compares every number ctxlab shows about the run (inspect, sessions, forgot,
export, watch, the capture, the status line) with the agent's own record and the server's.

It fails loudly: a missing npm, an install that fails, an agent that errs or hangs, or any
number that disagrees exits non-zero with the reason. It never skips. docs/real-agents.md
says what each number is checked against.

    python3 scripts/real_agents/harness.py [--ctxlab target/debug/ctxlab] [--work DIR] [--keep]
"""

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import agents  # noqa: E402
import checks  # noqa: E402
import forks  # noqa: E402
from agents import HarnessError, Service  # noqa: E402
from pty_session import run_interactive  # noqa: E402

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
# Tokens the server adds to its reported usage per tool result: makes Codex cross its
# auto-compact limit on the second turn without megabytes of traffic.
USAGE_BONUS = 4000


class Run:
    """One agent's run: its folders, the server and proxy in front of it, and what it wrote."""

    def __init__(self, name: str, root: Path, ctxlab: Path):
        self.name = name
        self.root = root / name
        self.home = self.root / "home"
        self.project = self.root / "project"
        self.logs = self.root / "logs"
        for d in (self.home, self.project, self.logs):
            d.mkdir(parents=True, exist_ok=True)
        (self.project / "notes.txt").write_text("Keep this file unchanged.\n")
        self.ctxlab = ctxlab
        self.capture = self.root / "capture.jsonl"
        self.upstream_log = self.logs / "upstream.jsonl"
        self.services = []
        self.session = None
        self.watch = None
        self.status_dir = self.logs / "statusline"

    def start(self):
        port_file = self.logs / "upstream.port"
        server = Service(
            "upstream",
            [sys.executable, str(HERE / "scripted_upstream.py"), "--log", str(self.upstream_log), "--port-file", str(port_file), "--usage-bonus", str(USAGE_BONUS)],
            self.logs,
        )
        self.services.append(server)
        server.wait_for_stderr("scripted upstream on")
        up_port = port_file.read_text().strip()
        proxy = Service(
            "proxy",
            [str(self.ctxlab), "proxy", "--listen", "127.0.0.1:0", "--upstream", f"http://127.0.0.1:{up_port}", "--capture", str(self.capture)],
            self.logs,
            env=dict(os.environ, CTXLAB_DATA_DIR=str(self.root / "ctxlab-data")),
        )
        self.services.append(proxy)
        text = proxy.wait_for_stderr("listening on http://127.0.0.1:")
        port = text.split("listening on http://127.0.0.1:")[1].split(",")[0].split()[0]
        self.proxy_url = f"http://127.0.0.1:{port}"

    def follow(self, session: Path):
        """`ctxlab watch --json` on the session from its start, kept running while the agent writes."""
        self.session = session
        self.watch = Service(
            "watch",
            [str(self.ctxlab), "watch", "--json", "--from-start", "--no-notify", "--no-bell", "--poll-ms", "100", str(session)],
            self.logs,
            # The agent's own HOME: watch reads its settings (Codex's config.toml) from there.
            env=dict(os.environ, CTXLAB_DATA_DIR=str(self.root / "ctxlab-data"), HOME=str(self.home), CODEX_HOME=str(self.home / ".codex")),
            stdout_path=self.logs / "watch.jsonl",
        )
        self.services.append(self.watch)
        self.watch.wait_for_stderr("following")

    def stop(self):
        # watch catches up with the file's end before it stops (it polls every 100 ms).
        time.sleep(1.0)
        for service in reversed(self.services):
            service.stop()

    def upstream_requests(self):
        if not self.upstream_log.exists():
            return []
        return [json.loads(line) for line in self.upstream_log.read_text().splitlines() if line.strip()]


def newest(pattern_root: Path, pattern: str) -> Path:
    found = sorted(pattern_root.glob(pattern), key=lambda p: p.stat().st_mtime)
    if not found:
        raise HarnessError(f"no file {pattern} under {pattern_root}")
    return found[-1]


def drive_claude(run: Run, bins):
    env = agents.claude_env(run.home, run.proxy_url)
    log = run.logs / "claude.log"
    agents.run_agent(agents.claude_command(bins, "-p", "Run the scripted steps"), run.project, env, log)
    session = newest(run.home / ".claude" / "projects", "*/*.jsonl")
    run.follow(session)
    agents.run_agent(agents.claude_command(bins, "-c", "-p", "Run them again"), run.project, env, log)
    agents.run_agent(agents.claude_command(bins, "-c", "-p", "/compact keep notes.txt unchanged"), run.project, env, log)
    agents.run_agent(agents.claude_command(bins, "-c", "-p", "And once more"), run.project, env, log)
    drive_claude_interactive(run, bins, env)


def drive_claude_interactive(run: Run, bins, env):
    """One more turn, interactive, with `ctxlab statusline` behind a recorder as the status line."""
    run.status_dir.mkdir(parents=True, exist_ok=True)
    recorder = run.logs / "statusline.sh"
    # Each call keeps Claude Code's JSON and ctxlab's line side by side (numbered by time).
    recorder.write_text(
        "#!/bin/sh\n"
        f'd="{run.status_dir}"; n=$(date +%s%N)\n'
        'cat > "$d/$n.in.json"\n'
        f'"{run.ctxlab}" statusline < "$d/$n.in.json" > "$d/$n.out.txt" 2> "$d/$n.err.txt"\n'
        'cat "$d/$n.out.txt"\n'
    )
    recorder.chmod(0o755)
    agents.write_claude_interactive_settings(run.home, run.project, str(recorder))
    answers_before = sum(1 for r in run.upstream_requests() if r["kind"] == "answer")

    def done():
        answers = [r for r in run.upstream_requests() if r["kind"] == "answer"]
        if len(answers) <= answers_before:
            return False
        answered_at = answers[-1]["time"]
        # The status line runs again once the answer is drawn; wait for one run after it.
        outs = [p for p in run.status_dir.glob("*.out.txt") if p.stat().st_mtime > answered_at + 0.2]
        return bool(outs)

    # --resume with the id: interactive --continue does not offer sessions made with -p.
    cmd = agents.claude_command(bins, "--resume", run.session.stem)
    try:
        run_interactive(cmd, run.project, env, run.logs / "claude-interactive.log", "Run the scripted steps interactively", done)
    except TimeoutError as e:
        raise HarnessError(f"{e} (terminal output: {run.logs / 'claude-interactive.log'})") from e


def drive_codex(run: Run, bins):
    agents.write_codex_config(run.home, run.proxy_url)
    env = agents.codex_env(run.home)
    log = run.logs / "codex.log"
    agents.run_agent(agents.codex_command(bins, "Run the scripted steps"), run.project, env, log)
    session = newest(run.home / ".codex" / "sessions", "*/*/*/rollout-*.jsonl")
    run.follow(session)
    agents.run_agent(agents.codex_command(bins, "Run them again", resume=True), run.project, env, log)
    agents.run_agent(agents.codex_command(bins, "And once more", resume=True), run.project, env, log)


def drive_codex_websocket(run: Run, bins):
    """Codex with its built-in OpenAI provider: the Responses WebSocket transport, the
    context carried by `previous_response_id`, and the server's own compaction (a
    `compaction_trigger` item answered by a `compaction` item)."""
    agents.write_codex_openai_config(run.home, run.proxy_url)
    env = agents.codex_openai_env(run.home)
    log = run.logs / "codex.log"
    agents.run_agent(agents.codex_command(bins, "Run the scripted steps"), run.project, env, log)
    session = newest(run.home / ".codex" / "sessions", "*/*/*/rollout-*.jsonl")
    run.follow(session)
    agents.run_agent(agents.codex_command(bins, "Run them again", resume=True), run.project, env, log)
    agents.run_agent(agents.codex_command(bins, "And once more", resume=True), run.project, env, log)
    over_http = [r for r in run.upstream_requests() if r["kind"] in checks.MAIN_KINDS and r.get("transport") != "websocket"]
    if over_http:
        raise HarnessError(f"codex-ws: {len(over_http)} calls came over HTTP, not the WebSocket (log: {run.upstream_log})")


DRIVERS = {"claude": drive_claude, "codex": drive_codex, "codex-ws": drive_codex_websocket}


def find_ctxlab(arg):
    path = Path(arg) if arg else REPO / "target" / "debug" / "ctxlab"
    if not path.exists():
        raise HarnessError(f"{path} does not exist: build it first (cargo build)")
    return path.resolve()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ctxlab", help="the ctxlab binary (default: target/debug/ctxlab)")
    parser.add_argument("--work", help="the run's folder (default: a new temporary one)")
    parser.add_argument("--keep", action="store_true", help="keep the work folder (kept anyway on failure)")
    parser.add_argument("--only", choices=list(DRIVERS), help="one agent only (codex-ws: Codex over its WebSocket transport)")
    parser.add_argument("--check-only", action="store_true", help="check an earlier --work folder again without running the agents")
    args = parser.parse_args()
    started = time.time()
    work = Path(args.work) if args.work else Path(tempfile.mkdtemp(prefix="ctxlab-real-agents-"))
    ok = False
    try:
        ctxlab = find_ctxlab(args.ctxlab)
        names = [args.only] if args.only else list(DRIVERS)
        fork_failures = []
        if not args.check_only:
            bins = agents.install(agents.default_cache())
            print(f"real agents: Claude Code {agents.CLAUDE_VERSION}, Codex {agents.CODEX_VERSION} ({time.time() - started:.0f} s to install or find)", flush=True)
            for name in names:
                if (work / name).exists():
                    shutil.rmtree(work / name)
                run = Run(name, work, ctxlab)
                run.start()
                try:
                    DRIVERS[name](run, bins)
                finally:
                    run.stop()
                print(f"{name}: driven in {time.time() - started:.0f} s", flush=True)
                if name == "codex-ws":
                    # The forks are the HTTP runs' (a fork's resume is the same either way).
                    continue
                # After the run: ctxlab fork on it, each fork resumed by the agent (forks.py).
                fork_failures += forks.run_forks(name, work / name, ctxlab, bins)
                print(f"{name}: forks resumed in {time.time() - started:.0f} s", flush=True)
        failures = list(fork_failures)
        for name in names:
            failures += checks.check_run(name, work / name, ctxlab)
        if failures:
            print(f"\nreal agents: {len(failures)} disagreement(s):", file=sys.stderr)
            for failure in failures:
                print(f"  - {failure}", file=sys.stderr)
            return 1
        ok = True
        print(f"real agents: every number agrees ({time.time() - started:.0f} s)")
        return 0
    except HarnessError as e:
        print(f"real agents: FAILED: {e}", file=sys.stderr)
        return 1
    finally:
        if ok and not args.keep and not args.work:
            shutil.rmtree(work, ignore_errors=True)
        else:
            print(f"real agents: the run's files are in {work}", file=sys.stderr)


if __name__ == "__main__":
    sys.exit(main())

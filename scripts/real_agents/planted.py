#!/usr/bin/env python3
"""Runs the real Claude Code through the 'planted facts' script of the scripted server and
keeps the session file: the source of the labelled evaluation of `ctxlab forgot`
(docs/forgot.md; the fixture in tests/fixtures/forgot_eval/ is cut from its output).

    python3 scripts/real_agents/planted.py --work /tmp/planted

Turns: the task ("Do the task in TASK.md ..."), `/compact`, then a turn after it in which
the user restates an instruction. Offline: the server listens on 127.0.0.1 only.
"""

import argparse
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import agents  # noqa: E402

TASK = """# Task: keep the tree view's expansion state

Keep expansion state server-authoritative.
The cache must not reset on page reload.
Do not edit vendor/.

## Definition of Done
- `make test` passes with the new cache tests
- README.md documents the cache

## From the design review
We chose SQLite over Redis for the cache store.
"""

COMPILER = '''class CompileError(Exception):
    pass


def compile(src):
    if not src:
        raise CompileError("empty source")
    return src
'''

FILES = {
    "TASK.md": TASK,
    "vendor/lib/compiler.py": COMPILER,
    "tools/fake_pull.sh": "echo 'Updating 1a2b3c4..5d6e7f8'\necho ' src/app.py      | 4 ++--'\necho ' DateTime.diff   | 2 +-'\necho ' 2 files changed, 3 insertions(+), 3 deletions(-)'\n",
    "tools/check.py": "import sys\nprint('error: config/settings/production.local.yaml: missing key retention_days')\nsys.exit(1)\n",
    "tools/lint.sh": "echo 'src/app.py:12:80: E501 line too long (96 > 79 characters)'\nexit 1\n",
    "logs/app.log": "2026-01-01 INFO request done, error: none\n2026-01-01 INFO took 5% of 24 hours\n",
    "src/app.py": "print('app')\n",
}


# The first turn: an instruction and a decision the user typed.
PROMPT = "Do the task in TASK.md. Never push to main; use a feature branch. We decided to key the cache by node id, not by path."


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--work", required=True)
    parser.add_argument(
        "--plan",
        action="store_true",
        help="offer each agent its plan tool (Claude Code's TodoWrite, Codex's update_plan): the script then sets a pending plan",
    )
    args = parser.parse_args()
    work = Path(args.work).resolve()
    project, home = work / "proj", work / "home"
    for rel, text in FILES.items():
        (project / rel).parent.mkdir(parents=True, exist_ok=True)
        (project / rel).write_text(text)
    home.mkdir(parents=True, exist_ok=True)
    bins = agents.install(agents.default_cache())
    port_file = work / "port"
    port_file.unlink(missing_ok=True)
    server = subprocess.Popen(
        [sys.executable, str(HERE / "scripted_upstream.py"), "--log", str(work / "upstream.jsonl"), "--port-file", str(port_file), "--script", "planted"],
        stdin=subprocess.DEVNULL,
    )
    try:
        for _ in range(100):
            if port_file.exists():
                break
            time.sleep(0.1)
        env = agents.claude_env(home, f"http://127.0.0.1:{port_file.read_text()}")
        allowed = "Bash Write"
        if args.plan:
            # 2.1.332 offers TaskCreate/TaskUpdate by default; TodoWrite (deferred) without them.
            env["CLAUDE_CODE_ENABLE_TASKS"] = "false"
            allowed += " TodoWrite ToolSearch"
        log = work / "claude.log"
        cmd = [str(bins["claude"]), "--model", agents.CLAUDE_MODEL, "--allowedTools", allowed]
        agents.run_agent(cmd + ["-p", PROMPT], project, env, log)
        agents.run_agent(cmd + ["-c", "-p", "/compact"], project, env, log)
        agents.run_agent(cmd + ["-c", "-p", "Remember: the cache must not reset on page reload."], project, env, log)
        # Codex, in a project of its own: the same script through its shell tool.
        codex_project = work / "codex-proj"
        for rel, text in FILES.items():
            (codex_project / rel).parent.mkdir(parents=True, exist_ok=True)
            (codex_project / rel).write_text(text)
        agents.write_codex_config(home, f"http://127.0.0.1:{port_file.read_text()}")
        if args.plan:
            with open(home / ".codex" / "config.toml", "a") as config:
                config.write("[tools.update_plan]\nenabled = true\n")
        codex_env = agents.codex_env(home)
        codex_log = work / "codex.log"
        agents.run_agent(agents.codex_command(bins, PROMPT), codex_project, codex_env, codex_log)
        agents.run_agent(agents.codex_command(bins, "Remember: the cache must not reset on page reload.", resume=True), codex_project, codex_env, codex_log)
    finally:
        server.terminate()
        server.wait()
    for pattern_root, pattern in [(home / ".claude" / "projects", "*/*.jsonl"), (home / ".codex" / "sessions", "*/*/*/rollout-*.jsonl")]:
        sessions = sorted(pattern_root.glob(pattern), key=lambda p: p.stat().st_mtime)
        print(sessions[-1] if sessions else f"no session file under {pattern_root}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Crash soak: the scripted tour, headless, killed with SIGKILL at random moments.

Runs `ctxlab run --provider scripted --pace-ms 0` RUNS times (default 200) in ONE workspace
and kills each run with kill -9 after a random delay within the length of a whole run. Then
runs the tour once more to the end (the "next start") and checks:

  * no torn final file: every persisted tool output is byte-identical to the one a clean
    reference run wrote under the same name (and no `-2`, `-3` twin appeared, which is what
    a torn file would cause: the next run would find different text under the name); every
    transcript is whole (each line a JSON message, ending in a newline); the files the tour
    writes in the workspace are whole (NOTES.md as the reference run wrote it, src/parser.rs
    before or after the tour's edit, tests/parser_tests.rs starting and ending like the
    original, whatever number of tests the finished runs inserted in between);
  * no stale temp file (`*.ctxlab-tmp-*`, or the old `.tmp-XXXXXX`) anywhere in the
    workspace after the next start.

It also counts the temp files found right after a kill (before the next start removed them),
to show that kills did land inside writes.

Usage: scripts/soak.py [--runs N] [--binary PATH] [--seed S]
(default binary: target/release/ctxlab if present, else target/debug/ctxlab). Exit code 0
when every check passed. Nothing is written outside a fresh temp folder.
"""

import argparse
import json
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
TEMP_RE = re.compile(r"(\.ctxlab-tmp-\d+-\d+$)|(^\.tmp-[A-Za-z0-9]{6}$)")
SKIP = {".git", "target"}


def default_binary() -> Path:
    for profile in ("release", "debug"):
        p = REPO / "target" / profile / "ctxlab"
        if p.exists():
            return p
    sys.exit("build ctxlab first (cargo build --release)")


def env_for(home: Path) -> dict:
    env = {k: v for k, v in os.environ.items()
           if k not in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "OPENAI_BASE_URL", "MODEL_ID")}
    env.update(HOME=str(home), XDG_CONFIG_HOME=str(home / "config"),
               XDG_DATA_HOME=str(home / "data"))
    return env


def command(binary: Path, ws: Path) -> list:
    return [str(binary), "run", "--provider", "scripted", "--pace-ms", "0",
            "--workspace", str(ws)]


def run_to_end(binary: Path, ws: Path, env: dict, cwd: Path) -> float:
    start = time.monotonic()
    out = subprocess.run(command(binary, ws), env=env, cwd=cwd, capture_output=True, text=True,
                         timeout=300)
    if out.returncode != 0 or not out.stdout.rstrip().endswith("[done] end_turn"):
        sys.exit(f"a clean run failed (code {out.returncode}):\n{out.stderr}\n{out.stdout[-2000:]}")
    return time.monotonic() - start


def temp_files(ws: Path) -> list:
    found = []
    for dirpath, dirnames, filenames in os.walk(ws):
        dirnames[:] = [d for d in dirnames if d not in SKIP]
        found += [os.path.join(dirpath, f) for f in filenames if TEMP_RE.search(f)]
    return found


def check_transcript(path: Path) -> str | None:
    data = path.read_bytes()
    if not data.endswith(b"\n"):
        return f"{path.name}: does not end with a newline"
    for i, line in enumerate(data.decode("utf-8").splitlines(), 1):
        try:
            m = json.loads(line)
        except json.JSONDecodeError as e:
            return f"{path.name}: line {i} is not JSON ({e})"
        if not isinstance(m, dict) or "role" not in m or "content" not in m:
            return f"{path.name}: line {i} is not a message"
    return None


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--runs", type=int, default=200)
    ap.add_argument("--binary", type=Path, default=None)
    ap.add_argument("--seed", type=int, default=None)
    args = ap.parse_args()
    binary = (args.binary or default_binary()).resolve()
    seed = args.seed if args.seed is not None else random.randrange(1 << 30)
    rng = random.Random(seed)
    root = Path(tempfile.mkdtemp(prefix="ctxlab-soak-"))
    home, ref, ws = root / "home", root / "reference", root / "ws"
    home.mkdir()
    env = env_for(home)

    # A clean reference run, and the soak workspace set up by one complete run.
    durations = [run_to_end(binary, ref, env, root)]
    durations.append(run_to_end(binary, ws, env, root))
    durations.append(run_to_end(binary, ws, env, root))
    span = max(durations)
    original_tests = (REPO / "assets/demo/tests/parser_tests.rs").read_bytes()
    original_parser = (REPO / "assets/demo/src/parser.rs").read_bytes()
    print(f"binary {binary}\nseed {seed}; a whole run takes {span:.2f} s; killing within that")

    kills = temps_after_kill = 0
    exits_before_kill = 0
    for i in range(args.runs):
        proc = subprocess.Popen(command(binary, ws), env=env, cwd=root,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(rng.uniform(0, span))
        if proc.poll() is None:
            proc.send_signal(signal.SIGKILL)
            kills += 1
        else:
            exits_before_kill += 1
        proc.wait()
        # Tool processes of a killed run die with it or finish on their own; give them a
        # moment so the next run does not race a leftover `sed`.
        time.sleep(0.05)
        temps_after_kill += len(temp_files(ws))
        if (i + 1) % 50 == 0:
            print(f"  {i + 1} runs")

    # The next start, to the end.
    run_to_end(binary, ws, env, root)

    problems = []
    stale = temp_files(ws)
    problems += [f"stale temp file after the next start: {p}" for p in stale]
    ref_results = ref / ".task_outputs/tool-results"
    got_results = ws / ".task_outputs/tool-results"
    for f in sorted(got_results.iterdir()):
        want = ref_results / f.name
        if not want.exists():
            problems.append(f"tool output {f.name}: no such output in the reference run (a torn twin?)")
        elif f.read_bytes() != want.read_bytes():
            problems.append(f"tool output {f.name}: differs from the reference (torn)")
    transcripts = sorted((ws / ".transcripts").iterdir())
    for t in transcripts:
        if (p := check_transcript(t)) is not None:
            problems.append(f"transcript {p}")
    if (ws / "NOTES.md").read_bytes() != (ref / "NOTES.md").read_bytes():
        problems.append("NOTES.md differs from the reference (torn)")
    parser = (ws / "src/parser.rs").read_bytes()
    if parser not in (original_parser, (ref / "src/parser.rs").read_bytes()):
        problems.append("src/parser.rs is neither the original nor the edited file (torn)")
    # Each finished tour inserts one test before this one: the file keeps its head and tail.
    anchor = original_tests.index(b"#[test]\nfn unterminated_quote_is_an_error")
    tests = (ws / "tests/parser_tests.rs").read_bytes()
    if not (tests.startswith(original_tests[:anchor]) and tests.endswith(original_tests[anchor:])):
        problems.append("tests/parser_tests.rs lost its head or its end (torn)")

    print(f"runs: {args.runs}; killed mid-run: {kills}; finished before the kill: {exits_before_kill}")
    print(f"temp files found right after kills (removed by the next start): {temps_after_kill}")
    print(f"persisted outputs: {len(list(got_results.iterdir()))}; transcripts: {len(transcripts)}")
    if problems:
        print("FAILED:")
        for p in problems:
            print("  " + p)
        print(f"(workspace kept in {root})")
        return 1
    print("OK: no torn final file, no stale temp file after the next start")
    shutil.rmtree(root, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

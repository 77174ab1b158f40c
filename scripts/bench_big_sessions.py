#!/usr/bin/env python3
"""Time and peak memory of each command that reads a session, on big generated sessions
(issue 36; not used by CI). Prints one Markdown table row per command and file.

Usage: scripts/bench_big_sessions.py [--bin target/release/ctxlab] [--only inspect,forgot]
                                     FILE...

Make the files with the generators (each repeats what the real agents write):
  scripts/gen_codex_session.py --template tests/fixtures/sessions/codex_0171.jsonl \\
      --mb 1024 --out /tmp/codex-1g.jsonl
  scripts/gen_claude_session.py --mb 1024 --out /tmp/claude-1g.jsonl

Each command runs once under /usr/bin/time -v (its wall time, its CPU time, user and
system, which says more on a busy machine, and its peak resident memory);
`watch --json` runs until it prints its first summary (the time to that line, and the
peak resident memory then, VmHWM); `statusline` gets Claude Code's status JSON naming the
file as its transcript, with an empty data dir (a first run: the whole index is built).
`open` is measured by scripts/measure_open.py (a terminal).
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time

COMMANDS = {
    "inspect": ["inspect", "{f}"],
    "inspect-calls": ["inspect", "{f}", "--calls"],
    "inspect-calls-json": ["inspect", "{f}", "--calls", "--json"],
    "inspect-requests": ["inspect", "{f}", "--requests"],
    "sessions": ["sessions", "{f}"],
    "forgot": ["forgot", "{f}"],
    "forgot-json": ["forgot", "{f}", "--json"],
    "replay": ["replay", "{f}", "--workspace", "{tmp}/ws", "--summary-text", "s"],
    "export": ["export", "{f}", "--out", "{tmp}/out.html", "--summary-text", "s"],
}


def timed(argv, env, stdin=None):
    """Wall seconds, CPU seconds, peak RSS in MB and exit code of one run."""
    with tempfile.NamedTemporaryFile("w+") as log:
        start = time.monotonic()
        p = subprocess.run(["/usr/bin/time", "-v", "-o", log.name] + argv, env=env,
                           input=stdin, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                           text=True)
        wall = time.monotonic() - start
        text = open(log.name).read()
    rss = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", text).group(1))
    cpu = sum(float(re.search(r"%s time \(seconds\): ([\d.]+)" % k, text).group(1))
              for k in ("User", "System"))
    return wall, cpu, rss / 1024, p.returncode


def watch_first(binary, path, env):
    """Seconds to `watch --json`'s first summary, the CPU seconds and the peak RSS then
    (MB)."""
    start = time.monotonic()
    p = subprocess.Popen([binary, "watch", path, "--json", "--no-notify"], env=env,
                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    line = p.stdout.readline()
    wall = time.monotonic() - start
    with open("/proc/%d/status" % p.pid) as f:
        hwm = int(re.search(r"VmHWM:\s+(\d+)", f.read()).group(1))
    with open("/proc/%d/stat" % p.pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    cpu = (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    p.kill()
    p.wait()
    return wall, cpu, hwm / 1024, 0 if line else 1


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default="target/release/ctxlab")
    ap.add_argument("--only", default="")
    ap.add_argument("files", nargs="+")
    args = ap.parse_args()
    only = set(filter(None, args.only.split(",")))
    print("| file | MB | command | wall | CPU | peak memory | exit |")
    print("|---|---|---|---|---|---|---|")
    for f in args.files:
        mb = os.path.getsize(f) / 1e6
        with tempfile.TemporaryDirectory() as tmp:
            env = dict(os.environ, HOME=tmp, CTXLAB_DATA_DIR=os.path.join(tmp, "data"),
                       CTXLAB_MAX_SESSION_BYTES=str(8 << 30))
            runs = []
            for name, argv in COMMANDS.items():
                if only and name not in only:
                    continue
                argv = [a.format(f=f, tmp=tmp) for a in argv]
                runs.append((name, lambda argv=argv: timed([args.bin] + argv, env)))
            if not only or "watch" in only:
                runs.append(("watch (first summary)", lambda: watch_first(args.bin, f, env)))
            if not only or "statusline" in only:
                status = json.dumps({"transcript_path": os.path.abspath(f),
                                     "model": {"id": "claude-sonnet-4-6"}})
                runs.append(("statusline (first run)",
                             lambda: timed([args.bin, "statusline"], env, status)))
            for name, run in runs:
                wall, cpu, rss, code = run()
                print("| %s | %.0f | %s | %.1f s | %.1f s | %.0f MB | %d |"
                      % (os.path.basename(f), mb, name, wall, cpu, rss, code), flush=True)


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Latency from a session line written to its row on the workbench's live view.

Usage: scripts/measure_live_latency.py [BINARY] [LINES]
Starts `BINARY watch FILE` (default target/debug/ctxlab) in a fresh 140x40 pty with a temp
HOME, on a Claude Code session file it then appends LINES (default 200) user messages to,
one at a time. Each message carries a marker; the clock for a line stops when the marker's
bytes reach the terminal. Consecutive markers use disjoint letters, so the screen diff
rewrites every cell of a row whose content moved (a marker is never drawn in pieces).
Prints p50, p95 and the worst, in milliseconds.
"""
import fcntl
import json
import os
import pty
import random
import select
import struct
import sys
import tempfile
import termios
import time

binary = sys.argv[1] if len(sys.argv) > 1 else "target/debug/ctxlab"
lines = int(sys.argv[2]) if len(sys.argv) > 2 else 200

home = tempfile.mkdtemp()
session = os.path.join(home, "s1.jsonl")


def user_line(n, text):
    return json.dumps({"type": "user", "sessionId": "s1", "uuid": "u%d" % n, "cwd": "/p",
                       "timestamp": "2025-10-01T10:00:00Z",
                       "message": {"role": "user", "content": text}}) + "\n"


with open(session, "w") as f:
    f.write(user_line(0, "start"))

env = {k: v for k, v in os.environ.items()
       if k not in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "OPENAI_BASE_URL")}
env.update(TERM="xterm-256color", HOME=home, XDG_DATA_HOME=home + "/data",
           XDG_CONFIG_HOME=home + "/config")
pid, fd = pty.fork()
if pid == 0:
    os.execve(binary, [binary, "watch", session, "--no-bell"], env)
fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 140, 0, 0))

seen = bytearray()


def pump(timeout):
    """Reads what the program wrote within `timeout` s, answering terminal queries."""
    r, _, _ = select.select([fd], [], [], timeout)
    if not r:
        return
    try:
        chunk = os.read(fd, 65536)
    except OSError:
        return
    if b"\x1b[6n" in chunk:
        os.write(fd, b"\x1b[1;1R")
    if b"\x1b[c" in chunk:
        os.write(fd, b"\x1b[?62c")
    seen.extend(chunk)


def wait_for(needle, limit):
    deadline = time.perf_counter() + limit
    while needle not in seen:
        if time.perf_counter() > deadline:
            return None
        pump(0.002)
    return time.perf_counter()


if wait_for(b"start", 20) is None:
    sys.exit("the live view never showed the session")
time.sleep(0.5)
halves = ("abcdefghijklm", "nopqrstuvwxyz")
latencies = []
for n in range(1, lines + 1):
    marker = "".join(random.choice(halves[n % 2]) for _ in range(16))
    seen.clear()
    with open(session, "a") as f:
        f.write(user_line(n, marker))
        f.flush()
        start = time.perf_counter()
    shown = wait_for(marker.encode(), 5)
    if shown is None:
        print("line %d: not shown within 5 s" % n)
        continue
    latencies.append((shown - start) * 1000)
    time.sleep(random.uniform(0.02, 0.06))
os.write(fd, b"q")
time.sleep(0.3)
latencies.sort()
if not latencies:
    sys.exit("no line was shown")


def pct(p):
    return latencies[min(len(latencies) - 1, int(round(p / 100 * (len(latencies) - 1))))]


print("%d of %d lines shown: p50 %.1f ms, p95 %.1f ms, worst %.1f ms"
      % (len(latencies), lines, pct(50), pct(95), latencies[-1]))

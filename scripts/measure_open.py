#!/usr/bin/env python3
"""Time from `ctxlab open FILE` to the first frame that shows the opened session's rows.

Usage: scripts/measure_open.py FILE [BINARY] [RUNS]
Starts BINARY (default target/release/ctxlab) as `ctxlab open FILE` in a fresh pty of
120x40 with a temp HOME (the first-run legend marked as seen, so the session is the first
screen), answers the terminal queries crossterm sends, and stops the clock when the screen
shows the opened session's title (its `N msgs · ` count) and a message row
(`user  request`). Prints each run and the median. Generate a big session with
scripts/gen_claude_session.py --mb 50 --out /dev/shm/claude-50mb.jsonl.
"""
import os
import pty
import select
import shutil
import statistics
import sys
import tempfile
import time
import fcntl
import re
import struct
import termios

path = sys.argv[1]
binary = sys.argv[2] if len(sys.argv) > 2 else "target/release/ctxlab"
runs = int(sys.argv[3]) if len(sys.argv) > 3 else 5
times = []
for _ in range(runs):
    home = tempfile.mkdtemp()
    os.makedirs(home + "/data/ctxlab")
    open(home + "/data/ctxlab/legend-seen", "w").close()
    env = {k: v for k, v in os.environ.items()
           if k not in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "OPENAI_BASE_URL")}
    env.update(TERM="xterm-256color", HOME=home, XDG_DATA_HOME=home + "/data",
               XDG_CONFIG_HOME=home + "/config", COLUMNS="120", LINES="40")
    start = time.perf_counter()
    pid, fd = pty.fork()
    if pid == 0:
        os.execve(binary, [binary, "open", path, "--workspace", home + "/ws"], env)
    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))
    seen = b""
    elapsed = None
    while elapsed is None and time.perf_counter() - start < 20:
        r, _, _ = select.select([fd], [], [], 0.005)
        if fd in r:
            try:
                chunk = os.read(fd, 65536)
            except OSError:
                break
            seen += chunk
            if b"\x1b[6n" in chunk:
                os.write(fd, b"\x1b[1;1R")
            if b"\x1b[c" in chunk:
                os.write(fd, b"\x1b[?62c")
            # Styles and cursor moves come between a title's spans: read the text alone.
            text = re.sub(rb"\x1b\[[0-9;?]*[ -/]*[@-~]", b"", seen)
            # Frames after the first are drawn as changed cells only: look for the opened
            # session's title's count (` msgs · `) and a message row after it.
            at = text.find(b" msgs \xc2\xb7 ")
            if at >= 0 and b"user  request" in text[at:]:
                elapsed = time.perf_counter() - start
    os.write(fd, b"q")
    time.sleep(0.3)
    try:
        os.kill(pid, 9)
    except ProcessLookupError:
        pass
    os.waitpid(pid, 0)
    shutil.rmtree(home, ignore_errors=True)
    if elapsed is None:
        print("no frame with rows within 20 s")
    else:
        times.append(elapsed * 1000)
        print("%.1f ms" % (elapsed * 1000))
if times:
    print("median %.1f ms over %d runs" % (statistics.median(times), len(times)))

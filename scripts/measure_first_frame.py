#!/usr/bin/env python3
"""Time from process start to the workbench's first frame, measured in a pseudo-terminal.

Usage: scripts/measure_first_frame.py [BINARY] [RUNS]
Starts BINARY (default target/release/ctxlab) with `--pace-ms 0` in a fresh pty of 120x40
and an empty temp workspace, answers the terminal queries crossterm sends, and stops the
clock when the screen shows the conversation pane's title. Prints each run and the median.
"""
import os
import pty
import select
import shutil
import statistics
import sys
import tempfile
import time

binary = sys.argv[1] if len(sys.argv) > 1 else "target/release/ctxlab"
runs = int(sys.argv[2]) if len(sys.argv) > 2 else 10
times = []
for _ in range(runs):
    home = tempfile.mkdtemp()
    env = {k: v for k, v in os.environ.items()
           if k not in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "OPENAI_BASE_URL")}
    env.update(TERM="xterm-256color", HOME=home, XDG_DATA_HOME=home + "/data",
               XDG_CONFIG_HOME=home + "/config", COLUMNS="120", LINES="40")
    start = time.perf_counter()
    pid, fd = pty.fork()
    if pid == 0:
        os.execve(binary, [binary, "--pace-ms", "0", "--workspace", home + "/ws"], env)
    import fcntl, struct, termios
    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))
    seen = b""
    elapsed = None
    while elapsed is None and time.perf_counter() - start < 10:
        r, _, _ = select.select([fd], [], [], 0.01)
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
            if b"Conversation" in seen:
                elapsed = time.perf_counter() - start
    os.write(fd, b"\x03\x03")
    time.sleep(0.3)
    try:
        os.kill(pid, 9)
    except ProcessLookupError:
        pass
    os.waitpid(pid, 0)
    shutil.rmtree(home, ignore_errors=True)
    if elapsed is None:
        print("no frame within 10 s")
    else:
        times.append(elapsed * 1000)
        print("%.1f ms" % (elapsed * 1000))
if times:
    print("median %.1f ms over %d runs" % (statistics.median(times), len(times)))

#!/usr/bin/env python3
"""Time from `ctxlab open FILE` to the first frame that shows the opened session's rows.

Usage: scripts/measure_open.py FILE [BINARY] [RUNS] [--peak]
Starts BINARY (default target/release/ctxlab) as `ctxlab open FILE` in a fresh pty of
120x40 with a temp HOME (the first-run legend marked as seen, so the session is the first
screen), answers the terminal queries crossterm sends, and stops the clock when the screen
shows the opened session's title (its `N msgs · ` count) and a message row
(`user  request`). Prints each run and the median. With --peak, each run then waits
until the whole file is read and the app is idle, and prints its peak resident memory
(VmHWM) and that peak over the file's size. Generate a big session with
scripts/gen_claude_session.py --mb 50 --out /dev/shm/claude-50mb.jsonl.
"""
import os
import re
import sys

from pty_frame import report, time_to_frame


def rows_shown(seen):
    # Styles and cursor moves come between a title's spans: read the text alone.
    text = re.sub(rb"\x1b\[[0-9;?]*[ -/]*[@-~]", b"", seen)
    # Frames after the first are drawn as changed cells only: look for the opened
    # session's title's count (` msgs · `) and a message row after it.
    at = text.find(b" msgs \xc2\xb7 ")
    return at >= 0 and b"user  request" in text[at:]


args = [a for a in sys.argv[1:] if a != "--peak"]
peak = "--peak" in sys.argv[1:]
path = args[0]
binary = args[1] if len(args) > 1 else "target/release/ctxlab"
runs = int(args[2]) if len(args) > 2 else 5
peaks = report(runs,
               lambda: time_to_frame(binary, ["open", path], rows_shown, quit_keys=b"q",
                                     timeout=20, poll=0.005, legend_seen=True,
                                     settle=300 if peak else 0),
               "no frame with rows within 20 s")
if peaks:
    size = os.path.getsize(path)
    print("file %.1f MB, peak memory %.2fx its size" % (size / 1e6, max(peaks) / size))

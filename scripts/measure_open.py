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


path = sys.argv[1]
binary = sys.argv[2] if len(sys.argv) > 2 else "target/release/ctxlab"
runs = int(sys.argv[3]) if len(sys.argv) > 3 else 5
report(runs,
       lambda: time_to_frame(binary, ["open", path], rows_shown, quit_keys=b"q", timeout=20,
                             poll=0.005, legend_seen=True),
       "no frame with rows within 20 s")

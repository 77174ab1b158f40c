#!/usr/bin/env python3
"""Time from process start to the workbench's first frame, measured in a pseudo-terminal.

Usage: scripts/measure_first_frame.py [BINARY] [RUNS]
Starts BINARY (default target/release/ctxlab) with `--pace-ms 0` in a fresh pty of 120x40
and an empty temp workspace, answers the terminal queries crossterm sends, and stops the
clock when the screen shows the conversation pane's title. Prints each run and the median.
"""
import sys

from pty_frame import report, time_to_frame

binary = sys.argv[1] if len(sys.argv) > 1 else "target/release/ctxlab"
runs = int(sys.argv[2]) if len(sys.argv) > 2 else 10
report(runs,
       lambda: time_to_frame(binary, ["--pace-ms", "0"], lambda seen: b"Conversation" in seen,
                             quit_keys=b"\x03\x03", timeout=10, poll=0.01),
       "no frame within 10 s")

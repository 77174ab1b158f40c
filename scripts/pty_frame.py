"""Timing the workbench's first frames in a pseudo-terminal: the part the measuring
scripts (measure_first_frame.py, measure_open.py) share.

`time_to_frame` starts the binary in a fresh 120x40 pty with a temp HOME (no API keys,
so it runs on the scripted model), answers the terminal queries crossterm sends, and
returns the seconds until `shown(output so far)` is true, or None after `timeout` s.
`report` runs it `runs` times and prints each run and the median.
"""
import fcntl
import os
import pty
import select
import shutil
import statistics
import struct
import tempfile
import termios
import time

KEY_VARS = ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "OPENAI_BASE_URL")


def time_to_frame(binary, args, shown, quit_keys, timeout, poll, legend_seen=False):
    home = tempfile.mkdtemp()
    if legend_seen:
        os.makedirs(home + "/data/ctxlab")
        open(home + "/data/ctxlab/legend-seen", "w").close()
    env = {k: v for k, v in os.environ.items() if k not in KEY_VARS}
    env.update(TERM="xterm-256color", HOME=home, XDG_DATA_HOME=home + "/data",
               XDG_CONFIG_HOME=home + "/config", COLUMNS="120", LINES="40")
    start = time.perf_counter()
    pid, fd = pty.fork()
    if pid == 0:
        os.execve(binary, [binary] + args + ["--workspace", home + "/ws"], env)
    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))
    seen = b""
    elapsed = None
    while elapsed is None and time.perf_counter() - start < timeout:
        r, _, _ = select.select([fd], [], [], poll)
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
            if shown(seen):
                elapsed = time.perf_counter() - start
    os.write(fd, quit_keys)
    time.sleep(0.3)
    try:
        os.kill(pid, 9)
    except ProcessLookupError:
        pass
    os.waitpid(pid, 0)
    shutil.rmtree(home, ignore_errors=True)
    return elapsed


def report(runs, one_run, missing):
    times = []
    for _ in range(runs):
        elapsed = one_run()
        if elapsed is None:
            print(missing)
        else:
            times.append(elapsed * 1000)
            print("%.1f ms" % (elapsed * 1000))
    if times:
        print("median %.1f ms over %d runs" % (statistics.median(times), len(times)))

"""Timing the workbench's first frames in a pseudo-terminal: the part the measuring
scripts (measure_first_frame.py, measure_open.py) share.

`time_to_frame` starts the binary in a fresh 120x40 pty with a temp HOME (no API keys,
so it runs on the scripted model), answers the terminal queries crossterm sends, and
returns the seconds until `shown(output so far)` is true, or None after `timeout` s.
With `settle`, it then waits until the process has been idle for a second (the whole
file read and parsed after the first lines are shown), at most `settle` seconds, and keeps
its peak resident memory (VmHWM, in bytes) in `PEAK[0]` (None when it could not be read).
`report` runs it `runs` times and prints each run and the median (and the peaks, if kept).
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
PEAK = [None]


def cpu_ticks(pid):
    """User plus system CPU time of `pid` so far, in clock ticks, from /proc (Linux)."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return int(fields[11]) + int(fields[12])
    except (OSError, IndexError, ValueError):
        return None


def peak_rss(pid):
    """The peak resident memory of `pid` so far, in bytes, from /proc (Linux)."""
    try:
        with open("/proc/%d/status" % pid) as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return None


def time_to_frame(binary, args, shown, quit_keys, timeout, poll, legend_seen=False, settle=0):
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
    PEAK[0] = None
    if settle and elapsed is not None:
        # Keep draining the pty while the app settles, so it never blocks on output.
        until = time.perf_counter() + settle
        last, last_at = cpu_ticks(pid), time.perf_counter()
        while time.perf_counter() < until:
            r, _, _ = select.select([fd], [], [], 0.05)
            if fd in r:
                try:
                    os.read(fd, 65536)
                except OSError:
                    break
            if time.perf_counter() - last_at >= 1.0:
                now = cpu_ticks(pid)
                if now is None or last is None or now - last <= 5:
                    break
                last, last_at = now, time.perf_counter()
        PEAK[0] = peak_rss(pid)
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
    peaks = []
    for _ in range(runs):
        elapsed = one_run()
        if elapsed is None:
            print(missing)
        else:
            times.append(elapsed * 1000)
            peak = PEAK[0]
            if peak is None:
                print("%.1f ms" % (elapsed * 1000))
            else:
                peaks.append(peak)
                print("%.1f ms, peak memory %.1f MB" % (elapsed * 1000, peak / 1e6))
    if times:
        print("median %.1f ms over %d runs" % (statistics.median(times), len(times)))
    if peaks:
        print("peak memory: max %.1f MB" % (max(peaks) / 1e6))
    return peaks

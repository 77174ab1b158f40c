"""Claude Code interactive, in a pseudo-terminal: the only mode that runs a status line.

The harness types one prompt, waits until the session file records the answer and the
status line has run after it, then leaves with `/exit`. Terminal queries the CLI sends
(cursor position, device attributes) get the answers a terminal would give, so it never
waits on them.
"""

import fcntl
import os
import select
import struct
import subprocess
import termios
import time

COLUMNS, ROWS = 120, 40


def _answer_queries(chunk: bytes, master: int):
    if b"\x1b[6n" in chunk:
        os.write(master, b"\x1b[1;1R")
    if b"\x1b[c" in chunk or b"\x1b[0c" in chunk:
        os.write(master, b"\x1b[?62;c")


# Text Claude Code draws with its prompt box: typing before it is drawn can be lost.
READY_MARKERS = (b"shift+tab", b"for shortcuts")
# Typing waits at most this long for a ready marker, then types anyway.
READY_WAIT_S = 20.0
# With no answer this long after typing, Enter is pressed once more.
ANSWER_WAIT_S = 30.0


def run_interactive(cmd, cwd, env, log_path, prompt, done, timeout_s=90.0):
    """Runs `cmd` in a pty; types `prompt` once the CLI has drawn; `done()` says when to leave.

    Returns the whole terminal output (for the log). Raises TimeoutError when `done` never
    holds within `timeout_s`.
    """
    master, slave = os.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", ROWS, COLUMNS, 0, 0))
    env = dict(env, TERM="xterm-256color", COLUMNS=str(COLUMNS), LINES=str(ROWS))
    proc = subprocess.Popen(cmd, cwd=cwd, env=env, stdin=slave, stdout=slave, stderr=slave, start_new_session=True)
    os.close(slave)
    output = bytearray()
    deadline = time.time() + timeout_s
    typed = None
    pressed_again = False
    leaving_at = None
    started = time.time()
    try:
        while time.time() < deadline:
            ready, _, _ = select.select([master], [], [], 0.1)
            if ready:
                try:
                    chunk = os.read(master, 65536)
                except OSError:
                    break
                if not chunk:
                    break
                output += chunk
                _answer_queries(chunk, master)
            if proc.poll() is not None:
                break
            ready = any(m in output for m in READY_MARKERS)
            if typed is None and (ready or time.time() - started > READY_WAIT_S):
                time.sleep(0.5)
                for ch in prompt:
                    os.write(master, ch.encode())
                    time.sleep(0.01)
                time.sleep(0.3)
                os.write(master, b"\r")
                typed = time.time()
            if typed and not pressed_again and leaving_at is None and time.time() - typed > ANSWER_WAIT_S:
                # A slow machine can take the first Enter as part of a paste: once more.
                os.write(master, b"\r")
                pressed_again = True
            if typed and leaving_at is None and done():
                os.write(master, b"/exit")
                time.sleep(0.3)
                os.write(master, b"\r")
                leaving_at = time.time()
            if leaving_at and time.time() - leaving_at > 10:
                break
        else:
            raise TimeoutError(f"interactive Claude Code: no answer in {timeout_s} s")
    finally:
        if proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        os.close(master)
        with open(log_path, "ab") as log:
            log.write(bytes(output))
    if leaving_at is None:
        raise TimeoutError("interactive Claude Code ended before its answer was recorded")
    return bytes(output)

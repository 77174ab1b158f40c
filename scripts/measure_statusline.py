#!/usr/bin/env python3
"""Measure `ctxlab statusline` on a large Claude Code transcript (not used by CI).

Three cases, each RUNS runs of the binary given Claude Code's status JSON on stdin, the
transcript named as its `transcript_path` and its context 160,000 tokens (within 20,000 of
Claude Code's threshold for a 200k window, so every run also counts the facts at risk: the
costly case):

- first run: an empty data dir every run (no index, no remembered count);
- unchanged: one data dir whose index already covers the whole file (warmed first, a scan
  of at most 64 MiB a run), the file untouched;
- appended: the same data dir, one line appended to the transcript before each run, as
  Claude Code writes after each answer (in turn: an assistant text with its usage, an
  assistant tool call writing a file, that call's tool result). The lines are appended to
  the file itself (a copy of a 2 GB file is too much disk) and the file is truncated back
  to its original size at the end, whatever happens.

For each case: wall time (spawn to exit and its output read, as Claude Code waits for it) and CPU time (user +
system of the child, from wait4) at p50 and p95, in milliseconds, and the line printed.
`--version` startup is measured too (the process's fixed cost: the loader, the runtime).

Usage: measure_statusline.py [--bin target/release/ctxlab]
                             [--file /work/bigdata/claude-2gb.jsonl] [--runs 100]
                             [--context 160000] [--only first,unchanged,appended,version]
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time


def pct(values, p):
    v = sorted(values)
    if not v:
        return float("nan")
    k = min(len(v) - 1, max(0, int(round(p / 100.0 * len(v) + 0.5)) - 1))
    return v[k]


def run_rusage(argv, env, stdin_bytes):
    """Wall ms, CPU ms (user + system) and stdout of one run. posix_spawn (vfork and exec)
    keeps this script's own cost out of the wall time; the child is reaped by wait4."""
    r, w = os.pipe()
    out_r, out_w = os.pipe()
    devnull = os.open(os.devnull, os.O_WRONLY)
    actions = [(os.POSIX_SPAWN_DUP2, r, 0), (os.POSIX_SPAWN_DUP2, out_w, 1),
               (os.POSIX_SPAWN_DUP2, devnull, 2)]
    for fd in (r, w, out_r, out_w, devnull):
        actions.append((os.POSIX_SPAWN_CLOSE, fd))
    start = time.monotonic()
    pid = os.posix_spawn(argv[0], argv, env, file_actions=actions)
    os.close(r)
    os.close(out_w)
    os.close(devnull)
    os.write(w, stdin_bytes)
    os.close(w)
    chunks = []
    while True:
        b = os.read(out_r, 65536)
        if not b:
            break
        chunks.append(b)
    os.close(out_r)
    _, status, usage = os.wait4(pid, 0)
    wall = (time.monotonic() - start) * 1000.0
    cpu = (usage.ru_utime + usage.ru_stime) * 1000.0
    return wall, cpu, b"".join(chunks).decode("utf-8", "replace").strip()


def status_json(path, context):
    return json.dumps({
        "session_id": "measure",
        "transcript_path": os.path.abspath(path),
        "model": {"id": "claude-sonnet-4-6", "display_name": "Sonnet 4.6"},
        "context_window": {
            "context_window_size": 200000,
            "current_usage": {"input_tokens": 10, "cache_read_input_tokens": context - 10,
                              "cache_creation_input_tokens": 0, "output_tokens": 100},
        },
    }).encode()


def last_uuid(path):
    """The `uuid` of the file's last line that has one."""
    with open(path, "rb") as f:
        f.seek(max(0, os.path.getsize(path) - (4 << 20)))
        lines = f.read().split(b"\n")[1:]
    for line in reversed(lines):
        try:
            u = json.loads(line).get("uuid")
        except ValueError:
            continue
        if u:
            return u
    return None


def conversation_tail(path, mb, parent):
    """About `mb` MB of the file's own conversation lines (from its last 64 MiB, no
    compaction among them), their uuids chained anew from `parent`: the messages since the
    last compaction of a session near its threshold, which the at-risk count reads."""
    want = int(mb * (1 << 20))
    out = []
    got = 0
    with open(path, "rb") as f:
        f.seek(max(0, os.path.getsize(path) - (64 << 20)))
        lines = f.read().split(b"\n")[1:-1]
    n = 0
    for line in lines:
        if got >= want:
            break
        if b"compact" in line.lower() or b"isSidechain\":true" in line:
            continue
        try:
            o = json.loads(line)
        except ValueError:
            continue
        if "uuid" not in o:
            continue
        o["parentUuid"] = parent
        o["uuid"] = parent = "t%07d" % n
        n += 1
        b = (json.dumps(o, ensure_ascii=False, separators=(",", ":")) + "\n").encode()
        out.append(b)
        got += len(b)
    return b"".join(out), parent


def appended_line(i, parent):
    """One line as Claude Code appends after an answer, in turn: text, tool call, result."""
    base = {"parentUuid": parent if i == 0 else "m%06d" % (i - 1), "isSidechain": False,
            "userType": "external", "cwd": "/home/dev/big", "sessionId": "measure",
            "version": "2.0.30", "gitBranch": "main", "uuid": "m%06d" % i,
            "timestamp": "2025-12-02T09:00:00.000Z"}
    usage = {"input_tokens": 10, "cache_creation_input_tokens": 500,
             "cache_read_input_tokens": 159000, "output_tokens": 80}
    kind = i % 3
    if kind == 0:
        base.update({"type": "assistant", "requestId": "req_m%d" % i, "message": {
            "id": "msg_m%d" % i, "type": "message", "role": "assistant",
            "model": "claude-sonnet-4-5",
            "content": [{"type": "text", "text": "I decided to keep the lexer in "
                         "src/lexer_%d.rs instead of the parser." % i}],
            "usage": usage}})
    elif kind == 1:
        base.update({"type": "assistant", "requestId": "req_m%d" % i, "message": {
            "id": "msg_m%d" % i, "type": "message", "role": "assistant",
            "model": "claude-sonnet-4-5",
            "content": [{"type": "tool_use", "id": "toolu_m%d" % i, "name": "Write",
                         "input": {"file_path": "/home/dev/big/src/gen_%d.rs" % i,
                                   "content": "pub fn f() {}\n"}}],
            "usage": usage}})
    else:
        base.update({"type": "user", "message": {"role": "user", "content": [
            {"tool_use_id": "toolu_m%d" % (i - 1), "type": "tool_result",
             "content": "File created successfully at: /home/dev/big/src/gen_%d.rs"
             % (i - 1)}]}})
    return (json.dumps(base, ensure_ascii=False, separators=(",", ":")) + "\n").encode()


def report(name, rows):
    walls = [r[0] for r in rows]
    cpus = [r[1] for r in rows]
    print("| %s | %d | %.1f | %.1f | %.1f | %.1f | %.1f |" % (
        name, len(rows), pct(walls, 50), pct(walls, 95), pct(cpus, 50), pct(cpus, 95),
        max(walls)), flush=True)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--bin", default="target/release/ctxlab")
    p.add_argument("--file", default="/work/bigdata/claude-2gb.jsonl")
    p.add_argument("--runs", type=int, default=100)
    p.add_argument("--context", type=int, default=160000)
    p.add_argument("--only", default="version,first,unchanged,appended")
    p.add_argument("--tail-mb", type=float, default=1.0,
                   help="MB of conversation appended first (the messages since the last "
                        "compaction); 0 measures the file as it is")
    args = p.parse_args()
    only = set(args.only.split(","))
    binary = os.path.abspath(args.bin)
    stdin = status_json(args.file, args.context)
    size = os.path.getsize(args.file)
    try:
        return measure(args, only, binary, stdin, size)
    finally:
        # Whatever happened, the shared file gets its own bytes back.
        os.truncate(args.file, size)


def measure(args, only, binary, stdin, size):
    parent = last_uuid(args.file)
    if args.tail_mb > 0:
        tail, parent = conversation_tail(args.file, args.tail_mb, parent)
        with open(args.file, "ab") as f:
            f.write(tail)
    with open("/proc/loadavg") as f:
        load = f.read().split()[0]
    print("file %s: %s bytes, %s of conversation appended since its last compaction; "
          "%d runs each; load average %s at the start"
          % (args.file, format(size, ","), "%.1f MB" % args.tail_mb, args.runs, load))
    print("| case | runs | wall p50 ms | wall p95 ms | CPU p50 ms | CPU p95 ms | wall max ms |")
    print("|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory(prefix="measure-statusline-") as tmp:
        home = os.path.join(tmp, "home")
        os.makedirs(home)
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": home,
               "COLUMNS": "200"}
        last = {}
        if "version" in only:
            rows = [run_rusage([binary, "--version"], env, b"") for _ in range(args.runs)]
            report("`--version`", rows)
        if "first" in only:
            rows = []
            for i in range(args.runs):
                d = os.path.join(tmp, "first-%d" % i)
                rows.append(run_rusage([binary, "statusline"],
                                       dict(env, CTXLAB_DATA_DIR=d), stdin))
                shutil.rmtree(d, ignore_errors=True)
            report("first run (empty data dir)", rows)
            last["first run"] = rows[-1][2]
        data = os.path.join(tmp, "data")
        denv = dict(env, CTXLAB_DATA_DIR=data)
        if "unchanged" in only or "appended" in only:
            # Warm the index over the whole file (64 MiB a run) before timing.
            for _ in range(size // (64 << 20) + 3):
                _, _, line = run_rusage([binary, "statusline"], denv, stdin)
                if "counting" not in line:
                    break
            last["warm"] = line
        if "unchanged" in only:
            rows = [run_rusage([binary, "statusline"], denv, stdin) for _ in range(args.runs)]
            report("unchanged file", rows)
            last["unchanged"] = rows[-1][2]
        if "appended" in only:
            rows = []
            for i in range(args.runs):
                with open(args.file, "ab") as f:
                    f.write(appended_line(i, parent))
                rows.append(run_rusage([binary, "statusline"], denv, stdin))
            report("a line appended before each run", rows)
            last["appended"] = rows[-1][2]
            # The last run's line against a count made afresh (the remembered count gone).
            memory = os.path.join(data, "statusline-risk.json")
            if os.path.exists(memory):
                os.remove(memory)
            last["recounted"] = run_rusage([binary, "statusline"], denv, stdin)[2]
    for k, v in last.items():
        print("%s: %s" % (k, v))
    # A cut tail ("N+") goes on from where its count started, a fresh count from the cap's
    # last bytes: the first may count more. An uncut tail's counts must be equal.
    if "appended" in last and "+ at risk" not in last["appended"] \
            and last["appended"] != last["recounted"]:
        print("MISMATCH: the line after the appended runs differs from a fresh count")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

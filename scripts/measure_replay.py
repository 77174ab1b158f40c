#!/usr/bin/env python3
"""Side-by-side replay measurement: ctxlab replay against the plain-Python lesson replay.

Runs both on the same session, alternating, N times each, each in a fresh workspace under
--scratch (use /dev/shm), and prints wall and CPU (user+sys) times: the minimum and the
median of each, and the speed-up of the medians and of the minima. On a shared machine the
minimum is the better estimate of the uncontended time; CPU time shows the work done.
Both must report the same totals (calls, fired stages, files, final size), or it stops.

Usage: measure_replay.py [--session bench-data/session.json] [--runs 7]
                         [--ctxlab target/release/ctxlab] [--scratch /dev/shm/ctxlab-measure]
                         [--set KEY=VALUE ...]
"""
import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def run(cmd):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, out


def totals_of_ctxlab(out):
    return json.loads(out.strip().splitlines()[-1])


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--session", default=os.path.join(HERE, "..", "bench-data", "session.json"))
    p.add_argument("--runs", type=int, default=7)
    p.add_argument("--ctxlab", default=os.path.join(HERE, "..", "target", "release", "ctxlab"))
    p.add_argument("--scratch", default="/dev/shm/ctxlab-measure")
    p.add_argument("--summary-text", default="Goal: keep going. Files: see transcript.")
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE")
    args = p.parse_args()
    sets = [x for kv in args.set for x in ("--set", kv)]
    times = {"python": [], "ctxlab": []}
    for _ in range(args.runs):
        for name in ("python", "ctxlab"):
            ws = os.path.join(args.scratch, name)
            shutil.rmtree(ws, ignore_errors=True)
            if name == "python":
                cmd = [sys.executable, os.path.join(HERE, "lesson_replay.py"), args.session,
                       "--workspace", ws, "--summary-text", args.summary_text] + sets
            else:
                cmd = [args.ctxlab, "replay", args.session, "--workspace", ws, "--json",
                       "--summary-text", args.summary_text] + sets
            wall, cpu, out = run(cmd)
            times[name].append((wall, cpu))
            last = json.loads(out.strip().splitlines()[-1])
            if name == "python":
                py_totals = last
            else:
                same = {k: last[k] for k in py_totals}
                if same != py_totals:
                    sys.exit(f"totals differ:\n python {py_totals}\n ctxlab {same}")
    shutil.rmtree(args.scratch, ignore_errors=True)
    for kind, i in (("wall", 0), ("cpu", 1)):
        py = [t[i] for t in times["python"]]
        rs = [t[i] for t in times["ctxlab"]]
        print(
            f"{kind:>4}: python min {min(py):.3f} s median {statistics.median(py):.3f} s; "
            f"ctxlab min {min(rs):.3f} s median {statistics.median(rs):.3f} s; "
            f"speed-up median {statistics.median(py) / statistics.median(rs):.1f}x, "
            f"min {min(py) / min(rs):.1f}x"
        )
    print(f"totals: {json.dumps(py_totals)}")


if __name__ == "__main__":
    main()

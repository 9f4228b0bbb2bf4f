#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# import-stacks-bench.py — how the snapshot import's CPU time grows with
# stacks made to collide in the pickle reader's indexes of repeated frames
# and stacks (tests/import/test-hostile.py's agreeing_stacks: distinct
# 12-frame stacks that agree on four frames).  The indexes keep lookups
# short, so four times the entries should take about four times the CPU
# time, not sixteen.  Prints, per size, the least user+system CPU time of
# two imports and the time per entry.
#
# Usage: bench/import-stacks-bench.py BUILD_DIR [ENTRIES...]
#   (default 10000 40000 160000; builds the benchmark programs first)
import os
import resource
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "import"))
hostile = __import__("test-hostile")


def import_cpu_seconds(tool, path, db):
    """The least CPU time of two imports of path."""
    best = None
    for _ in range(2):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        subprocess.run([tool, path, "-o", db, "-q", "-f"], check=True)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
        best = cpu if best is None else min(best, cpu)
    return best


def main():
    build = sys.argv[1] if len(sys.argv) > 1 else "build"
    sizes = [int(a) for a in sys.argv[2:]] or [10000, 40000, 160000]
    subprocess.run(["ninja", "-C", build, "benchmarks"], check=True, stdout=sys.stderr)
    tool = os.path.join(build, "tests", "import", "vs-import-tool")
    print("%10s %10s %12s" % ("entries", "CPU s", "µs/entry"))
    with tempfile.TemporaryDirectory() as tmp:
        path, db = os.path.join(tmp, "in.pickle"), os.path.join(tmp, "out.db")
        for k in sizes:
            with open(path, "wb") as f:
                f.write(hostile.agreeing_stacks(k))
            cpu = import_cpu_seconds(tool, path, db)
            # Each of the k allocations is an alloc and a free entry.
            print("%10d %10.2f %12.2f" % (2 * k, cpu, cpu * 1e6 / (2 * k)), flush=True)


main()

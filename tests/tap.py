# SPDX-License-Identifier: MIT
"""tap.py — the TAP output of the Python tests.

ok() counts one check and prints its line, with the detail of a failed one
as comments (its first 40 lines); done() prints the plan and exits 1 when a check failed.
case() prints the line of one numbered case, for scripts that print their
plan first.
Scripts in tests/*/ import it after putting tests/ on sys.path."""
import sys

_count = 0
_failed = False


def ok(cond, name, detail=""):
    global _count, _failed
    _count += 1
    print(("ok %d %s" if cond else "not ok %d %s") % (_count, name))
    if not cond:
        _failed = True
        lines = str(detail).splitlines()
        for line in lines[:40]:
            print("# " + line)
        if len(lines) > 40:
            print("# … %d more lines" % (len(lines) - 40))
    return cond


def done():
    print("1..%d" % _count)
    sys.exit(1 if _failed else 0)


def case(n, name, problems):
    """Prints the TAP line of case n: "ok N - NAME", or "not ok N - NAME:
    PROBLEMS" (joined by "; ") when problems is not empty; returns 1 when
    the case failed, else 0."""
    if problems:
        print("not ok %d - %s: %s" % (n, name, "; ".join(problems)))
        return 1
    print("ok %d - %s" % (n, name))
    return 0

# SPDX-License-Identifier: MIT
"""vs_gpu_check.py — the checks' account the trace checkers share.

Each check prints one line and counts a failure when it fails: tap() as a
TAP line ("ok N - what (detail)", "not ok N - …", and plan() the "1..N"
after the last), line() as a plain one ("ok  what", "FAIL what").
status() is the checker's exit status: 1 when a check failed, else 0.
Standard library only (the checkers run on bare GPU servers).
"""

n = 0
failed = 0


def tap(what, ok, detail=""):
    global n, failed
    n += 1
    print(("ok %d - " if ok else "not ok %d - ") % n + what + (" (%s)" % detail if detail else ""))
    if not ok:
        failed += 1


def plan():
    print("1..%d" % n)


def line(cond, what):
    global failed
    print("%s %s" % ("ok  " if cond else "FAIL", what))
    if not cond:
        failed += 1


def status():
    return 1 if failed else 0

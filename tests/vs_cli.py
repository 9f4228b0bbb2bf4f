# SPDX-License-Identifier: MIT
"""vs_cli.py — running the vramscope command from the Python checks.

run() runs it with plain output (no colour, no pager) and returns the
finished process; csv_rows() reads a CSV report it printed; output() and
report_rows() give what it printed, raising when it failed; bound() gives
both for one vramscope.  Scripts in
tests/*/ import it after putting tests/ on sys.path."""
import csv
import functools
import io
import os
import subprocess


def run(vramscope, *args):
    env = dict(os.environ, NO_COLOR="1", PAGER="cat")
    return subprocess.run([vramscope, *args], capture_output=True, text=True, env=env)


def csv_rows(p):
    return list(csv.DictReader(io.StringIO(p.stdout)))


def output(vramscope, *args):
    """What vramscope prints on stdout for args; raises RuntimeError, with
    its stderr, when it exits with a status other than 0."""
    p = run(vramscope, *args)
    if p.returncode != 0:
        raise RuntimeError("vramscope %s: exit %d: %s" % (" ".join(args), p.returncode, p.stderr))
    return p.stdout


def report_rows(vramscope, trace, report, *extra):
    """The rows of `report TRACE --format csv REPORT EXTRA...`, as dicts;
    raises RuntimeError as output() does."""
    return list(csv.DictReader(io.StringIO(output(vramscope, "report", trace, "--format", "csv",
                                                  report, *extra))))


def bound(vramscope):
    """output() and report_rows() of this vramscope: (run, table)."""
    return functools.partial(output, vramscope), functools.partial(report_rows, vramscope)

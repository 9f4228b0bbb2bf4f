# SPDX-License-Identifier: MIT
"""vs_cli.py — running the vramscope command from the Python checks.

run() runs it with plain output (no colour, no pager) and returns the
finished process; csv_rows() reads a CSV report it printed.  Scripts in
tests/*/ import it after putting tests/ on sys.path."""
import csv
import io
import os
import subprocess


def run(vramscope, *args):
    env = dict(os.environ, NO_COLOR="1", PAGER="cat")
    return subprocess.run([vramscope, *args], capture_output=True, text=True, env=env)


def csv_rows(p):
    return list(csv.DictReader(io.StringIO(p.stdout)))

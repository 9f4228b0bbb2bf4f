# SPDX-License-Identifier: MIT
"""vs_trace_db.py — a trace's tables for the Python checks, whatever its
schema version.

A compacted trace (schema 5) keeps alloc_event, mem_event, kernel_exec,
series and block in column chunks that only vramscope's SQLite module
reads; connect() reads such a trace through the plain copy
`vramscope export TRACE --format sqlite` writes (removed at exit), and any
other trace directly.  Plain tables (meta, device, summary, …) read the
same either way.  Scripts in tests/*/ import it after putting tests/ on
sys.path; the vramscope command is the one given, else $VRAMSCOPE.
Standard library only: it runs on a bare GPU server."""
import atexit
import os
import shutil
import sqlite3
import subprocess
import tempfile

COMPACTED = 5
_copies = []


def _cleanup():
    for d in _copies:
        shutil.rmtree(d, ignore_errors=True)


atexit.register(_cleanup)


def version(path):
    """The trace's schema version (PRAGMA user_version)."""
    db = sqlite3.connect("file:%s?mode=ro" % path, uri=True)
    try:
        return db.execute("PRAGMA user_version").fetchone()[0]
    finally:
        db.close()


def plain_path(path, vramscope=None):
    """path itself, or for a compacted trace a plain copy of it."""
    if not os.path.isfile(path) or version(path) < COMPACTED:
        return path
    vramscope = vramscope or os.environ.get("VRAMSCOPE")
    if not vramscope:
        raise RuntimeError("%s is compacted: reading its tables needs the vramscope command"
                           " (set VRAMSCOPE)" % path)
    if os.sep in vramscope:
        vramscope = os.path.abspath(vramscope)
    d = tempfile.mkdtemp(prefix="vs-plain-")
    _copies.append(d)
    out = os.path.join(d, os.path.basename(path))
    p = subprocess.run([vramscope, "export", path, "--format", "sqlite", "-o", out],
                       capture_output=True, text=True)
    if p.returncode != 0:
        raise RuntimeError("vramscope export %s --format sqlite: %s" % (path, p.stderr.strip()))
    return out


def connect(path, vramscope=None, readonly=False, **kwargs):
    """An sqlite3 connection reading the trace at path as plain tables
    (read-only with readonly)."""
    p = plain_path(path, vramscope)
    if readonly:
        return sqlite3.connect("file:%s?mode=ro" % p, uri=True, **kwargs)
    return sqlite3.connect(p, **kwargs)


def stacks_under(function_like):
    """SQL selecting the id of every stack at or under a frame whose
    function is LIKE function_like (the trie's descendants: a pool's frame
    is outer to the cudaMalloc it makes)."""
    return """
WITH RECURSIVE under(id) AS (
  SELECT s.id FROM stack s JOIN frame f ON f.id = s.frame_id
  WHERE f.function LIKE '%s'
  UNION SELECT s.id FROM stack s JOIN under u ON s.parent_id = u.id)
SELECT id FROM under""" % function_like.replace("'", "''")

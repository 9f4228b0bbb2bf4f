#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# open-states.py VRAMSCOPE TRACE — valid traces in the states SQLite files
# are found in are read, and damaged ones are refused without being
# changed: a hot journal left by a killed writer is rolled back; a trace
# another process holds locked is waited for; a WAL-mode trace whose WAL
# index cannot be created is read; an empty file beside a WAL is refused
# and its WAL left alone.  TAP output.
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time

VRAMSCOPE, TRACE = sys.argv[1], sys.argv[2]


def report(path):
    return subprocess.run([VRAMSCOPE, "report", "--format", "csv", path, "summary"],
                          capture_output=True, text=True, timeout=120)


def expected():
    return report(TRACE).stdout


def answer_problem(p):
    """None when p exited 0 printing the summary the trace itself gives,
    else its status and error."""
    if p.returncode != 0 or p.stdout != expected():
        return "exit %d: %s" % (p.returncode, p.stderr.strip())
    return None


def copied(tmp, name):
    """A copy of the trace, as tmp/name."""
    path = os.path.join(tmp, name)
    shutil.copy(TRACE, path)
    return path


def hot_journal(tmp):
    path = copied(tmp, "hot.db")
    # A writer killed mid-transaction, its changes spilled to the file.
    code = ("import sqlite3, os\n"
            "c = sqlite3.connect(%r, isolation_level=None)\n"
            "c.execute('PRAGMA cache_size=1')\n"
            "c.execute('BEGIN')\n"
            "c.execute('UPDATE block SET bytes = bytes + 1')\n"
            "c.execute('UPDATE series SET allocated_bytes = allocated_bytes + 1')\n"
            "os._exit(0)\n" % path)
    subprocess.run([sys.executable, "-c", code], check=True)
    if not os.path.exists(path + "-journal"):
        return "no hot journal was made"
    p = report(path)
    return answer_problem(p)


def locked(tmp):
    path = copied(tmp, "locked.db")
    code = ("import sqlite3, time, sys\n"
            "c = sqlite3.connect(%r, isolation_level=None)\n"
            "c.execute('BEGIN EXCLUSIVE')\n"
            "c.execute('UPDATE meta SET value = value WHERE key = \"host\"')\n"
            "print('locked', flush=True)\n"
            "time.sleep(2)\n"
            "c.execute('COMMIT')\n" % path)
    holder = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    holder.stdout.readline()
    p = report(path)
    holder.wait()
    return answer_problem(p)


def concurrent_finalize(tmp):
    path = copied(tmp, "unfinalized.db")
    db = sqlite3.connect(path)
    db.execute("UPDATE meta SET value = 0 WHERE key = 'finalized'")
    db.commit()
    db.close()
    # Readers started together: one finalizes, the others wait for it.
    # What this build's finalizer makes of it (a trace of an older schema
    # is brought to the current one as it is finalized), read alone.
    alone = os.path.join(tmp, "alone.db")
    shutil.copy(path, alone)
    want = report(alone).stdout
    # ... which adds only the columns that schema lacked.
    strip = lambda text: [line.split(",")[:17] for line in text.splitlines()]
    if strip(want) != strip(expected()):
        return "finalized again, the summary changed:\n%s\n%s" % (want, expected())
    procs = [subprocess.Popen([VRAMSCOPE, "report", "--format", "csv", path, "summary"],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for _ in range(4)]
    for p in procs:
        out, err = p.communicate(timeout=120)
        if p.returncode != 0 or out != want:
            return "exit %d: %s" % (p.returncode, err.strip())
    return None


def no_wal_index(tmp):
    # A WAL-mode trace in a folder that cannot be written: no WAL index can
    # be made beside it.  Root writes anywhere, so root reads it as nobody.
    folder = os.path.join(tmp, "ro")
    os.mkdir(folder)
    path = os.path.join(folder, "wal.db")
    shutil.copy(TRACE, path)
    db = sqlite3.connect(path)
    db.execute("PRAGMA journal_mode=WAL")
    db.close()
    os.chmod(path, 0o644)
    os.chmod(folder, 0o555)
    os.chmod(tmp, 0o755)
    cmd = [VRAMSCOPE, "report", "--format", "csv", path, "summary"]
    if os.geteuid() == 0:
        setpriv = shutil.which("setpriv")
        if setpriv is None:
            return "SKIP"
        cmd = [setpriv, "--reuid=65534", "--regid=65534", "--clear-groups"] + cmd
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    os.chmod(folder, 0o755)
    return answer_problem(p)


def empty_with_wal(tmp):
    path = os.path.join(tmp, "cut.db")
    code = ("import sqlite3, os\n"
            "c = sqlite3.connect(%r)\n"
            "c.execute('PRAGMA journal_mode=WAL')\n"
            "c.execute('PRAGMA wal_autocheckpoint=0')\n"
            "c.execute('CREATE TABLE t (x)')\n"
            "c.execute('INSERT INTO t VALUES (1)')\n"
            "c.commit()\n"
            "os._exit(0)\n" % path)
    subprocess.run([sys.executable, "-c", code], check=True)
    os.truncate(path, 0)
    if os.path.exists(path + "-shm"):
        os.remove(path + "-shm")
    with open(path + "-wal", "rb") as f:
        wal = f.read()
    p = report(path)
    err = p.stderr.strip().splitlines()
    if p.returncode != 1 or len(err) != 1 or "write-ahead log" not in err[0]:
        return "exit %d: %r" % (p.returncode, err)
    if not os.path.exists(path + "-wal"):
        return "the WAL was deleted"
    with open(path + "-wal", "rb") as f:
        if f.read() != wal:
            return "the WAL was changed"
    return None


CASES = [
    ("a hot journal left by a killed writer is rolled back", hot_journal),
    ("a trace another process holds locked is waited for", locked),
    ("readers started while another finalizes the trace wait for it", concurrent_finalize),
    ("a WAL-mode trace in a folder that cannot be written is read", no_wal_index),
    ("an empty file beside a WAL is refused and the WAL kept", empty_with_wal),
]

print("1..%d" % len(CASES))
failed = 0
with tempfile.TemporaryDirectory() as tmp:
    for i, (name, fn) in enumerate(CASES, 1):
        problem = fn(tmp)
        if problem == "SKIP":
            print("ok %d - # SKIP %s: needs setpriv to drop root" % (i, name))
        elif problem is None:
            print("ok %d - %s" % (i, name))
        else:
            failed = 1
            print("not ok %d - %s: %s" % (i, name, problem))
sys.exit(failed)

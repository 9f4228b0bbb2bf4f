#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""test-recover-hostile.py — `vramscope recover` owns only its spool.

A spool is made as a killed `record` leaves it (vs-test-spool-writer: a
process trace in WAL mode, its writer killed; run.info beside it), and
one of a killed `record --window` (make-window-stream.py under record,
record killed after its rounds: a live trace).  Then recover runs on
copies of them made hostile, and each time the files outside the spool
are compared, byte for byte, with what they were before:

  - an output inside the spool (directly, through a linked folder) is
    refused, the spool left as it was;
  - files that are not the recording's (notes, results, a folder) stay,
    and so does the spool's folder with them; a folder without run.info
    keeps everything;
  - process traces that are links (symbolic, hard) to traces elsewhere are
    left out with one line each, never written; a linked live trace or
    import stops recover before it writes anything;
  - a finished trace of another schema put in the spool is left out with
    one line, the rest recovered;
  - run.info naming a live process that is not vramscope: refused, and
    --force recovers; naming a vramscope: refused even with --force; a
    process trace whose pid a later process got is no running writer;
  - the windowed spool: a recover that fails late (run.info's window
    edited) or is interrupted (SIGINT, SIGTERM) at each of its phases
    leaves the live trace as it was, no temporary file, and the rerun
    writes the whole trace;
  - the live trace's append state edited (marks, inputs, its seal):
    refused in one line, never continued into duplicate or missing events;
  - huge ids in a process trace: recover ends with a trace or one line.

Usage: test-recover-hostile.py VRAMSCOPE SPOOL_WRITER MAKE_WINDOW_STREAM
"""
import hashlib
import os
import shutil
import signal
import socket
import sqlite3
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from tap import done, ok  # noqa: E402

vramscope, writer, make_stream = sys.argv[1:4]

root = tempfile.mkdtemp()
data = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data")


def run(*args, **kw):
    p = subprocess.run([vramscope] + list(args), capture_output=True, text=True, **kw)
    return p.returncode, p.stderr


def state(top, skip=()):
    """Every entry under top (links not followed, the paths in skip and
    below them left out): its kind and, for files, size and bytes."""
    out = {}
    for d, dirs, files in os.walk(top):
        for name in dirs + files:
            p = os.path.join(d, name)
            if any(p == s or p.startswith(s + "/") for s in skip):
                continue
            st = os.lstat(p)
            if os.path.islink(p):
                out[p] = ("link", os.readlink(p))
            elif os.path.isdir(p):
                out[p] = ("dir",)
            else:
                with open(p, "rb") as f:
                    out[p] = ("file", st.st_size, hashlib.sha256(f.read()).hexdigest())
    return out


def changed(before, after):
    return sorted(k for k in set(before) | set(after) if before.get(k) != after.get(k))


def fingerprint(trace):
    """What a trace holds, as text: its summary (per allocator the peaks,
    the allocations and frees counted, the failures)."""
    p = subprocess.run([vramscope, "report", trace, "summary", "--format", "csv"],
                       capture_output=True, text=True)
    return p.stdout if p.returncode == 0 else None


def wait_for(cond, tries=400, pause=0.05):
    """Waits for cond, looking tries times; a signal's moment is found by
    looking often (pause 1 ms when tries is large)."""
    if tries > 1000:
        pause = 0.001
    for _ in range(tries):
        if cond():
            return True
        time.sleep(pause)
    return cond()


def dead_pid():
    p = subprocess.Popen(["true"])
    p.wait()
    return p.pid


def write_run_info(spool, record_pid, window_ns=0):
    with open(os.path.join(spool, "run.info"), "w") as f:
        f.write("host %s\nrecord_pid %d\nprogram_pid %d\nstart_ns 1\noutput %s/run.db\n"
                % (socket.gethostname(), record_pid, record_pid, spool)
                + ("window_ns %d\n" % window_ns if window_ns else ""))


def copy_spool(src, name):
    dst = os.path.join(root, name, ".vramscope-spool-0-test")
    shutil.copytree(src, dst, symlinks=True)
    return dst


def temporaries(folder):
    return [n for n in os.listdir(folder) if ".tmp-" in n]


# --- the plain spool: a process trace whose writer was killed -----------
base = os.path.join(root, "base", ".vramscope-spool-1-base")
os.makedirs(base)
w = subprocess.Popen([writer, base, "2", "10000", "500"], stdout=subprocess.PIPE, text=True)
for line in w.stdout:
    if line.startswith("mid-batch"):
        break
w.kill()
w.wait()
write_run_info(base, dead_pid())
ref_spool = copy_spool(base, "ref")
rc, err = run("recover", "-q", ref_spool, "-o", os.path.join(root, "ref", "ref.db"))
ref = fingerprint(os.path.join(root, "ref", "ref.db")) if rc == 0 else None
ok(rc == 0 and not os.path.exists(ref_spool), "the plain spool recovers, and is removed", err)


def recover_checked(name, mutate, *extra, out_in=None):
    """Copies the plain spool, lets mutate(spool, folder) make it hostile,
    runs recover into out_in(spool, folder) (default folder/out.db).
    Returns (rc, stderr, spool, output, files outside the spool changed
    other than the output)."""
    spool = copy_spool(base, name)
    folder = os.path.dirname(spool)
    mutate(spool, folder)
    out = out_in(spool, folder) if out_in else os.path.join(folder, "out.db")
    before = state(root, skip=[spool, out])
    rc, err = run("recover", spool, "-o", out, *extra)
    after = state(root, skip=[spool, out])
    return rc, err, spool, out, changed(before, after)


def lines(err):
    return [l for l in err.splitlines() if l.strip()]


# 1. An output inside the spool.
for how, out_in in (("directly", lambda s, f: os.path.join(s, "run.db")),
                    ("through a linked folder", lambda s, f: os.path.join(f, "link", "run.db"))):
    def mk(s, f):
        os.symlink(s, os.path.join(f, "link"))
    spool_before = []

    def snap(s, f, mk=mk):
        mk(s, f)
        spool_before.append(state(s))
    rc, err, spool, out, moved = recover_checked("inside-" + how.split()[0], snap, out_in=out_in)
    ok(rc == 1 and len(lines(err)) == 1 and "inside the spool" in err
       and state(spool) == spool_before[0] and not moved,
       "an output inside the spool (%s) is refused in one line, the spool as it was" % how, err)

# 2. Files that are not the recording's.
def add_others(s, f):
    for n in ("notes.txt", "results.csv", "process-notes.txt", "torch-1.db.bak"):
        with open(os.path.join(s, n), "w") as fh:
            fh.write("mine\n")
    os.mkdir(os.path.join(s, "sub"))
rc, err, spool, out, moved = recover_checked("others", add_others)
left = sorted(os.listdir(spool)) if os.path.isdir(spool) else []
ok(rc == 0 and left == ["notes.txt", "process-notes.txt", "results.csv", "sub", "torch-1.db.bak"]
   and fingerprint(out) == ref and not moved,
   "files that are not the recording's stay, with the spool's folder; the recording's go", err)


def no_info(s, f):
    os.unlink(os.path.join(s, "run.info"))
rc, err, spool, out, moved = recover_checked("no-info", no_info)
ok(rc == 0 and os.path.isdir(spool) and any(n.startswith("process-") for n in os.listdir(spool))
   and fingerprint(out) == ref and not moved,
   "a folder without run.info is not taken for a spool record made: nothing in it is removed",
   err)

# 10. Links.
elsewhere = os.path.join(root, "elsewhere")
os.makedirs(elsewhere)
other = copy_spool(base, "other-run")
other_trace = [os.path.join(other, n) for n in os.listdir(other) if n.endswith(".db")][0]
for n in os.listdir(other):
    if n.startswith("process-"):
        shutil.move(os.path.join(other, n), os.path.join(elsewhere, n.replace("process-", "p-")))
outside = os.path.join(elsewhere, os.path.basename(other_trace).replace("process-", "p-"))


def sym_trace(s, f):
    os.symlink(outside, os.path.join(s, "process-999999977-1.db"))


def hard_trace(s, f):
    os.link(outside, os.path.join(s, "process-999999978-1.db"))


def sym_wal(s, f):
    t = [n for n in os.listdir(s) if n.endswith(".db")][0]
    os.rename(os.path.join(s, t + "-wal"), os.path.join(elsewhere, "moved-wal"))
    os.symlink(os.path.join(elsewhere, "moved-wal"), os.path.join(s, t + "-wal"))


for what, mutate in (("a symbolic link", sym_trace), ("a second name (hard link)", hard_trace)):
    rc, err, spool, out, moved = recover_checked("link-" + what.split()[1], mutate)
    ok(rc == 0 and len([l for l in lines(err) if "left out" in l]) == 1 and fingerprint(out) == ref
       and not moved and os.path.isdir(spool),
       "a process trace that is %s to a trace elsewhere is left out in one line, never written, "
       "never removed" % what, "%s\nchanged: %s" % (err, moved))
rc, err, spool, out, moved = recover_checked("link-wal", sym_wal)
ok(not moved and os.path.isdir(spool),
   "a process trace whose log is a link elsewhere: nothing outside the spool is written",
   "%s\nchanged: %s" % (err, moved))
for name in ("live.trace", "torch-5.db"):
    def link_written(s, f, name=name):
        os.symlink(outside, os.path.join(s, name))
    rc, err, spool, out, moved = recover_checked("link-" + name, link_written)
    ok(rc == 1 and len(lines(err)) == 1 and "never writes through" in err and not moved
       and not os.path.exists(out) and not temporaries(os.path.dirname(out)),
       "a %s that is a link elsewhere stops recover before it writes: one line" % name,
       "%s\nchanged: %s" % (err, moved))

# 13. A finished trace of another schema in the spool.
def foreign(s, f):
    shutil.copy(os.path.join(data, "sample-leak.db"), os.path.join(s, "process-999999979-1.db"))
rc, err, spool, out, moved = recover_checked("foreign", foreign)
ok(rc == 0 and len([l for l in lines(err) if "left out" in l]) == 1 and "schema 1" in err
   and fingerprint(out) == ref and not moved,
   "a finished trace of schema 1 in the spool is left out in one line, the rest recovered", err)

# Huge ids: a row id near 2^63 in the process trace.
def huge(s, f):
    t = [os.path.join(s, n) for n in os.listdir(s) if n.endswith(".db")][0]
    db = sqlite3.connect(t)
    db.execute("UPDATE mem_event SET id = 9223372036854775000 WHERE id = (SELECT max(id) FROM mem_event)")
    db.commit()
    db.close()
rc, err, spool, out, moved = recover_checked("huge", huge)
ok(rc in (0, 1) and (rc == 0 or len(lines(err)) == 1) and not moved
   and not temporaries(os.path.dirname(out)),
   "a process trace with an id near 2^63: a trace or one line, nothing outside changed",
   "rc %d %s" % (rc, err))

# 14. run.info naming a live process.
sleeper = subprocess.Popen(["sleep", "60"])
rc, err, spool, out, moved = recover_checked(
    "stale", lambda s, f: write_run_info(s, sleeper.pid))
ok(rc == 1 and len(lines(err)) == 1 and "--force" in err and not moved,
   "run.info naming a live process that is not vramscope: refused in one line naming --force", err)
rc, err, spool, out, moved = recover_checked(
    "stale-force", lambda s, f: write_run_info(s, sleeper.pid), "--force")
ok(rc == 0 and fingerprint(out) == ref and not moved,
   "and --force recovers it", err)
# A process trace named for a pid that a process got years after the
# trace was made (its name's time, 2001) is no writer still running; one
# made after the process started is.
def copy_trace(dst):
    for side in ("", "-wal"):
        if os.path.exists(outside + side):
            shutil.copy(outside + side, dst + side)


def reused(s, f):
    copy_trace(os.path.join(s, "process-%d-1000000000.db" % sleeper.pid))
rc, err, spool, out, moved = recover_checked("reused", reused)
ok(rc == 0 and fingerprint(out) != ref and not moved,
   "a process trace whose pid a later process got is recovered, not taken for a running one",
   err)


def running(s, f):
    copy_trace(os.path.join(s, "process-%d-9000000000000000000.db" % sleeper.pid))
rc, err, spool, out, moved = recover_checked("running", running)
ok(rc == 1 and len(lines(err)) == 1 and "still running" in err and not moved,
   "one made while its process runs stops recover in one line", err)
sleeper.kill()
sleeper.wait()
# Its own spool beside its output, away from the files compared.
vs_dir = tempfile.mkdtemp()
vs = subprocess.Popen([vramscope, "record", "-q", "-o", os.path.join(vs_dir, "vs-sleep.db"),
                       "--", "sleep", "60"], stderr=subprocess.DEVNULL)
rc, err, spool, out, moved = recover_checked(
    "live-record", lambda s, f: write_run_info(s, vs.pid), "--force")
ok(rc == 1 and len(lines(err)) == 1 and "still running" in err and not moved,
   "run.info naming a running vramscope: refused even with --force", err)
vs.send_signal(signal.SIGINT)
vs.wait()
shutil.rmtree(vs_dir, ignore_errors=True)

# 11. SIGINT and SIGTERM at each phase of a plain recover.
hits = 0
for k, sig in enumerate([signal.SIGINT, signal.SIGTERM] * 3):
    spool = copy_spool(base, "sig-%d" % k)
    folder = os.path.dirname(spool)
    out = os.path.join(folder, "out.db")
    before = state(root, skip=[spool, out])
    p = subprocess.Popen([vramscope, "recover", "-q", spool, "-o", out],
                         stderr=subprocess.PIPE, text=True)
    # Phase k // 2: at once, once the temporary file exists, once SQLite
    # writes it (its journal or log beside it).
    phase = k // 2
    wait_for(lambda: p.poll() is not None or phase == 0 or (temporaries(folder) and (
        phase == 1 or any(n.endswith(("-journal", "-wal")) for n in temporaries(folder)))),
        tries=20000)
    if p.poll() is None:
        p.send_signal(sig)
    p.wait()
    after = state(root, skip=[spool, out])
    if p.returncode == -sig:
        hits += 1
    clean = not temporaries(folder) and not changed(before, after)
    if p.returncode == -sig:
        rc, err = run("recover", "-q", spool, "-o", out)
        good = clean and rc == 0 and fingerprint(out) == ref
    else:
        good = clean and p.returncode == 0 and fingerprint(out) == ref
    ok(good, "%s in phase %d of recover: no temporary file, nothing outside changed, the "
       "rerun writes the whole trace (rc %d)" % (signal.Signals(sig).name, phase, p.returncode),
       "%s %s" % (temporaries(folder), changed(before, after)))
ok(hits >= 2, "the signals came while recover ran (%d of 6)" % hits)

# --- the windowed spool: record --window killed after its rounds --------
prog = os.path.join(root, "prog.sh")
with open(prog, "w") as f:
    f.write('printf "pid %%s\\nreason stream\\ndevice 0 GPU-00000000-0000-0000-0000-0000000000aa '
            '85899345920 Test GPU\\n" $$ >"$VRAMSCOPE_SPOOL_DIR/torch-$$.stream.info"\n'
            'python3 "%s" "$VRAMSCOPE_SPOOL_DIR/torch-$$.stream" $$ 4000 pace 2000 0.05 '
            '>"$1/want.json"\n'
            # The program runs on until record is killed.
            'while [ ! -e "$1/go" ]; do sleep 0.05; done\n' % make_stream)
env = dict(os.environ, VRAMSCOPE_WINDOW_LIVE_MS="200", VRAMSCOPE_WINDOW_LIVE_LAG_MS="1000",
           VRAMSCOPE_TORCH_FOLLOW_MS="40")


def wspool_dir(d):
    spools = [n for n in os.listdir(d) if n.startswith(".vramscope-spool-")]
    return os.path.join(d, spools[0]) if spools else d


def spool_now(d):
    """The spool's own state: each file's name, size and change time."""
    sp = wspool_dir(d)
    if sp == d:
        return ()
    try:
        return tuple(sorted((n, st.st_size, st.st_mtime_ns) for n in os.listdir(sp)
                            for st in [os.stat(os.path.join(sp, n))]))
    except OSError:
        return None


def live_rounds(d):
    """Whether the rounds have kept the window's state in the live trace."""
    live = os.path.join(wspool_dir(d), "live.trace")
    if not os.path.exists(live):
        return False
    try:
        db = sqlite3.connect("file:%s?mode=ro" % live, uri=True)
        # The window applied so far: its state is kept.
        n = db.execute("SELECT count(*) FROM window_live").fetchone()[0]
        db.close()
        return n > 0
    except sqlite3.Error:
        return False


def imports_now(d):
    """The streams' imports in d's spool (torch-PID.db)."""
    return {n for n in os.listdir(wspool_dir(d)) if n.startswith("torch-") and n.endswith(".db")}


def wait_rounds(d, rec):
    """Waits for the rounds' state in d's spool.  A round finalizes the
    live trace, which on a loaded machine takes long: the bound counts
    only the polls (0.2 s apart) that found the spool's files as they
    were, so a slow round that still writes is waited for, and only a
    spool standing still reaches the bound.  'rounds', 'given up' (an
    import removed while the program ran: record gave it up, to read its
    stream at the end, and no round will append it), 'record ended' or
    'still'."""
    last, still, seen = None, 0, set()
    while still < 600:
        if live_rounds(d):
            return "rounds"
        if rec.poll() is not None:
            return "record ended"
        imports = imports_now(d)
        names = os.listdir(wspool_dir(d))
        # A removed import whose log stays (the rounds still hold it open).
        if seen - imports or any(n.endswith(".db-wal") and n[:-4] not in names for n in names
                                 if n.startswith("torch-")):
            return "given up"
        seen |= imports
        now = spool_now(d)
        still = still + 1 if now == last else 0
        last = now
        time.sleep(0.2)
    return "still"


# The streams' import and the rounds share the import's file: on a loaded
# machine the import may find it locked too long and be given up (the
# stream is then read at the end, so the trace is whole, but the live
# trace this part needs never comes).  A bounded number of recordings.
for attempt in range(3):
    wdir = os.path.join(root, "win-%d" % attempt)
    os.makedirs(wdir)
    rec = subprocess.Popen([vramscope, "record", "-q", "--window", "10s", "-o",
                            os.path.join(wdir, "w.db"), "--", "sh", prog, wdir], env=env,
                           stderr=subprocess.DEVNULL)
    got = wait_rounds(wdir, rec)
    rec.kill()
    rec.wait()
    open(os.path.join(wdir, "go"), "w").close()
    # The program (sh, its last child) ends: the spool's writers are gone.
    wait_for(lambda: not any(os.path.exists("/proc/%s" % n[len("torch-"):-len(".stream")])
                             for n in os.listdir(wspool_dir(wdir)) if n.startswith("torch-")
                             and n.endswith(".stream")))
    if got != "given up":
        break
    print("# recording %d: the stream's import was given up while the program ran" % attempt)
wspool = wspool_dir(wdir)
ok(got == "rounds" and os.path.exists(os.path.join(wspool, "live.trace")),
   "record --window killed after its rounds left a live trace", got)
if got != "rounds":
    done()  # what follows needs the rounds' state
wref_spool = copy_spool(wspool, "wref")
rc, err = run("recover", "-q", wref_spool, "-o", os.path.join(root, "wref", "ref.db"))
wref = fingerprint(os.path.join(root, "wref", "ref.db")) if rc == 0 else None
ok(rc == 0, "the windowed spool recovers", err)


def live_state(spool):
    return {n: v for n, v in state(spool).items() if "live.trace" in n}


def rounds_dropped(spool):
    """Whether the rounds had dropped part of the run from the live trace
    (its pieces start after the run's origin): only then does a window
    edited afterwards contradict what the live trace kept."""
    db = sqlite3.connect("file:%s?mode=ro" % os.path.join(spool, "live.trace"), uri=True)
    kept = dict(db.execute("SELECT key, value FROM window_live"))
    db.close()
    return kept.get("from", 0) > kept.get("origin", 0)


# 3. A failure late in the windowed recover: run.info's window edited.
dropped = rounds_dropped(wspool)
spool = copy_spool(wspool, "wfail")
folder = os.path.dirname(spool)
info = os.path.join(spool, "run.info")
with open(info) as f:
    text = f.read()
with open(info, "w") as f:
    f.write(text.replace("window_ns 10000000000", "window_ns 20000000000"))
live_before = live_state(spool)
before = state(root, skip=[spool])
rc, err = run("recover", spool, "-o", os.path.join(folder, "out.db"))
numbers = [w for w in err.replace(",", " ").split() if w.isdigit()]
if dropped or rc != 0:
    ok(rc == 1 and len(lines(err)) == 1 and len(numbers) == len(set(numbers))
       and live_state(spool) == live_before and not changed(before, state(root, skip=[spool]))
       and not temporaries(folder),
       "a windowed recover failing late says why in one line and leaves the live trace as it was",
       err)
else:
    # How far the rounds got when record was killed depends on the
    # machine's speed: where they had dropped nothing yet, the wider
    # window may contradict nothing kept, and is then applied.
    print("# the rounds had dropped nothing before record was killed")
    ok(rc == 0 and os.path.exists(os.path.join(folder, "out.db")) and not temporaries(folder),
       "a windowed recover whose window was widened before any round dropped a part applies it",
       err)
    # That recover took the spool: the rerun below starts from a new copy.
    spool = copy_spool(wspool, "wfail-rerun")
    folder = os.path.dirname(spool)
    info = os.path.join(spool, "run.info")
os.makedirs(spool, exist_ok=True)
with open(info, "w") as f:
    f.write(text)
rc, err = run("recover", "-q", spool, "-o", os.path.join(folder, "out.db"))
ok(rc == 0 and fingerprint(os.path.join(folder, "out.db")) == wref,
   "and the rerun writes the whole trace", err)

# 3, 11. SIGINT and SIGTERM at each phase of a windowed recover.
whits = 0
for k, sig in enumerate([signal.SIGINT, signal.SIGTERM]):
    spool = copy_spool(wspool, "wsig-%d" % k)
    folder = os.path.dirname(spool)
    out = os.path.join(folder, "out.db")
    before = state(root, skip=[spool, out])
    live_before = live_state(spool)
    p = subprocess.Popen([vramscope, "recover", "-q", spool, "-o", out],
                         stderr=subprocess.PIPE, text=True)
    phase = k
    wait_for(lambda: p.poll() is not None or (temporaries(folder) and phase == 0) or (
        phase == 1 and any(n.endswith(("-journal", "-wal")) for n in temporaries(folder))),
        tries=20000)
    if p.poll() is None:
        p.send_signal(sig)
    p.wait()
    if p.returncode == -sig:
        whits += 1
    clean = (not temporaries(folder) and not changed(before, state(root, skip=[spool, out]))
             and (p.returncode == 0 or live_state(spool) == live_before))
    rc, err = (0, "") if p.returncode == 0 else run("recover", "-q", spool, "-o", out)
    ok(clean and rc == 0 and fingerprint(out) == wref,
       "%s in phase %d of a windowed recover: the live trace as it was, no temporary file, the "
       "rerun writes the whole trace (rc %d)" % (signal.Signals(sig).name, phase, p.returncode),
       "%s %s" % (temporaries(folder), err))
ok(whits >= 1, "the signals came while the windowed recover ran (%d of 2)" % whits)

# 16. The live trace's append state edited: refused, never continued into
# duplicate or missing events.
for k, (what, sql) in enumerate((("a mark moved back", "UPDATE merge_append_mark SET id = id - 5 WHERE id > 5"),
                  ("a mark moved on", "UPDATE merge_append_mark SET id = id + 1 WHERE id > 5"),
                  ("an input forgotten", "DELETE FROM merge_append_input"),
                  ("the seal removed", "DELETE FROM merge_append_live WHERE tbl < 0"))):
    spool = copy_spool(wspool, "wstate-%d" % k)
    db = sqlite3.connect(os.path.join(spool, "live.trace"))
    db.execute(sql)
    db.commit()
    db.close()
    folder = os.path.dirname(spool)
    before = state(root, skip=[spool])
    rc, err = run("recover", spool, "-o", os.path.join(folder, "out.db"))
    ok(rc == 1 and len(lines(err)) == 1 and "seal" in err
       and not changed(before, state(root, skip=[spool])) and not temporaries(folder),
       "the live trace's state edited (%s): refused in one line" % what, err)

# A linked live trace is never written.
spool = copy_spool(wspool, "wlink")
live = os.path.join(spool, "live.trace")
shutil.move(live, os.path.join(elsewhere, "live.trace"))
os.symlink(os.path.join(elsewhere, "live.trace"), live)
before = state(root, skip=[spool])
rc, err = run("recover", spool, "-o", os.path.join(os.path.dirname(spool), "out.db"))
ok(rc == 1 and len(lines(err)) == 1 and not changed(before, state(root, skip=[spool])),
   "a live trace that is a link elsewhere is never written: one line", err)

shutil.rmtree(root, ignore_errors=True)
done()

#!/bin/sh
# SPDX-License-Identifier: MIT
# test-torch-follow.sh — `record` imports PyTorch's allocator stream while
# the program runs, without a GPU: a program writes its stream over time,
# as the hook's tracker does (write-stream-slowly.py: the file grows in
# chunks, each record's action word stored last, each new Python stack
# written to the stacks file before the record naming it), and the trace
# must hold every complete record exactly once, with its stack, however
# the run ends:
#   - the program is killed by SIGKILL mid-way through a record;
#   - record gets SIGINT and the program goes on writing before it exits;
#   - a normal exit whose final snapshot marker is followed by Python's
#     shutdown frees, imported while the program ran and cut again;
#   - record itself is killed (SIGKILL) with the stream half imported, and
#     `recover` writes the trace from the spool it left;
#   - the same, with a final snapshot that (PyTorch's history on) is taken
#     instead of the stream.
# Each run keeps record_stream_live_records (--timings): records were
# imported while the program ran, not only after.  The traces with and
# without following (VRAMSCOPE_TORCH_FOLLOW_MS=0) hold the same rows.
#
# Usage: test-torch-follow.sh VRAMSCOPE WRITE_STREAM SNAPSHOTS_DIR   (TAP output)
set -u
vramscope=$1 write=$2 snaps=$3
. "$(dirname "$0")/../lib.sh"
export VRAMSCOPE_TORCH_FOLLOW_MS=40
# The traces' tables are read through tests/vs_trace_db.py where there is
# one (a compacted trace's), else directly.
vs_trace_db_env "$vramscope"

# check TRACE COUNT: "1 LIVE" when the trace's pytorch events are exactly
# those of the first COUNT records, each with its stack, else "0 why".
check() {
  python3 "$write" --expect "$2" >"$dir/expect.json"
  python3 - "$1" "$dir/expect.json" <<'PY' 2>&1
import json, os, sys
sys.path.insert(0, os.path.join(os.environ["VS_GPU_DIR"]))
from vs_stream_files import trace_stacks
try:
    from vs_trace_db import connect  # compacted traces read as plain tables
except ImportError:
    from sqlite3 import connect
db = connect(sys.argv[1])
want = json.load(open(sys.argv[2]))
stack = trace_stacks(db)
def frames(sid):
    return [list(f) for f in stack(sid)] if sid else []
alloc = db.execute("SELECT e.ts, e.op, e.address, e.requested_bytes, e.stack_id FROM alloc_event e"
                   " JOIN allocator a ON a.id = e.allocator_id WHERE a.kind = 'pytorch'"
                   " ORDER BY e.ts, e.id").fetchall()
oom = db.execute("SELECT ts, requested_bytes, device_free_bytes, stack_id FROM failed_alloc"
                 " ORDER BY ts, id").fetchall()
st = want["stacks"]
def want_frames(sid):
    return st[str(sid)] if sid else []
got_a = [[r[0], r[1], r[2], r[3], frames(r[4])] for r in alloc]
want_a = [[r[0], r[1], r[2], r[3], [list(f) for f in want_frames(r[4])]] for r in want["alloc"]]
got_o = [[r[0], r[1], r[2], frames(r[3])] for r in oom]
want_o = [[r[0], r[1], r[2], [list(f) for f in want_frames(r[3])]] for r in want["oom"]]
live = db.execute("SELECT value FROM meta WHERE key = 'record_stream_live_records'").fetchone()
if got_a != want_a:
    diff = next((i for i, (x, y) in enumerate(zip(got_a, want_a)) if x != y), min(len(got_a), len(want_a)))
    print(0, "alloc_event: %d rows, want %d; first difference at %d" % (len(got_a), len(want_a), diff))
elif got_o != want_o:
    print(0, "failed_alloc: %d rows, want %d" % (len(got_o), len(want_o)))
else:
    print(1, live[0] if live else -1)
PY
}
export VS_GPU_DIR
VS_GPU_DIR=$(cd "$(dirname "$write")/../gpu" && pwd)
done_count() { cat "$dir"/*.done 2>/dev/null | head -n 1; }

# imported DIR: the allocator events imported so far into the spool
# under DIR (0 before there is one, and while its tables are being made).
imported() {
  python3 -c '
import glob, sqlite3, sys
f = glob.glob(sys.argv[1] + "/.vramscope-spool-*/torch-*.db")
try:
    n = sqlite3.connect(f[0]).execute("select count(*) from alloc_event").fetchone()[0] if f else 0
except sqlite3.Error:
    n = 0
print(n)' "$1" 2>/dev/null || echo 0
}
# gate_once_imported DIR GATE (in the background): creates GATE once record
# imported some of the stream into the spool under DIR, so that a program
# run with --gate GATE goes on only then, however slow the machine.
gate_once_imported() {
  i=0
  while [ "$(imported "$1")" = 0 ] && [ $i -lt 1000 ]; do sleep 0.1; i=$((i + 1)); done
  touch "$2"
}

# 1. Killed by SIGKILL after 3 of 6 batches, mid-way through a record; the
# program goes on after its first batch once record imported some of it.
rm -f "$dir"/*.done "$dir/gate"
gate_once_imported "$dir" "$dir/gate" &
"$vramscope" record -q --timings -o "$dir/k.db" -- python3 "$write" "$dir" --batches 6 \
  --kill-after 3 --gate "$dir/gate" 2>/dev/null
rc=$?
wait
set -- $(check "$dir/k.db" "$(done_count)")
ok $([ $rc = 137 ] && [ "${1:-0}" = 1 ] && echo 0 || echo 1) \
  "a program killed mid-write: every complete record lands once, the torn one not (rc $rc, ${2:-} ${3:-} ${4:-} ${5:-} ${6:-} ${7:-} ${8:-})"
ok $([ "${1:-0}" = 1 ] && [ "${2:-0}" -gt 0 ] && echo 0 || echo 1) \
  "its records were imported while it ran (${2:-?} of $(done_count))"

# 2. record gets SIGINT; the program handles it and writes 2 more batches.
rm -f "$dir"/*.done "$dir/ready"
"$vramscope" record -q --timings -o "$dir/i.db" -- python3 "$write" "$dir" --batches 2 \
  --on-int 2 2>/dev/null &
rec=$!
poll 1000 0.1 test -e "$dir/ready"
sleep 0.5
kill -INT $rec
wait $rec
rc=$?
count=$(done_count)
set -- $(check "$dir/i.db" "$count")
ok $([ $rc = 130 ] && [ "${1:-0}" = 1 ] && [ "${count:-0}" = 1200 ] && echo 0 || echo 1) \
  "a stream that grows after record got SIGINT lands whole ($count records, rc $rc, ${2:-} ${3:-} ${4:-} ${5:-} ${6:-})"
ok $([ "${1:-0}" = 1 ] && [ "${2:-0}" -gt 0 ] && echo 0 || echo 1) \
  "it was imported while it ran (${2:-?} records)"

# 3. A normal exit: the final snapshot's marker, then Python's shutdown
# frees, imported while the program ran; the stream is the level (no
# history), so the trace stops at the marker.  The same without following.
for follow in 40 0; do
  rm -f "$dir"/*.done
  VRAMSCOPE_TORCH_FOLLOW_MS=$follow "$vramscope" record -q --timings -o "$dir/e$follow.db" -- \
    python3 "$write" "$dir" --batches 3 --exit --pickle "$snaps/train.pickle" 2>/dev/null
  rc=$?
  set -- $(check "$dir/e$follow.db" "$(done_count)")
  if [ $follow = 0 ]; then
    ok $([ $rc = 0 ] && [ "${1:-0}" = 1 ] && [ "${2:-0}" = -1 ] && echo 0 || echo 1) \
      "not followed (VRAMSCOPE_TORCH_FOLLOW_MS=0): the same events, all read after the exit (${2:-} ${3:-} ${4:-})"
  else
    ok $([ $rc = 0 ] && [ "${1:-0}" = 1 ] && [ "${2:-0}" -gt "$(done_count)" ] && echo 0 || echo 1) \
      "a normal exit: the shutdown frees, imported while it ran, are cut at the final snapshot's marker (${2:-} records live; ${3:-} ${4:-} ${5:-} ${6:-})"
  fi
done
same=$(python3 - "$dir/e40.db" "$dir/e0.db" <<'PY'
import sys
try:
    from vs_trace_db import connect  # compacted traces read as plain tables
except ImportError:
    from sqlite3 import connect
def dump(path):
    db = connect(path)
    out = []
    for t in ("alloc_event", "failed_alloc", "frame", "stack", "device", "allocator", "summary"):
        cols = [c[1] for c in db.execute("PRAGMA table_info(%s)" % t) if c[1] not in ("process_id",)]
        out.append((t, db.execute("SELECT %s FROM %s ORDER BY 1, 2" % (", ".join(cols), t)).fetchall()))
    return out
print(int(dump(sys.argv[1]) == dump(sys.argv[2])))
PY
)
ok $([ "$same" = 1 ] && echo 0 || echo 1) "followed or not, the trace's allocator tables are the same"

# 4. record itself is killed with the stream half imported; the program
# runs on to its end; recover writes every record once.
# The program waits after its first batch until record is killed.
rm -f "$dir"/*.done "$dir/ready" "$dir/gate"
mkdir "$dir/out4"
"$vramscope" record -q -o "$dir/out4/r.db" -- python3 "$write" "$dir" --batches 5 \
  --gate "$dir/gate" 2>/dev/null &
rec=$!
poll 1000 0.1 test -e "$dir/ready"
i=0 half=0
while [ "${half:-0}" = 0 ] && [ $i -lt 1000 ]; do
  sleep 0.1
  i=$((i + 1))
  half=$(imported "$dir/out4")
done
kill -KILL $rec
wait $rec 2>/dev/null
touch "$dir/gate"
i=0
while [ "$(done_count)" != 1500 ] && [ $i -lt 1000 ]; do sleep 0.1; i=$((i + 1)); done
sleep 0.3
spool=$(ls -d "$dir"/out4/.vramscope-spool-* 2>/dev/null | head -n 1)
"$vramscope" recover -q "$spool" -o "$dir/out4/rec.db" 2>"$dir/rec.err"
rc=$?
set -- $(check "$dir/out4/rec.db" "$(done_count)")
ok $([ $rc = 0 ] && [ "${1:-0}" = 1 ] && [ "${half:-0}" -gt 0 ] && echo 0 || echo 1) \
  "recover on a spool left half imported ($half events then): every record once (rc $rc, ${2:-} ${3:-} ${4:-} ${5:-} $(cat "$dir/rec.err"))"

# 5. The same, but the program keeps PyTorch's own history and exits
# normally with its final snapshot: recover takes the snapshot, not the
# stream half imported (the train.pickle figures).
rm -f "$dir"/*.done "$dir/ready" "$dir/gate"
mkdir "$dir/out5"
"$vramscope" record -q -o "$dir/out5/r.db" -- python3 "$write" "$dir" --batches 4 --history 1 \
  --exit --pickle "$snaps/train.pickle" --gate "$dir/gate" 2>/dev/null &
rec=$!
poll 1000 0.1 test -e "$dir/ready"
sleep 0.5
kill -KILL $rec
wait $rec 2>/dev/null
touch "$dir/gate"
spool=$(ls -d "$dir"/out5/.vramscope-spool-* 2>/dev/null | head -n 1)
i=0
while [ ! -e "$spool/torch-"*"-000001.pickle" ] && [ $i -lt 1000 ]; do sleep 0.1; i=$((i + 1)); done
sleep 0.5
"$vramscope" recover -q "$spool" -o "$dir/out5/rec.db" 2>"$dir/rec5.err"
rc=$?
got=$(python3 -c '
import json, sys
try:
    from vs_trace_db import connect  # compacted traces read as plain tables
except ImportError:
    from sqlite3 import connect
st = json.load(open(sys.argv[2]))["memory_stats"]
db = connect(sys.argv[1])
r = db.execute("SELECT s.alloc_count, s.peak_allocated_bytes FROM summary s JOIN allocator a ON a.id = s.allocator_id WHERE a.kind = \"pytorch\"").fetchall()
print(int(r == [(st["allocation.all.allocated"], st["requested_bytes.all.peak"])]), r)' "$dir/out5/rec.db" "$snaps/train.json" 2>&1)
ok $([ $rc = 0 ] && [ "${got%% *}" = 1 ] && echo 0 || echo 1) \
  "a half-imported stream is dropped where the final snapshot is taken instead (rc $rc, $got $(cat "$dir/rec5.err"))"
echo "1..$n"
exit $failed

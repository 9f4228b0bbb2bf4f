#!/bin/sh
# SPDX-License-Identifier: MIT
# test-torch-stream.sh — PyTorch's allocator level from the event stream
# the hook writes, without a GPU: a program leaves a stream (written by
# make-torch-stream.py exactly as vs_torch_stream.cpp lays it out, ending
# in a record its process did not finish) and dies without an exit
# snapshot; record merges the stream onto the program's process and GPU
# and the `pytorch` row holds exactly what the stream says.  When the
# process also left a final snapshot (at exit or at a signal), that
# snapshot (it has stacks) is taken, plus the stream's events after it; an
# OOM snapshot does not replace the stream.
# recover reads the stream as record does.
#
# Usage: test-torch-stream.sh VRAMSCOPE MAKE_STREAM SNAPSHOTS_DIR   (TAP output)
set -u
vramscope=$1 make=$2 snaps=$3
. "$(dirname "$0")/../lib.sh"
vs_trace_db_env "$vramscope"
check() { # TRACE WANT.json: prints 1 when the pytorch row is what WANT says
  python3 -c '
import json, sys, vs_trace_db
db = vs_trace_db.connect(sys.argv[1])
want = json.load(open(sys.argv[2]))
cols = ["alloc_count", "peak_allocated_bytes", "final_allocated_bytes", "peak_reserved_bytes", "final_reserved_bytes", "failed_alloc_count"]
row = db.execute("SELECT " + ", ".join("s." + c for c in cols) + " FROM summary s JOIN allocator a ON a.id = s.allocator_id WHERE a.kind = \"pytorch\"").fetchall()
dev = db.execute("SELECT uuid FROM device").fetchall()
procs = db.execute("SELECT count(*) FROM process").fetchone()[0]
got = dict(zip(cols, row[0])) if len(row) == 1 else row
ok = len(row) == 1 and all(got[c] == want[c] for c in cols)
print(int(ok), int(dev == [("GPU-00000000-0000-0000-0000-0000000000aa",)]), int(procs == 1), json.dumps(got).replace(" ", ""))
' "$1" "$2" 2>&1
}
info='printf "pid %s\nreason %s\ndevice 0 GPU-00000000-0000-0000-0000-0000000000aa 1000 Test GPU\n"'

# 1. A process killed before Python exits: only its stream.
cat >"$dir/killed.sh" <<EOS
python3 "$make" "\$VRAMSCOPE_SPOOL_DIR/torch-\$\$.stream" \$\$ >"$dir/want.json"
$info \$\$ stream >"\$VRAMSCOPE_SPOOL_DIR/torch-\$\$.stream.info"
: >"\$VRAMSCOPE_SPOOL_DIR/process-\$\$-1.db"
kill -KILL \$\$
EOS
"$vramscope" record -q -o "$dir/k.db" -- sh "$dir/killed.sh"; rc=$?
set -- $(check "$dir/k.db" "$dir/want.json")
ok $([ $rc = 137 ] && [ "${1:-0}" = 1 ] && echo 0 || echo 1) "a process killed by SIGKILL keeps its allocator level from the stream (rc $rc, ${4:-})"
ok $([ "${2:-0}" = 1 ] && [ "${3:-0}" = 1 ] && echo 0 || echo 1) "on its own process and GPU (by uuid)"
ev=$(python3 -c 'import vs_trace_db,sys; print(vs_trace_db.connect(sys.argv[1]).execute("select count(*) from alloc_event").fetchone()[0])' "$dir/k.db")
want_ev=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["events"] - 1)' "$dir/want.json")
ok $([ "$ev" = "$want_ev" ] && echo 0 || echo 1) "every finished record is an event, the unfinished one is not ($ev of $want_ev)"

# 2. A normal exit left a snapshot too: the snapshot (with stacks) wins.
cat >"$dir/exit.sh" <<EOS
python3 "$make" "\$VRAMSCOPE_SPOOL_DIR/torch-\$\$.stream" \$\$ >/dev/null
$info \$\$ stream >"\$VRAMSCOPE_SPOOL_DIR/torch-\$\$.stream.info"
$info \$\$ exit >"\$VRAMSCOPE_SPOOL_DIR/torch-\$\$-000001.info"
cp "$snaps/train.pickle" "\$VRAMSCOPE_SPOOL_DIR/torch-\$\$-000001.pickle"
EOS
"$vramscope" record -q -o "$dir/e.db" -- sh "$dir/exit.sh"
python3 -c '
import json, sys
st = json.load(open(sys.argv[1]))["memory_stats"]
json.dump({"alloc_count": st["allocation.all.allocated"], "peak_allocated_bytes": st["requested_bytes.all.peak"],
           "final_allocated_bytes": st["requested_bytes.all.current"], "peak_reserved_bytes": st["reserved_bytes.all.peak"],
           "final_reserved_bytes": st["reserved_bytes.all.current"], "failed_alloc_count": st["num_ooms"]}, open(sys.argv[2], "w"))
' "$snaps/train.json" "$dir/train-want.json"
set -- $(check "$dir/e.db" "$dir/train-want.json")
ok $([ "${1:-0}" = 1 ] && echo 0 || echo 1) "with a snapshot from a normal exit, the snapshot is taken (${4:-})"

# 2b. The final snapshot was taken at a signal and the program ran on a
# little before it died: the stream's events after the snapshot's marker
# are added to the snapshot's.
cat >"$dir/tail.sh" <<EOS
python3 "$make" "\$VRAMSCOPE_SPOOL_DIR/torch-\$\$.stream" \$\$ tail >"$dir/tail.json"
$info \$\$ stream >"\$VRAMSCOPE_SPOOL_DIR/torch-\$\$.stream.info"
$info \$\$ signal >"\$VRAMSCOPE_SPOOL_DIR/torch-\$\$-000001.info"
cp "$snaps/train.pickle" "\$VRAMSCOPE_SPOOL_DIR/torch-\$\$-000001.pickle"
kill -TERM \$\$
EOS
"$vramscope" record -q -o "$dir/t.db" -- sh "$dir/tail.sh"
python3 -c '
import json, sys
st = json.load(open(sys.argv[1]))["memory_stats"]
t = json.load(open(sys.argv[2]))
fin_alloc = st["requested_bytes.all.current"]
fin_res = st["reserved_bytes.all.current"]
json.dump({"alloc_count": st["allocation.all.allocated"] + t["tail_allocs"],
           "peak_allocated_bytes": max(st["requested_bytes.all.peak"], fin_alloc + t["tail_live_peak"]),
           "final_allocated_bytes": fin_alloc + t["tail_final_allocated"],
           "peak_reserved_bytes": max(st["reserved_bytes.all.peak"], fin_res + t["tail_reserved"]),
           "final_reserved_bytes": fin_res + t["tail_reserved"], "failed_alloc_count": st["num_ooms"]},
          open(sys.argv[3], "w"))
' "$snaps/train.json" "$dir/tail.json" "$dir/tail-want.json"
set -- $(check "$dir/t.db" "$dir/tail-want.json")
ok $([ "${1:-0}" = 1 ] && echo 0 || echo 1) "a signal's snapshot plus the stream's events after it (${4:-})"

# 3. An OOM snapshot, then the process was killed: the stream wins.
cat >"$dir/oom.sh" <<EOS
python3 "$make" "\$VRAMSCOPE_SPOOL_DIR/torch-\$\$.stream" \$\$ >/dev/null
$info \$\$ stream >"\$VRAMSCOPE_SPOOL_DIR/torch-\$\$.stream.info"
$info \$\$ oom >"\$VRAMSCOPE_SPOOL_DIR/torch-\$\$-000001.info"
cp "$snaps/oom.pickle" "\$VRAMSCOPE_SPOOL_DIR/torch-\$\$-000001.pickle"
kill -TERM \$\$
EOS
"$vramscope" record -q -o "$dir/o.db" -- sh "$dir/oom.sh"; rc=$?
set -- $(check "$dir/o.db" "$dir/want.json")
ok $([ $rc = 143 ] && [ "${1:-0}" = 1 ] && echo 0 || echo 1) "an OOM snapshot does not replace the stream of a process killed later (${4:-})"

# 4. recover reads the stream as record does.
mkdir "$dir/sp"
python3 "$make" "$dir/sp/torch-31337.stream" 31337 >/dev/null
sh -c "$info 31337 stream" >"$dir/sp/torch-31337.stream.info"
"$vramscope" recover "$dir/sp" -o "$dir/r.db" 2>"$dir/r.err"; rc=$?
set -- $(check "$dir/r.db" "$dir/want.json")
ok $([ $rc = 0 ] && [ "${1:-0}" = 1 ] && echo 0 || echo 1) "recover reads a stream left in a spool (rc $rc, ${4:-} $(cat "$dir/r.err"))"

# 5. A stream that is no stream: one clear line, record goes on.
cat >"$dir/bad.sh" <<EOS
printf 'garbage' >"\$VRAMSCOPE_SPOOL_DIR/torch-\$\$.stream"
: >"\$VRAMSCOPE_SPOOL_DIR/process-\$\$-1.db"
EOS
"$vramscope" record -q -o "$dir/b.db" -- sh "$dir/bad.sh" 2>"$dir/b.err"; rc=$?
ok $([ $rc = 0 ] && [ $(wc -l <"$dir/b.err") = 1 ] && grep -q "could not be read" "$dir/b.err" && echo 0 || echo 1) \
  "a damaged stream: one line, the rest of the run is still written ($(cat "$dir/b.err"))"
echo "1..$n"
exit $failed

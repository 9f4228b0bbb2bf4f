#!/bin/sh
# SPDX-License-Identifier: MIT
# test-record-window.sh — `vramscope record --window` end to end without a
# GPU: a program leaves a long PyTorch allocator stream (60 s of a training
# loop, make-window-stream.py) and record writes it whole and with
# --window 10s.  The windowed trace answers summary, peak, leaks and the
# failures' count as the whole one does (and as the stream says), is much
# smaller, stays about as small for a run three times longer, says it is
# windowed; a window longer than the run gives the whole trace.  Bad
# durations are usage errors: one line, exit 2, nothing run.
#
# A killed record's spool is recovered windowed, as record would have
# written it.  A process that took its final snapshot at exit keeps, from its stream,
# what was live then, not what Python freed while shutting down.
#
# A program whose NVTX ranges show its iterations gets slices that
# follow them.
#
# Usage: test-record-window.sh VRAMSCOPE MAKE_STREAM SNAPSHOTS_DIR SCHEMA   (TAP output)
set -u
vramscope=$1 make=$2 snaps=$3 schema=$4
. "$(dirname "$0")/../lib.sh"
vs_trace_db_env "$vramscope"
size() { wc -c <"$1" | tr -d ' '; }

for bad in 0 0s abc 10 -5s 1.5x 10sec '' 1e400h; do
  "$vramscope" record -q --window "$bad" -o "$dir/bad.db" -- sh -c 'touch "$0"' "$dir/ran" \
    >"$dir/out" 2>"$dir/err"
  rc=$?
  lines=$(wc -l <"$dir/err" | tr -d ' ')
  ok $([ $rc = 2 ] && [ "$lines" = 1 ] && [ ! -e "$dir/ran" ] && [ ! -e "$dir/bad.db" ] \
       && echo 0 || echo 1) "--window '$bad' is refused: exit $rc, $lines line: $(cat "$dir/err")"
done

cat >"$dir/prog.sh" <<EOS
python3 "$make" "\$VRAMSCOPE_SPOOL_DIR/torch-\$\$.stream" \$\$ \$STEPS >"$dir/want-\$STEPS.json"
printf "pid %s\nreason stream\ndevice 0 GPU-00000000-0000-0000-0000-0000000000aa 85899345920 Test GPU\n" \$\$ \
  >"\$VRAMSCOPE_SPOOL_DIR/torch-\$\$.stream.info"
EOS
STEPS=6000 "$vramscope" record -q -o "$dir/full.db" -- sh "$dir/prog.sh"
ok $? "the whole run is recorded"
STEPS=6000 "$vramscope" record --window 10s -o "$dir/win.db" -- sh "$dir/prog.sh" 2>"$dir/win.err"
ok $? "the run is recorded with --window 10s"
grep -q "windowed: full detail" "$dir/win.err"
ok $? "record says what the window kept"
for r in "summary" "peak" "leaks" "fragmentation"; do
  "$vramscope" report "$dir/full.db" $r --format csv >"$dir/full.$r" 2>&1
  "$vramscope" report "$dir/win.db" $r --format csv >"$dir/win.$r" 2>&1
  if [ $r = fragmentation ]; then
    # Per failure, only those whose detail is kept: the first and last
    # three, each as in the whole trace.
    kept=$(grep -c ',failed_alloc,' "$dir/win.$r")
    grep -F -x -v -f "$dir/full.$r" "$dir/win.$r" >"$dir/extra"
    grep -v ',failed_alloc,' "$dir/full.$r" >"$dir/full.$r.rest"
    grep -v ',failed_alloc,' "$dir/win.$r" >"$dir/win.$r.rest"
    cmp -s "$dir/full.$r.rest" "$dir/win.$r.rest" && [ ! -s "$dir/extra" ] && [ "$kept" -ge 12 ]
    ok $? "report fragmentation: as the whole trace, at the $kept failures kept too"
    continue
  fi
  cmp -s "$dir/full.$r" "$dir/win.$r"
  ok $? "report $r: the windowed trace answers as the whole one"
done
res=$(python3 -c '
import json, sys, vs_trace_db
db = vs_trace_db.connect(sys.argv[1])
want = json.load(open(sys.argv[2]))
cols = ["alloc_count", "free_count", "peak_allocated_bytes", "final_allocated_bytes", "peak_reserved_bytes", "final_reserved_bytes", "failed_alloc_count"]
row = db.execute("SELECT " + ", ".join("s." + c for c in cols) + " FROM summary s JOIN allocator a ON a.id = s.allocator_id WHERE a.kind = \"pytorch\"").fetchone()
leak = db.execute("SELECT count(*), sum(bytes) FROM block WHERE level = 2 AND free_seq IS NULL").fetchone()
print(int(row == tuple(want[c] for c in cols)), int(leak == (want["leak_blocks"], want["leak_bytes"])))
' "$dir/win.db" "$dir/want-6000.json" 2>&1)
set -- $res
ok $([ "${1:-0}" = 1 ] && echo 0 || echo 1) "the windowed pytorch row is what the stream holds"
ok $([ "${2:-0}" = 1 ] && echo 0 || echo 1) "every block still live at the end is kept (the leak)"
full=$(size "$dir/full.db") win=$(size "$dir/win.db")
# Both traces are compacted, which at this size leaves mostly the fixed
# cost of the schema and the summary levels: the window shows in the rows.
blocks() { python3 -c 'import sys, vs_trace_db; print(vs_trace_db.connect(sys.argv[1]).execute("SELECT count(*) FROM block").fetchone()[0])' "$1"; }
full_blocks=$(blocks "$dir/full.db") win_blocks=$(blocks "$dir/win.db")
ok $([ "$win" -lt "$full" ] && [ "$win_blocks" -lt $((full_blocks / 2)) ] && echo 0 || echo 1) \
  "the windowed trace is smaller ($win of $full bytes, $win_blocks of $full_blocks blocks)"

"$vramscope" report "$dir/win.db" summary >"$dir/win.txt" 2>&1
grep -q "^Windowed trace (record --window 10.000 s)" "$dir/win.txt"
ok $? "report summary says the trace is windowed and from when"
"$vramscope" report "$dir/full.db" summary >"$dir/full.txt" 2>&1
! grep -q "Windowed" "$dir/full.txt"
ok $? "a whole trace says nothing of the kind"
# The failures the window dropped are counted, not described.
fails=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["failed_alloc_count"])' \
  "$dir/want-6000.json")
"$vramscope" report "$dir/win.db" diagnose 2>&1 | tr -s '\n ' '  ' >"$dir/win.diag"
"$vramscope" report "$dir/win.db" diagnose --format csv >"$dir/win.diag.csv" 2>&1
grep -q "failures kept of $fails in the run" "$dir/win.diag" \
  && grep -q "The run had $fails failed requests here; the windowed trace keeps the detail of" \
    "$dir/win.diag.csv"
ok $? "diagnose says the run had $fails failures beside those whose detail it kept"
"$vramscope" report "$dir/full.db" diagnose 2>&1 | tr -s '\n ' '  ' >"$dir/full.diag"
grep -q ", $fails failures, at" "$dir/full.diag" && ! grep -q "kept of" "$dir/full.diag"
ok $? "the whole trace's diagnosis describes all $fails"
"$vramscope" report "$dir/win.db" meta --format csv >"$dir/meta.csv" 2>&1
grep -q "^window_ns,10000000000" "$dir/meta.csv" && grep -q "^window_dropped_blocks," "$dir/meta.csv"
ok $? "meta holds the window and what was dropped"
"$vramscope" report "$dir/win.db" growth --format csv >"$dir/growth.csv" 2>&1
rows=$(($(wc -l <"$dir/growth.csv") - 1))
ok $([ "$rows" -gt 90 ] && echo 0 || echo 1) "growth covers the whole run in slices ($rows rows)"

STEPS=18000 "$vramscope" record -q --window 10s -o "$dir/win5.db" -- sh "$dir/prog.sh"
ok $? "a run three times longer is recorded with --window 10s"
win5=$(size "$dir/win5.db")
ok $([ "$win5" -lt $((win * 3 / 2)) ] && echo 0 || echo 1) "its trace stays about as small ($win5 bytes against $win)"

STEPS=6000 "$vramscope" record -q --window 2h -o "$dir/long.db" -- sh "$dir/prog.sh"
ok $? "a window longer than the run is accepted"
for r in "summary" "timeline" "peak"; do
  "$vramscope" report "$dir/full.db" $r --format csv >"$dir/full.$r" 2>&1
  "$vramscope" report "$dir/long.db" $r --format csv >"$dir/long.$r" 2>&1
  cmp -s "$dir/full.$r" "$dir/long.$r"
  ok $? "report $r: a window longer than the run keeps the whole trace"
done
cat >"$dir/exit.sh" <<EOS
python3 "$make" "\$VRAMSCOPE_SPOOL_DIR/torch-\$\$.stream" \$\$ 3000 exit >"$dir/want-exit.json"
printf "pid %s\nreason stream\ndevice 0 GPU-00000000-0000-0000-0000-0000000000aa 85899345920 Test GPU\n" \$\$ \
  >"\$VRAMSCOPE_SPOOL_DIR/torch-\$\$.stream.info"
printf "pid %s\nreason exit\ndevice 0 GPU-00000000-0000-0000-0000-0000000000aa 85899345920 Test GPU\n" \$\$ \
  >"\$VRAMSCOPE_SPOOL_DIR/torch-\$\$-000001.info"
cp "$snaps/train.pickle" "\$VRAMSCOPE_SPOOL_DIR/torch-\$\$-000001.pickle"
EOS
"$vramscope" record -q --window 5s -o "$dir/exit.db" -- sh "$dir/exit.sh"
ok $? "a run that took its final snapshot at exit is recorded with --window 5s"
res=$(python3 -c '
import json, sys, vs_trace_db
db = vs_trace_db.connect(sys.argv[1])
want = json.load(open(sys.argv[2]))
leak = db.execute("SELECT count(*), sum(bytes) FROM block WHERE level = 2 AND free_seq IS NULL").fetchone()
row = db.execute("SELECT s.alloc_count, s.final_allocated_bytes FROM summary s JOIN allocator a ON a.id = s.allocator_id WHERE a.kind = \"pytorch\"").fetchone()
print(int(leak == (want["leak_blocks"], want["leak_bytes"]) and row == (want["alloc_count"], want["leak_bytes"])), leak, row)
' "$dir/exit.db" "$dir/want-exit.json" 2>&1)
set -- $res
ok $([ "${1:-0}" = 1 ] && echo 0 || echo 1) "its stream is read to the final snapshot: what was live at exit is kept ($res)"
# Iterations from the program's NVTX ranges ("step N", one per 10 ms
# step): the slices follow them, 5 steps each (5000 steps before the
# window), and growth is judged over them.
cat >"$dir/steps.sh" <<EOS
python3 "$make" "\$VRAMSCOPE_SPOOL_DIR/torch-\$\$.stream" \$\$ 6000 ranges "$schema" >/dev/null
printf "pid %s\nreason stream\ndevice 0 GPU-00000000-0000-0000-0000-0000000000aa 85899345920 Test GPU\n" \$\$ \
  >"\$VRAMSCOPE_SPOOL_DIR/torch-\$\$.stream.info"
EOS
"$vramscope" record --window 10s -o "$dir/steps.db" -- sh "$dir/steps.sh" 2>"$dir/steps.err"
ok $? "a run with NVTX step ranges is recorded with --window 10s"
grep -q "in slices of 5 iterations" "$dir/steps.err"
ok $? "its slices follow its iterations, 5 each ($(grep windowed "$dir/steps.err"))"
"$vramscope" report "$dir/steps.db" summary >"$dir/steps.txt" 2>&1
grep -q "memory is in slices of 5 iterations" "$dir/steps.txt"
ok $? "report summary says so"
"$vramscope" report "$dir/steps.db" peak --format csv >"$dir/steps.peak" 2>&1
cmp -s "$dir/steps.peak" "$dir/full.peak"
ok $? "and answers report peak as the whole trace"

# recover: the spool a killed `record --window 10s` left (its run.info
# names the window), recovered into the same trace record writes.
spool="$dir/.vramscope-spool-999999-XXwin"
mkdir -p "$spool"
python3 "$make" "$spool/torch-999998.stream" 999998 6000 >/dev/null
printf "pid 999998\nreason stream\ndevice 0 GPU-00000000-0000-0000-0000-0000000000aa 85899345920 Test GPU\n" \
  >"$spool/torch-999998.stream.info"
printf "host %s\nrecord_pid 999999\nprogram_pid 999998\nstart_ns 1763900000000000000\noutput %s\nwindow_ns 10000000000\n" \
  "$(hostname)" "$dir/rec.db" >"$spool/run.info"
"$vramscope" recover -q "$spool" -o "$dir/rec.db"
ok $? "recover writes the spool of a killed record --window"
"$vramscope" report "$dir/rec.db" meta --format csv 2>&1 | grep -q "^window_ns,10000000000"
ok $? "windowed, as record would have"
"$vramscope" report "$dir/rec.db" peak --format csv >"$dir/rec.peak" 2>&1
"$vramscope" report "$dir/full.db" peak --format csv >"$dir/full.peak" 2>&1
cmp -s "$dir/rec.peak" "$dir/full.peak"
ok $? "and answers report peak as the whole trace"
echo "1..$n"
exit $failed

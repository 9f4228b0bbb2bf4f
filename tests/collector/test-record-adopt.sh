#!/bin/sh
# test-record-adopt.sh — `record` writes the trace into its own import of
# the largest PyTorch allocator level (renamed, not copied) and copies the
# process traces into it; `recover` copies every input into a new file.
# The two must hold the same rows, ids aside (same-trace.py): the
# collector's process and GPU rows take over the import's, every id is
# remapped.  Without a GPU: the spool of a run of three processes, as the
# collector and the hook leave it:
#   - process P1: a process trace written as the collector writes one
#     (vs-test-spool-writer: its device allocations) and its allocator
#     stream (make-torch-stream.py), on the same GPU;
#   - process 4242 of another host: a process trace of memory events and
#     kernels (bench/vs-gen-trace), with allocators of its own;
#   - process P2: only an allocator stream, on the same GPU as P1;
# and of one process alone (P1's files).
#
# Usage: test-record-adopt.sh VRAMSCOPE SPOOL_WRITER GEN_TRACE MAKE_STREAM SAME_TRACE   (TAP output)
set -u
vramscope=$1 writer=$2 gen=$3 make=$4 same=$5
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
n=0 failed=0
ok() { n=$((n + 1)); if [ "$1" = 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; failed=1; fi; }
info='pid %s\nreason stream\ndevice 0 GPU-00000000-0000-0000-0000-0000000000aa 1000 Test GPU\n'

# The spool's files, made once: the spool writer is killed once it has
# committed its batches (what it printed last is what its file holds).
mkdir "$dir/one" "$dir/all"
"$writer" "$dir/one" 2 400 0 >"$dir/w.out" &
w=$!
i=0
while ! grep -q mid-batch "$dir/w.out" 2>/dev/null && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
kill -KILL $w
wait $w 2>/dev/null
python3 "$make" "$dir/one/torch-$w.stream" $w >/dev/null
printf "$info" $w >"$dir/one/torch-$w.stream.info"
cp "$dir/one/"* "$dir/all/"
"$gen" -n 3000 -k 500 --no-finalize -o "$dir/all/process-4242-1.db" >/dev/null
python3 "$make" "$dir/all/torch-31337.stream" 31337 tail >/dev/null
printf "$info" 31337 >"$dir/all/torch-31337.stream.info"

for set in one all; do
  # recover: every input copied into a new file.
  mkdir "$dir/sp-$set"
  cp "$dir/$set/"* "$dir/sp-$set/"
  "$vramscope" recover -q "$dir/sp-$set" -o "$dir/copied-$set.db" 2>"$dir/err"
  rc1=$?
  # record: the program leaves the same files in its spool.
  printf 'cp "%s"/* "$VRAMSCOPE_SPOOL_DIR/"\n' "$dir/$set" >"$dir/prog.sh"
  "$vramscope" record -q -o "$dir/adopted-$set.db" -- sh "$dir/prog.sh" 2>>"$dir/err"
  rc2=$?
  # Where the run's end is taken from differs between the two (record
  # knows when its program exited), as before.
  got=$(python3 "$same" "$dir/copied-$set.db" "$dir/adopted-$set.db" \
    --ignore-meta command_line,cwd,exit_status,end_ns 2>&1)
  ok $([ $rc1 = 0 ] && [ $rc2 = 0 ] && [ "$got" = same ] && echo 0 || echo 1) \
    "$set: record's trace, written into its own import, holds the rows of recover's copy ($rc1 $rc2: $got $(cat "$dir/err"))"
done
# The collector's process row took over the import's: one process P1,
# with the collector's command line, and one GPU row for the two streams.
got=$(python3 -c '
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
p = db.execute("SELECT count(*), max(command_line) FROM process WHERE pid = ?", (int(sys.argv[2]),)).fetchone()
d = db.execute("SELECT count(*) FROM device WHERE uuid = \"GPU-00000000-0000-0000-0000-0000000000aa\"").fetchone()[0]
k = db.execute("SELECT count(*) FROM allocator WHERE kind = \"pytorch\"").fetchone()[0]
print(int(p == (1, "vs-test-spool-writer") and d == 1 and k == 3), p, d, k)' "$dir/adopted-all.db" $w 2>&1)
ok $([ "${got%% *}" = 1 ] && echo 0 || echo 1) \
  "one process row per pid, the collector's; one GPU row per uuid; a pytorch allocator per process and GPU ($got)"
echo "1..$n"
exit $failed

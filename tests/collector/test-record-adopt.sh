#!/bin/sh
# SPDX-License-Identifier: MIT
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
#   - process P2: only an allocator stream (make-window-stream.py), on
#     the same GPU as P1, the largest, with allocator settings other than
#     P1's;
# and of one process alone (P1's files).
#
# Usage: test-record-adopt.sh VRAMSCOPE SPOOL_WRITER GEN_TRACE MAKE_STREAM MAKE_WINDOW_STREAM
#        SAME_TRACE   (TAP output)
set -u
vramscope=$1 writer=$2 gen=$3 make=$4 window=$5 same=$6
. "$(dirname "$0")/../lib.sh"
# The traces' tables are read through tests/vs_trace_db.py where there is
# one (a compacted trace's), else directly.
vs_trace_db_env "$vramscope"
info='pid %s\nreason stream\ndevice 0 GPU-00000000-0000-0000-0000-0000000000aa 1000 Test GPU\n'

# The spool's files, made once: the spool writer is killed once it has
# committed its batches (what it printed last is what its file holds).
mkdir "$dir/one" "$dir/all"
"$writer" "$dir/one" 2 400 0 >"$dir/w.out" &
w=$!
i=0
while ! grep -q mid-batch "$dir/w.out" 2>/dev/null && [ $i -lt 1000 ]; do sleep 0.1; i=$((i + 1)); done
kill -KILL $w
wait $w 2>/dev/null
python3 "$make" "$dir/one/torch-$w.stream" $w >/dev/null
printf "$info" $w >"$dir/one/torch-$w.stream.info"
cp "$dir/one/"* "$dir/all/"
printf 'meta pytorch.expandable_segments False\n' >>"$dir/all/torch-$w.stream.info"
"$gen" -n 3000 -k 500 --no-finalize -o "$dir/all/process-4242-1.db" >/dev/null
# The largest allocator level (a training loop of 2,000 steps), named to
# sort after P1's: the trace keeps P1's allocator settings, the first.
python3 "$window" "$dir/all/torch-99999999.stream" 99999999 2000 >/dev/null
# Its times 7 ns off the other stream's, which starts at the same second:
# events of two inputs at the very same nanosecond replay in the order of
# their rows, the import's first once the trace is written into it.
python3 -c '
import struct, sys
d = bytearray(open(sys.argv[1], "rb").read())
for off in range(4096, len(d) - 47, 48):
    ts = struct.unpack_from("<q", d, off)[0]
    if ts:
        struct.pack_into("<q", d, off, ts + 7)
open(sys.argv[1], "wb").write(d)' "$dir/all/torch-99999999.stream"
printf "$info" 99999999 >"$dir/all/torch-99999999.stream.info"
printf 'meta pytorch.expandable_segments True\n' >>"$dir/all/torch-99999999.stream.info"

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
import sys
try:
    from vs_trace_db import connect  # compacted traces read as plain tables
except ImportError:
    from sqlite3 import connect
db = connect(sys.argv[1])
p = db.execute("SELECT count(*), max(command_line) FROM process WHERE pid = ?", (int(sys.argv[2]),)).fetchone()
d = db.execute("SELECT count(*) FROM device WHERE uuid = \"GPU-00000000-0000-0000-0000-0000000000aa\"").fetchone()[0]
k = db.execute("SELECT count(*) FROM allocator WHERE kind = \"pytorch\"").fetchone()[0]
m = db.execute("SELECT value FROM meta WHERE key = \"pytorch.expandable_segments\"").fetchone()
print(int(p == (1, "vs-test-spool-writer") and d == 1 and k == 3 and m == ("False",)), p, d, k, m)' \
  "$dir/adopted-all.db" $w 2>&1)
ok $([ "${got%% *}" = 1 ] && echo 0 || echo 1) \
  "one process row per pid, the collector's; one GPU row per uuid; a pytorch allocator per process and GPU; the first process's allocator settings ($got)"
echo "1..$n"
exit $failed

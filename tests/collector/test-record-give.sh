#!/bin/sh
# SPDX-License-Identifier: MIT
# test-record-give.sh — `record` hands the allocator stream's rows to the
# finalizer as it imports them while the program runs (their events kept
# in memory, their alloc_event chunks coded as they fill), so that after
# the program the finalizer reads back only the other rows.  The trace must
# be the one the finalizer gives when it reads every row back
# (VRAMSCOPE_TORCH_FOLLOW_GIVE=0): the same rows, ids included, the same
# chunks byte for byte.  Without a GPU: a program writes its stream over
# time (make-window-stream.py's training loop, fed a slice at a time) and
# leaves a process trace with allocator events of its own
# (bench/vs-gen-trace, whose rows come after the import's), and ends:
#   - normally, its final snapshot's marker followed by the frees of
#     Python's exit (the import is cut at the marker, inside a chunk coded
#     while the program ran);
#   - killed by SIGKILL after a record left half written;
#   - when record gets SIGINT (the program exits on it).
# The process trace's kernels are coded into chunks on a thread of their
# own while the finalizer works (VRAMSCOPE_KERNELS_ASIDE=0: copied into
# kernel_exec and coded by compaction): the same trace either way.
# --timings says how many rows were handed over and coded while the
# program ran: none would make the comparison say nothing.  Past its
# memory limit (VRAMSCOPE_TORCH_FOLLOW_GIVE_MAX_MB) the hand-over is
# given up and the rows read back.
#
# Usage: test-record-give.sh VRAMSCOPE GEN_TRACE MAKE_WINDOW_STREAM   (TAP output)
set -u
vramscope=$1 gen=$2 window=$3
. "$(dirname "$0")/../lib.sh"
export VRAMSCOPE_TORCH_FOLLOW_MS=40

# 2,500 steps: 45,056 alloc_event rows, exactly 11 chunks, coded while the
# program runs; its final snapshot's marker comes after row 45,030, so the
# normal exit cuts the last chunk coded.
python3 "$window" "$dir/stream" 4242 2500 exit >/dev/null || exit 1
"$gen" -n 3000 -k 2000 -t 1763900000000000000 --no-finalize -o "$dir/process.db" >/dev/null ||
  exit 1
# feed.py SRC DST HOW: the stream appended a slice at a time; HOW is
# "exit" (all of it), "kill" (half of it, then a record without its
# action word, then SIGKILL) or "int" (all of it, then wait for SIGINT).
cat >"$dir/feed.py" <<'PY'
import os, signal, sys, time
src, dst, how = sys.argv[1], sys.argv[2], sys.argv[3]
data = open(src, "rb").read()
head, body = data[:4096], data[4096:]
if how == "kill":
    body = body[: len(body) // 2 // 48 * 48]
with open(dst, "wb", buffering=0) as f:
    f.write(head)
    per = -(-len(body) // 20 // 48) * 48
    for k in range(0, len(body), per):
        f.write(body[k:k + per])
        time.sleep(0.05)
    if how == "kill":
        f.write(data[4096 + len(body):4096 + len(body) + 44])  # all but the action
        os.kill(os.getpid(), signal.SIGKILL)
    if how == "int":
        signal.pthread_sigmask(signal.SIG_BLOCK, [signal.SIGINT])
        open(sys.argv[4], "w").close()
        signal.sigwait([signal.SIGINT])
        sys.exit(130)
PY
# The .info of a stream that is the level; "exit" adds the final
# snapshot's (its marker is in the stream).
cat >"$dir/prog.sh" <<EOS
cp "$dir/process.db" "\$VRAMSCOPE_SPOOL_DIR/process-\$\$-1.db"
info='pid 4242\ndevice 0 GPU-synthetic-0 150754820096 Synthetic H200\n'
printf "reason stream\nhistory 0\n\$info" >"\$VRAMSCOPE_SPOOL_DIR/torch-4242.stream.info"
# SIGINT goes to the program record started: the feeder itself.
[ "\$1" = int ] && exec python3 "$dir/feed.py" "$dir/stream" \
  "\$VRAMSCOPE_SPOOL_DIR/torch-4242.stream" int "$dir/fed"
python3 "$dir/feed.py" "$dir/stream" "\$VRAMSCOPE_SPOOL_DIR/torch-4242.stream" "\$1" "$dir/fed"
rc=\$?
if [ "\$1" = exit ]; then
  printf "pid 4242\nreason exit\n\$info" >"\$VRAMSCOPE_SPOOL_DIR/torch-4242-000001.info"
  : >"\$VRAMSCOPE_SPOOL_DIR/torch-4242-000001.pickle"
fi
exit \$rc
EOS

# run HOW GIVE OUT: record of the program ending HOW.
run() {
  rm -f "$dir/fed"
  mkdir -p "$dir/tmp"
  if [ "$1" = int ]; then
    VRAMSCOPE_TORCH_FOLLOW_GIVE=$2 TMPDIR="$dir/tmp" "$vramscope" record -q --timings \
      -o "$3" -- sh "$dir/prog.sh" int >/dev/null 2>>"$dir/err" &
    r=$!
    poll 3000 0.1 test -e "$dir/fed"
    sleep 0.3
    kill -INT $r
    wait $r
  else
    VRAMSCOPE_TORCH_FOLLOW_GIVE=$2 TMPDIR="$dir/tmp" "$vramscope" record -q --timings \
      -o "$3" -- sh "$dir/prog.sh" "$1" >/dev/null 2>>"$dir/err"
  fi
}

# same A B: "same" when every table holds the same rows in both, but the
# meta and process times that say when record ran (and the timings).
same() {
  python3 - "$1" "$2" <<'PY' 2>&1
import sqlite3, sys
a, b = (sqlite3.connect(p) for p in sys.argv[1:3])
skip_meta = ("end_ns", "start_ns")
def rows(db, t):
    cols = [c[1] for c in db.execute("PRAGMA table_info(\"%s\")" % t)]
    q = "SELECT * FROM \"%s\"" % t
    if t == "meta":
        return sorted(r for r in db.execute(q)
                      if not str(r[0]).startswith("record_") and r[0] not in skip_meta)
    if t == "process":
        q = "SELECT %s FROM process" % ", ".join(c for c in cols if c not in ("start_ns", "end_ns"))
    return sorted(db.execute(q).fetchall(), key=repr)
ta = [r[0] for r in a.execute("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")]
tb = [r[0] for r in b.execute("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")]
if ta != tb:
    print("tables differ: %s / %s" % (ta, tb)); sys.exit(1)
for t in ta:
    ra, rb = rows(a, t), rows(b, t)
    if ra != rb:
        print("%s differs (%d / %d rows): %s" % (t, len(ra), len(rb),
              next((x for x in ra if x not in rb), None))); sys.exit(1)
print("same")
PY
}

# given TRACE: the rows handed over and those coded while the program ran.
given() {
  python3 -c '
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
m = dict(db.execute("SELECT key, value FROM meta WHERE key LIKE ?", ("record_given_%",)))
print(m.get("record_given_rows", -1), m.get("record_given_coded_rows", -1))' "$1"
}

for how in exit kill int; do
  : >"$dir/err"
  run $how 1 "$dir/give-$how.db"
  rc1=$?
  run $how 0 "$dir/load-$how.db"
  rc2=$?
  got=$(same "$dir/give-$how.db" "$dir/load-$how.db")
  set -- $(given "$dir/give-$how.db")
  g=$1 c=$2
  set -- $(given "$dir/load-$how.db")
  echo "# $how: handed over $g, coded $c, read back $1: $got" >&2
  ok $([ "$got" = same ] && [ "$c" -ge 8192 ] && [ "$g" -ge "$c" ] && [ "$1" = 0 ] && echo 0 ||
    echo 1) "$how: the trace from the rows handed over is the one from the rows read back" \
    "($rc1 $rc2: $got; handed over $g rows, $c coded; read back: $1; $(cat "$dir/err"))"
done
# Past its memory limit the hand-over is given up: every row read back.
: >"$dir/err"
VRAMSCOPE_TORCH_FOLLOW_GIVE_MAX_MB=1 run exit 1 "$dir/capped-exit.db"
got=$(same "$dir/capped-exit.db" "$dir/load-exit.db")
set -- $(given "$dir/capped-exit.db")
ok $([ "$got" = same ] && [ "$1" = 0 ] && echo 0 || echo 1) \
  "past VRAMSCOPE_TORCH_FOLLOW_GIVE_MAX_MB the rows are read back ($got; handed over $1; $(cat "$dir/err"))"

# The process trace's kernels, coded into chunks on a thread of their own
# beside the finalizer: the trace is the one copying them gives.
: >"$dir/err"
VRAMSCOPE_KERNELS_ASIDE=0 run exit 1 "$dir/copied-exit.db"
got=$(same "$dir/give-exit.db" "$dir/copied-exit.db")
k=$(python3 -c '
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
print(db.execute("SELECT ifnull(sum(row_count), 0) FROM kernel_exec_chunk").fetchone()[0],
      db.execute("SELECT value FROM meta WHERE key = ?", ("record_finalize_waiting_for_the_kernels_ns",)).fetchone() is not None)' "$dir/give-exit.db")
ok $([ "$got" = same ] && [ "$k" = "2000 True" ] && echo 0 || echo 1) \
  "kernels coded beside the finalizer: the trace copying them gives ($got; $k; $(cat "$dir/err"))"
echo "1..$n"
exit $failed

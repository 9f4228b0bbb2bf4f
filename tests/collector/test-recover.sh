#!/bin/sh
# SPDX-License-Identifier: MIT
# test-recover.sh — what a killed `vramscope record` leaves, recovered
# without a GPU.  The program is vs-test-spool-writer, which writes a
# process trace into record's spool as the collector does (WAL, commits in
# batches) and says what it committed.  record is killed with SIGKILL, the
# program too, in the middle of a batch whose pages already spilled into
# the WAL; then the WAL is torn (cut inside its uncommitted tail).  recover
# must find exactly the committed rows, import a PyTorch snapshot left
# beside them onto the same process, and remove the spool.  Also: record
# and recover point at a leftover spool; recover refuses while a process
# still writes, an existing output without --force, and things that are
# not spools; a run that never used CUDA writes no trace.
#
# Usage: test-recover.sh VRAMSCOPE SPOOL_WRITER SNAPSHOTS_DIR   (TAP output)
set -u
vramscope=$1 writer=$2 snaps=$3
. "$(dirname "$0")/../lib.sh"
vs_trace_db_env "$vramscope"
wait_for() { # FILE PATTERN: waits up to 20 s for PATTERN in FILE
  i=0
  while ! grep -q "$2" "$1" 2>/dev/null && [ $i -lt 2000 ]; do sleep 0.1; i=$((i + 1)); done
  grep -q "$2" "$1" 2>/dev/null
}
count() { python3 -c 'import vs_trace_db,sys; print(vs_trace_db.connect(sys.argv[1]).execute(sys.argv[2]).fetchone()[0])' "$@"; }

# A program that writes 3 committed batches of 20000 rows, then 60000 more
# rows without committing, under record; record is then killed.
cat >"$dir/prog.sh" <<EOS
printf 'pid %s\ndevice 0 GPU-00000000-0000-0000-0000-0000000000aa 1000 Test GPU\n' \$\$ \
  >"\$VRAMSCOPE_SPOOL_DIR/torch-\$\$-000001.info"
cp "$snaps/train.pickle" "\$VRAMSCOPE_SPOOL_DIR/torch-\$\$-000001.pickle"
exec "$writer" - 3 20000 60000
EOS
mkdir "$dir/out"
"$vramscope" record -q -o "$dir/out/run.db" -- sh "$dir/prog.sh" >"$dir/prog.out" 2>"$dir/rec.err" &
rec=$!
wait_for "$dir/prog.out" mid-batch
spool=$(ls -d "$dir"/out/.vramscope-spool-* 2>/dev/null | head -n 1)
wpid=$(ls "$spool" | sed -n 's/^process-\([0-9]*\)-.*/\1/p' | head -n 1)
kill -KILL $rec
wait $rec 2>/dev/null

"$vramscope" recover "$spool" -o "$dir/busy.db" 2>"$dir/busy.err"; rc=$?
ok $([ $rc = 1 ] && [ $(wc -l <"$dir/busy.err") = 1 ] && grep -q "still running" "$dir/busy.err" && [ ! -e "$dir/busy.db" ] && echo 0 || echo 1) \
  "recover refuses while the program still writes the spool: exit 1, one line"
kill -KILL "$wpid"
sleep 0.2
committed=$(sed -n 's/^committed \([0-9]*\) \([0-9]*\)$/\1/p' "$dir/prog.out" | tail -n 1)
wal_committed=$(sed -n 's/^committed \([0-9]*\) \([0-9]*\)$/\2/p' "$dir/prog.out" | tail -n 1)
wal_mid=$(sed -n 's/^mid-batch \([0-9]*\)$/\1/p' "$dir/prog.out")
ok $([ "$committed" = 60000 ] && [ "${wal_mid:-0}" -gt "${wal_committed:-0}" ] && echo 0 || echo 1) \
  "the program was killed mid-batch, its uncommitted rows already in the WAL ($wal_committed → $wal_mid bytes)"
# Tear the WAL: cut it 5000 bytes short, inside the uncommitted frames.
wal=$(ls "$spool"/process-*.db-wal)
size=$(wc -c <"$wal")
truncate -s $((size - 5000)) "$wal"

"$vramscope" record -o "$dir/out/other.db" -- true 2>"$dir/hint.err"
ok $(grep -q "recover it with: vramscope recover .*$(basename "$spool")" "$dir/hint.err" && echo 0 || echo 1) \
  "record points at the leftover spool beside its output"

touch "$dir/exists.db"
"$vramscope" recover "$spool" -o "$dir/exists.db" 2>"$dir/exists.err"; rc=$?
ok $([ $rc = 1 ] && [ $(wc -l <"$dir/exists.err") = 1 ] && grep -q -- "--force" "$dir/exists.err" && [ ! -s "$dir/exists.db" ] && echo 0 || echo 1) \
  "an existing output is not replaced without --force: exit 1, one line naming the flag"

"$vramscope" recover "$spool" -o "$dir/rec.db" 2>"$dir/rec.err"; rc=$?
ok $([ $rc = 0 ] && echo 0 || echo 1) "recover writes the trace (exit $rc: $(cat "$dir/rec.err"))"
got=$(count "$dir/rec.db" "SELECT count(*) FROM mem_event" 2>&1)
ok $([ "$got" = "$committed" ] && echo 0 || echo 1) "every committed row is recovered, nothing else ($got of $committed)"
fin=$(count "$dir/rec.db" "SELECT value FROM meta WHERE key = 'finalized'" 2>&1)
ok $([ "$fin" = 1 ] && echo 0 || echo 1) "the recovered trace is finalized"
res=$(python3 -c '
import json, sys, vs_trace_db
db = vs_trace_db.connect(sys.argv[1])
st = json.load(open(sys.argv[2]))["memory_stats"]
row = db.execute("SELECT s.alloc_count, s.peak_allocated_bytes FROM summary s JOIN allocator a ON a.id = s.allocator_id WHERE a.kind = \"pytorch\"").fetchall()
procs = db.execute("SELECT count(*) FROM process").fetchone()[0]
devs = db.execute("SELECT count(*) FROM device").fetchone()[0]
print(int(row == [(st["allocation.all.allocated"], st["requested_bytes.all.peak"])]), int(procs == 1 and devs == 1))
' "$dir/rec.db" "$snaps/train.json" 2>&1)
set -- $res
ok $([ "${1:-0}" = 1 ] && echo 0 || echo 1) "the PyTorch snapshot in the spool is recovered: pytorch row = its memory_stats()"
ok $([ "${2:-0}" = 1 ] && echo 0 || echo 1) "on the program's own process and GPU"
ok $([ ! -e "$spool" ] && echo 0 || echo 1) "the spool is removed once the trace is written"
ls "$dir" | grep -q "rec.db.tmp"; ok $([ $? = 1 ] && echo 0 || echo 1) "no temporary file is left"

# A damaged process trace (a full disk, a copy cut short) is left out with
# one line; the rest of the run is recovered and the spool kept.
mkdir "$dir/dmg"
"$writer" "$dir/dmg" 2 1000 0 >"$dir/dmg.out" &
wpid=$!
wait_for "$dir/dmg.out" mid-batch
kill -KILL $wpid
wait $wpid 2>/dev/null
python3 -c '
import os, shutil, sys
shutil.copy(sys.argv[1], sys.argv[2])
with open(sys.argv[2], "r+b") as f:
    f.seek(3 * 4096)
    f.write(os.urandom(20000))
' "$snaps/../sample-leak.db" "$dir/dmg/process-999999999-1.db"
"$vramscope" recover "$dir/dmg" -o "$dir/dmg.db" 2>"$dir/dmg.err"; rc=$?
got=$(count "$dir/dmg.db" "SELECT count(*) FROM mem_event" 2>&1)
ok $([ $rc = 0 ] && [ "$got" = 2000 ] && [ $(grep -c "damaged" "$dir/dmg.err") = 1 ] && [ -d "$dir/dmg" ] && echo 0 || echo 1) \
  "a damaged process trace is left out in one line, the rest recovered, the spool kept ($got rows; $(grep damaged "$dir/dmg.err"))"

"$vramscope" recover "$dir/out" -o "$dir/x.db" 2>"$dir/x.err"; rc=$?
ok $([ $rc = 1 ] && [ $(wc -l <"$dir/x.err") = 1 ] && [ ! -e "$dir/x.db" ] && echo 0 || echo 1) \
  "a directory that is no spool: exit 1, one line"
"$vramscope" recover "$dir/nope" -o "$dir/x.db" 2>"$dir/x.err"; rc=$?
ok $([ $rc = 1 ] && [ $(wc -l <"$dir/x.err") = 1 ] && echo 0 || echo 1) "a missing directory: exit 1, one line"
"$vramscope" recover "$dir/out" 2>"$dir/x.err"; rc=$?
ok $([ $rc = 2 ] && [ $(wc -l <"$dir/x.err") = 1 ] && echo 0 || echo 1) "no -o: usage error 2, one line"

"$vramscope" record -o "$dir/none.db" -- true 2>"$dir/none.err"; rc=$?
ok $([ $rc = 0 ] && [ ! -e "$dir/none.db" ] && grep -q "no process of the run used CUDA; no trace written" "$dir/none.err" && echo 0 || echo 1) \
  "a run that never used CUDA says so and writes no trace"
ls -a "$dir" | grep -q vramscope-spool; ok $([ $? = 1 ] && echo 0 || echo 1) "and leaves no spool"
echo "1..$n"
exit $failed

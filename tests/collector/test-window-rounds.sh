#!/bin/sh
# SPDX-License-Identifier: MIT
# test-window-rounds.sh — `record --window` applies the window while the
# program runs, without a GPU: a program writes a long PyTorch allocator
# stream over time (make-window-stream.py ... pace), and record brings it
# into the spool's live trace every 200 ms, windows it so far and lets the
# import give its rows back (vs-window-rounds.h).  Proved:
#   - the trace is the one the window applied at the end gives (rounds
#     off, $VRAMSCOPE_WINDOW_LIVE_MS=0): every report, the window's tables
#     and meta, row for row;
#   - rounds were done while it ran; no event came behind the frontier;
#   - record killed (SIGKILL) after rounds: `recover` goes on from the live
#     trace, and answers the same.
# How the spool and the work after the exit stay flat as the run grows is
# measured by bench/window-rounds-bench.sh (it depends on the machine's
# speed, so it is no test).
#
# Usage: test-window-rounds.sh VRAMSCOPE MAKE_STREAM   (TAP output)
set -u
vramscope=$(realpath "$1") make=$(realpath "$2")
. "$(dirname "$0")/../lib.sh"
vs_trace_db_env "$vramscope"
export VRAMSCOPE_TORCH_FOLLOW_MS=40
# The stream's clock is its own (it starts in 2025): the frontier follows
# its newest event, 1 s of it behind.
export VRAMSCOPE_WINDOW_LIVE_LAG_MS=1000

# STEPS steps of the loop (10 ms each on its clock, 18 records a step),
# written about 20 times faster than they would run: 15000 steps are
# 270,000 records, 13 MB of stream, in about 7 s.
cat >"$dir/prog.sh" <<EOS
printf "pid %s\nreason stream\ndevice 0 GPU-00000000-0000-0000-0000-0000000000aa 85899345920 Test GPU\n" \$\$ \
  >"\$VRAMSCOPE_SPOOL_DIR/torch-\$\$.stream.info"
exec python3 "$make" "\$VRAMSCOPE_SPOOL_DIR/torch-\$\$.stream" \$\$ \$STEPS pace 2000 0.05 >"\$WANT"
EOS
# dump TRACE: the reports and the window's tables, as text.
dump() {
  for r in summary peak leaks growth fragmentation; do
    "$vramscope" report "$1" $r --format csv 2>&1
  done
  python3 -c '
import sys, vs_trace_db
db = vs_trace_db.connect(sys.argv[1])
for sql in ["SELECT * FROM detail_interval ORDER BY 1, 2", "SELECT * FROM window_slice ORDER BY 1, 2, 3",
            "SELECT * FROM window_count ORDER BY 1, 2",
            "SELECT w.allocator_id, w.start_ns, f.function, f.line, w.net_bytes, w.net_count FROM window_site w"
            " LEFT JOIN stack s ON s.id = w.stack_id LEFT JOIN frame f ON f.id = s.frame_id ORDER BY 1, 2, 3, 4",
            "SELECT key, value FROM meta WHERE key LIKE \"window%\" AND key != \"window_live_late_events\" ORDER BY 1",
            "SELECT level, address, bytes, alloc_ts, free_ts FROM block ORDER BY alloc_ts, level, address",
            "SELECT count(*), sum(reserved_bytes), sum(allocated_bytes) FROM series"]:
    for row in db.execute(sql):
        print("|".join(map(str, row)))
' "$1" 2>&1
}

# 1. Rounds every 200 ms.
mkdir "$dir/on"
(cd "$dir/on" && STEPS=15000 WANT="$dir/want-on.json" VRAMSCOPE_WINDOW_LIVE_MS=200 \
  "$vramscope" record -q --timings --window 10s -o on.db -- sh "$dir/prog.sh" 2>"$dir/on.err")
rc=$?
rounds=$(sed -n 's/.*window applied while the program ran *\([0-9]*\) rounds.*/\1/p' "$dir/on.err")
ok $([ $rc = 0 ] && [ "${rounds:-0}" -ge 1 ] && echo 0 || echo 1) \
  "recorded with the window applied while it ran (rc $rc, ${rounds:-no} rounds)"
late=$(python3 -c 'import sys, vs_trace_db; print(vs_trace_db.connect(sys.argv[1]).execute("SELECT value FROM meta WHERE key = \"window_live_late_events\"").fetchone()[0])' "$dir/on/on.db" 2>&1)
ok $([ "$late" = 0 ] && echo 0 || echo 1) "no event came behind the frontier ($late)"

# 2. The same stream, the window applied at the end only.
mkdir "$dir/off"
(cd "$dir/off" && STEPS=15000 WANT="$dir/want-off.json" VRAMSCOPE_WINDOW_LIVE_MS=0 \
  "$vramscope" record -q --window 10s -o off.db -- sh "$dir/prog.sh")
dump "$dir/on/on.db" >"$dir/on.dump"
dump "$dir/off/off.db" >"$dir/off.dump"
lines=$(wc -l <"$dir/on.dump" | tr -d ' ')
cmp -s "$dir/on.dump" "$dir/off.dump"
ok $? "the same trace as the window applied at the end ($lines lines of reports and tables; $(diff "$dir/on.dump" "$dir/off.dump" | head -n 4 | tr '\n' ' '))"

# 3. record killed after rounds; the program runs on to its end; recover
# goes on from the live trace.
mkdir "$dir/kill"
(cd "$dir/kill" && STEPS=15000 WANT="$dir/want-kill.json" VRAMSCOPE_WINDOW_LIVE_MS=200 exec "$vramscope" \
  record -q --window 10s -o kill.db -- sh "$dir/prog.sh") &
rec=$!
i=0
while [ $i -lt 2000 ]; do
  spool=$(ls -d "$dir"/kill/.vramscope-spool-* 2>/dev/null | head -n 1)
  [ -n "$spool" ] && [ -s "$spool/live.trace" ] && [ $i -gt 60 ] && break
  sleep 0.05
  i=$((i + 1))
done
kill -KILL $rec
wait $rec 2>/dev/null
i=0
while [ ! -s "$dir/want-kill.json" ] && [ $i -lt 4000 ]; do sleep 0.05; i=$((i + 1)); done
sleep 0.2
"$vramscope" recover -q "$spool" -o "$dir/kill/rec.db" 2>"$dir/rec.err"
rc=$?
dump "$dir/kill/rec.db" >"$dir/rec.dump"
cmp -s "$dir/rec.dump" "$dir/off.dump"
ok $([ $rc = 0 ] && echo 0 || echo 1) \
  "recover after record was killed mid-run goes on from the live trace (rc $rc $(cat "$dir/rec.err"))"
cmp -s "$dir/rec.dump" "$dir/off.dump"
ok $? "and writes the same trace ($(diff "$dir/rec.dump" "$dir/off.dump" | head -n 4 | tr '\n' ' '))"
echo "1..$n"
exit $failed

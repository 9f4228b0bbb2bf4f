#!/bin/sh
# SPDX-License-Identifier: MIT
# test-window-live.sh — `record --window` keeps the spool small while the
# program runs, without a GPU: a program writes a long PyTorch allocator
# stream over time (make-window-stream.py ... pace: the file grown in
# chunks, each record's action word stored last), record follows it, and
# the records it imported give their space back to the disk (a hole
# punched; the stream's header counts them).  Proved:
#   - the stream's blocks on disk stay under a bound while its length
#     grows past it many times over;
#   - the program is given a stream length limit of 1 TiB (the stream's
#     length costs no disk), unless the user set one or nothing is given
#     back;
#   - the trace answers exactly as the stream says, and as a windowed
#     recording that gave nothing back (not followed) answers;
#   - record killed (SIGKILL) after records were given back: `recover`
#     reads on from the kept import, and answers the same;
#   - record getting SIGINT, the program ending at a record: the trace
#     holds every record written;
#   - a stream given back in part whose import is gone: one clear line,
#     the spool kept;
#   - a process that took its final snapshot at a normal exit, record
#     killed: recover cuts the kept import at the snapshot's marker, as
#     record would have.
#
# Usage: test-window-live.sh VRAMSCOPE MAKE_STREAM SNAPSHOTS_DIR   (TAP output)
set -u
# Absolute: the runs below start in folders of their own.
vramscope=$(realpath "$1") make=$(realpath "$2") snaps=$(realpath "$3")
. "$(dirname "$0")/../lib.sh"
vs_trace_db_env "$vramscope"
export VRAMSCOPE_TORCH_FOLLOW_MS=40

# 30000 steps of the loop: 540,455 records, 26 MB of stream, written in
# about 4 s.
cat >"$dir/prog.sh" <<EOS
echo "\${VRAMSCOPE_TORCH_STREAM_MAX_MB:-unset}" >"\$WANT.max"
printf "pid %s\nreason stream\ndevice 0 GPU-00000000-0000-0000-0000-0000000000aa 85899345920 Test GPU\n" \$\$ \
  >"\$VRAMSCOPE_SPOOL_DIR/torch-\$\$.stream.info"
exec python3 "$make" "\$VRAMSCOPE_SPOOL_DIR/torch-\$\$.stream" \$\$ 30000 pace 2000 \$PAUSE >"\$WANT"
EOS
# The same, ending as Python's normal exit does with a final snapshot.
cat >"$dir/exit.sh" <<EOS
printf "pid %s\nreason stream\ndevice 0 GPU-00000000-0000-0000-0000-0000000000aa 85899345920 Test GPU\n" \$\$ \
  >"\$VRAMSCOPE_SPOOL_DIR/torch-\$\$.stream.info"
python3 "$make" "\$VRAMSCOPE_SPOOL_DIR/torch-\$\$.stream" \$\$ 30000 exit pace 2000 0.02 >"\$WANT.part"
cp "$snaps/train.pickle" "\$VRAMSCOPE_SPOOL_DIR/torch-\$\$-000001.pickle"
printf "pid %s\nreason exit\ndevice 0 GPU-00000000-0000-0000-0000-0000000000aa 85899345920 Test GPU\n" \$\$ \
  >"\$VRAMSCOPE_SPOOL_DIR/torch-\$\$-000001.info"
mv "\$WANT.part" "\$WANT"
EOS
# given_back DIR: once the stream in the spool under DIR says more than
# 20000 records were given back (at most 2000 polls), how many.
given_back() {
  i=0 punched=0
  while [ $i -lt 2000 ]; do
    f=$(ls "$1"/.vramscope-spool-*/torch-*.stream 2>/dev/null | head -n 1)
    punched=$([ -n "$f" ] && python3 -c 'import struct, sys; h = open(sys.argv[1], "rb"); h.seek(40); print(struct.unpack("<Q", h.read(8))[0])' "$f" 2>/dev/null || echo 0)
    [ "${punched:-0}" -gt 20000 ] && break
    sleep 0.05
    i=$((i + 1))
  done
  echo "${punched:-0}"
}

# start_given NAME WANT PROG [VAR=VALUE...]: starts `record --window 10s
# -o NAME.db -- sh PROG` in the background in DIR/NAME (made), with
# WANT=WANT and each VAR=VALUE in its environment; sets rec to its pid and
# punched to what given_back says of it.
start_given() {
  name=$1 want=$2 prog=$3
  shift 3
  mkdir "$dir/$name"
  (cd "$dir/$name" && exec env "$@" WANT="$want" "$vramscope" record -q --window 10s \
    -o "$name.db" -- sh "$prog") &
  rec=$!
  punched=$(given_back "$dir/$name")
}

# sample DIR OUT: until DIR/stop exists, lines "allocated apparent punched"
# of the stream in the spool under DIR, every 50 ms.
sample() {
  python3 - "$1" >"$2" <<'PY' &
import glob, os, struct, sys, time
d = sys.argv[1]
while not os.path.exists(os.path.join(d, "stop")):
    for f in glob.glob(os.path.join(d, ".vramscope-spool-*", "torch-*.stream")):
        try:
            st = os.stat(f)
            with open(f, "rb") as h:
                h.seek(40)
                punched = struct.unpack("<Q", h.read(8))[0]
            print(st.st_blocks * 512, st.st_size, punched, flush=True)
        except (OSError, struct.error):
            pass
    time.sleep(0.05)
PY
}
# row TRACE WANT: 1 when the trace's pytorch summary row and the blocks
# live at its end are what the records written say.
row() {
  python3 -c '
import json, sys, vs_trace_db
db = vs_trace_db.connect(sys.argv[1])
want = json.load(open(sys.argv[2]))
cols = ["alloc_count", "free_count", "peak_allocated_bytes", "final_allocated_bytes", "peak_reserved_bytes", "final_reserved_bytes", "failed_alloc_count"]
row = db.execute("SELECT " + ", ".join("s." + c for c in cols) + " FROM summary s JOIN allocator a ON a.id = s.allocator_id WHERE a.kind = \"pytorch\"").fetchone()
leak = db.execute("SELECT count(*), sum(bytes) FROM block WHERE level = 2 AND free_seq IS NULL").fetchone()
ok = row == tuple(want[c] for c in cols) and leak == (want["leak_blocks"], want["leak_bytes"])
print(int(ok), want["events"], "events;", "" if ok else "got %s %s" % (row, leak))
' "$1" "$2" 2>&1
}
# same A B: the reports that must not depend on how the stream was read.
same() {
  for r in summary peak leaks; do
    "$vramscope" report "$1" $r --format csv >"$dir/a.$r" 2>&1
    "$vramscope" report "$2" $r --format csv >"$dir/b.$r" 2>&1
    cmp -s "$dir/a.$r" "$dir/b.$r" || { echo "report $r differs"; return 1; }
  done
  return 0
}

# 1. Followed and given back while it runs.
mkdir "$dir/live"
sample "$dir/live" "$dir/live.samples"
(cd "$dir/live" && PAUSE=0.02 WANT="$dir/want.json" "$vramscope" record -q --window 10s \
  -o live.db -- sh "$dir/prog.sh")
rc=$?
touch "$dir/live/stop"
wait
set -- $(awk 'BEGIN { a = 0; s = 0; p = 0 } { if ($1 > a) a = $1; if ($2 > s) s = $2; if ($3 > p) p = $3 }
  END { print a, s, p }' "$dir/live.samples")
# A bound on bytes, with room for a loaded machine: the imported part is
# given back as it grows (an idle machine keeps under 1 MB of 26 MB; one
# with every core busy kept 1.25 MB), so the disk holds under an eighth.
ok $([ $rc = 0 ] && [ "${2:-0}" -gt 4000000 ] && [ "${1:-99999999}" -lt $(( ${2:-0} / 8 )) ] \
     && [ "${3:-0}" -gt 0 ] && echo 0 || echo 1) \
  "the stream stays under an eighth of its size on disk while it grows (at most ${1:-?} bytes on disk of ${2:-?}; ${3:-?} records given back)"
set -- $(row "$dir/live/live.db" "$dir/want.json")
ok $([ "${1:-0}" = 1 ] && echo 0 || echo 1) "the trace holds what the stream says (${2:-} ${3:-} ${4:-} ${5:-})"
ok $([ "$(cat "$dir/want.json.max")" = 1048576 ] && echo 0 || echo 1) \
  "the program's streams may grow to 1 TiB (VRAMSCOPE_TORCH_STREAM_MAX_MB $(cat "$dir/want.json.max"))"
(cd "$dir/live" && VRAMSCOPE_TORCH_STREAM_MAX_MB=64 WANT="$dir/want-user" \
  "$vramscope" record -q --window 10s -o user.db -- sh -c 'echo "$VRAMSCOPE_TORCH_STREAM_MAX_MB" >"$WANT.max"')
ok $([ "$(cat "$dir/want-user.max")" = 64 ] && echo 0 || echo 1) \
  "a limit the user set is kept ($(cat "$dir/want-user.max"))"

# 2. The same stream recorded with the window, not followed: nothing
# given back.
mkdir "$dir/whole"
(cd "$dir/whole" && VRAMSCOPE_TORCH_FOLLOW_MS=0 PAUSE=0 WANT="$dir/want0.json" \
  "$vramscope" record -q --window 10s -o whole.db -- sh "$dir/prog.sh")
why=$(same "$dir/live/live.db" "$dir/whole/whole.db")
ok $? "it answers summary, peak and leaks as the window of a stream read after the run $why"
ok $([ "$(cat "$dir/want0.json.max")" = unset ] && echo 0 || echo 1) \
  "not followed, nothing is given back: the stream keeps its default limit ($(cat "$dir/want0.json.max"))"

# 3. record killed once records were given back; the program runs on to
# its end; recover reads on from the kept import.
start_given kill "$dir/want3.json" "$dir/prog.sh" PAUSE=0.02
kill -KILL $rec
wait $rec 2>/dev/null
spool=$(ls -d "$dir"/kill/.vramscope-spool-* | head -n 1)
poll 2000 0.05 test -s "$dir/want3.json"
sleep 0.2
cp -r "$spool" "$dir/lost-spool"
"$vramscope" recover -q "$spool" -o "$dir/kill/rec.db" 2>"$dir/rec.err"
rc=$?
set -- $(row "$dir/kill/rec.db" "$dir/want3.json")
ok $([ $rc = 0 ] && [ "${punched:-0}" -gt 0 ] && [ "${1:-0}" = 1 ] && echo 0 || echo 1) \
  "recover after record was killed with $punched records given back: every record once (rc $rc, ${2:-} ${3:-} ${4:-} ${5:-} $(cat "$dir/rec.err"))"
why=$(same "$dir/kill/rec.db" "$dir/whole/whole.db")
ok $? "and it answers as the trace record writes $why"

# 4. The kept import gone: the records given back cannot be read; one
# line says where they were, and the spool is kept.
rm -f "$dir"/lost-spool/torch-*.db
"$vramscope" recover -q "$dir/lost-spool" -o "$dir/lost.db" 2>"$dir/lost.err"
lines=$(grep -c "only in" "$dir/lost.err")
ok $([ "$lines" = 1 ] && [ -d "$dir/lost-spool" ] && echo 0 || echo 1) \
  "a stream given back in part without its import: a line says where its records were, the spool is kept ($(cat "$dir/lost.err"))"

# 5. record gets SIGINT mid-run and forwards it: the program stops at a
# record; the trace holds every record it wrote.
start_given int "$dir/want5.json" "$dir/prog.sh" PAUSE=0.02
kill -INT $rec
wait $rec
rc=$?
set -- $(row "$dir/int/int.db" "$dir/want5.json")
ok $([ $rc = 0 ] && [ "${1:-0}" = 1 ] && [ "${2:-0}" -lt 162050 ] && echo 0 || echo 1) \
  "record interrupted after $punched records were given back: the trace holds the ${2:-?} records written (rc $rc, ${3:-} ${4:-} ${5:-})"

# 6. A normal exit with a final snapshot; record killed once records were
# given back.  recover cuts at the snapshot's marker: what was live then
# is what the trace holds at its end (not Python's shutdown frees).
start_given exit "$dir/want6.json" "$dir/exit.sh"
kill -KILL $rec
wait $rec 2>/dev/null
poll 2000 0.05 test -s "$dir/want6.json"
spool=$(ls -d "$dir"/exit/.vramscope-spool-* | head -n 1)
"$vramscope" recover -q "$spool" -o "$dir/exit/rec.db" 2>"$dir/rec6.err"
rc=$?
set -- $(row "$dir/exit/rec.db" "$dir/want6.json")
ok $([ $rc = 0 ] && [ "${punched:-0}" -gt 0 ] && [ "${1:-0}" = 1 ] && echo 0 || echo 1) \
  "a final snapshot at exit, record killed with $punched records given back: recover keeps what was live at its marker (rc $rc, ${2:-} ${3:-} ${4:-} ${5:-} $(cat "$dir/rec6.err"))"
echo "1..$n"
exit $failed

#!/bin/sh
# SPDX-License-Identifier: MIT
# window-rounds-bench.sh — `record --window` applying the window while the
# program runs (rounds every 200 ms, vs-window-rounds.h), on the paced
# PyTorch allocator stream of tests/collector/test-window-rounds.sh, for
# runs of growing length: the most the spool (live trace, import, stream)
# held on disk, sampled every 50 ms, and record's post-run work
# (--timings).  With the rounds both stay about flat as the run grows;
# with the window applied at the end only (rounds off) the spool grows
# with the run.  Both depend on the machine keeping up with the stream,
# which is why they are measured here and not asserted by a test.
#
# Usage: bench/window-rounds-bench.sh [STEPS...]   (default 15000 45000;
#   18 records a step, written 20 times faster than the loop would run)
#   VRAMSCOPE  the vramscope binary (default build/cli/vramscope), with
#              VRAMSCOPE_COLLECTOR set when it is not the build tree's
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
VRAMSCOPE=$(realpath "${VRAMSCOPE:-$root/build/cli/vramscope}")
make="$root/tests/collector/make-window-stream.py"
[ $# -gt 0 ] || set -- 15000 45000
export VRAMSCOPE_TORCH_FOLLOW_MS=40 VRAMSCOPE_WINDOW_LIVE_LAG_MS=1000
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cat >"$dir/prog.sh" <<EOS
printf "pid %s\nreason stream\ndevice 0 GPU-00000000-0000-0000-0000-0000000000aa 85899345920 Test GPU\n" \$\$ \
  >"\$VRAMSCOPE_SPOOL_DIR/torch-\$\$.stream.info"
exec python3 "$make" "\$VRAMSCOPE_SPOOL_DIR/torch-\$\$.stream" \$\$ \$STEPS pace 2000 0.05 >/dev/null
EOS
# sample DIR OUT: until DIR/stop exists, the spool's bytes on disk every
# 50 ms.
sample() {
  python3 - "$1" >"$2" <<'PY' &
import glob, os, sys, time
d = sys.argv[1]
while not os.path.exists(os.path.join(d, "stop")):
    total = 0
    for f in glob.glob(os.path.join(d, ".vramscope-spool-*", "*")):
        try:
            total += os.stat(f).st_blocks * 512
        except OSError:
            pass
    print(total, flush=True)
    time.sleep(0.05)
PY
}
most() { awk 'BEGIN { m = 0 } { if ($1 > m) m = $1 } END { print m }' "$1"; }
printf "%-8s %7s %8s %14s %14s %12s\n" rounds steps records "spool at most" "post-run ms" "run ms"
for ms in 200 0; do
  for steps in "$@"; do
    w="$dir/r$ms-$steps"
    mkdir "$w"
    sample "$w" "$w.samples"
    (cd "$w" && STEPS=$steps VRAMSCOPE_WINDOW_LIVE_MS=$ms \
      "$VRAMSCOPE" record -q --timings --window 10s -o t.db -- sh "$dir/prog.sh" 2>"$w.err")
    touch "$w/stop"
    wait
    post=$(awk '/post-run total/ { print $3 }' "$w.err")
    run=$(awk '/program run/ { print $(NF-1) }' "$w.err")
    printf "%-8s %7d %8d %14d %14s %12s\n" "$([ $ms = 0 ] && echo off || echo "${ms} ms")" \
      "$steps" $((steps * 18)) "$(most "$w.samples")" "${post:-?}" "${run:-?}"
    rm -rf "$w"
  done
done

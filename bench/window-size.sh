#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The flight recorder's size against the run's length, without a GPU: a
# synthetic PyTorch allocator stream (tests/collector/make-window-stream.py:
# a step every 10 ms, 6 activations, a 4 KiB leak every 100 steps, one
# early 8 GiB peak, a failed request every 2 s), written over time as the
# hook's tracker writes it (SPEED times the loop's own pace), recorded by
# `record` whole and with --window, for several run lengths.  Prints one
# Markdown row per length: events, then for each recording the trace's
# size, the spool's largest size on disk while the program ran (allocated
# blocks, as du counts them, sampled every 0.2 s) and record's post-run
# work (`record --timings`: from the program's exit to the trace written).
#
# Usage: bench/window-size.sh [WINDOW] [SECONDS...]
#   WINDOW   the --window DURATION (default 10s)
#   SECONDS  run lengths in seconds of the synthetic loop (default 60 300 1200)
#   SPEED    how many times the loop's pace the stream is written at
#            (default 20)
#   VRAMSCOPE  the vramscope binary (default build/cli/vramscope), its
#   collector found as record finds it (VRAMSCOPE_COLLECTOR)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
VRAMSCOPE=${VRAMSCOPE:-$root/build/cli/vramscope}
SPEED=${SPEED:-20}
window=${1:-10s}
shift || true
lengths=("$@")
[ ${#lengths[@]} -gt 0 ] || lengths=(60 300 1200)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# A pause after every 100 steps (1 s of the loop).
pause=$(echo "1 / $SPEED" | bc -l)
cat >"$tmp/prog.sh" <<EOS
printf "pid %s\nreason stream\ndevice 0 GPU-00000000-0000-0000-0000-0000000000aa 85899345920 Test GPU\n" \$\$ \\
  >"\$VRAMSCOPE_SPOOL_DIR/torch-\$\$.stream.info"
exec python3 "$root/tests/collector/make-window-stream.py" "\$VRAMSCOPE_SPOOL_DIR/torch-\$\$.stream" \$\$ \$STEPS pace 1800 $pause >"$tmp/want.json"
EOS
# rec NAME [record options]: records the program into $tmp/NAME/NAME.db
# (its spool beside it); sets spool_max (bytes on disk) and post_s.
rec() {
  local name=$1
  shift
  rm -rf "${tmp:?}/$name" && mkdir "$tmp/$name"
  (while [ ! -e "$tmp/$name.stop" ]; do
     for s in "$tmp/$name"/.vramscope-spool-*; do
       [ -d "$s" ] && du -sB1 "$s" | cut -f1
     done
     sleep 0.2
   done) >"$tmp/$name.spool" 2>/dev/null &
  local sampler=$!
  (cd "$tmp/$name" && STEPS=$steps "$VRAMSCOPE" record -q -f --timings "$@" -o "$name.db" \
    -- sh "$tmp/prog.sh" 2>"$tmp/$name.err")
  touch "$tmp/$name.stop"
  wait "$sampler" || true
  rm -f "$tmp/$name.stop"
  spool_max=$(sort -n "$tmp/$name.spool" | tail -n 1)
  post_s=$(awk '/post-run total/ { print $3 / 1000 }' "$tmp/$name.err")
}
mb() { echo "$1 / 1000000" | bc -l; }
echo "| run | events | whole trace | spool at most | post-run | --window $window trace | spool at most | post-run |"
echo "|---|---|---|---|---|---|---|---|"
for secs in "${lengths[@]}"; do
  steps=$((secs * 100))
  rec full
  full_spool=$spool_max full_s=$post_s
  rec win --window "$window"
  events=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["events"])' "$tmp/want.json")
  printf "| %s s | %s | %.1f MB | %.1f MB | %.1f s | %.2f MB | %.1f MB | %.1f s |\n" "$secs" "$events" \
    "$(mb "$(stat -c %s "$tmp/full/full.db")")" "$(mb "${full_spool:-0}")" "$full_s" \
    "$(mb "$(stat -c %s "$tmp/win/win.db")")" "$(mb "${spool_max:-0}")" "$post_s"
done

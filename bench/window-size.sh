#!/usr/bin/env bash
# The flight recorder's size against the run's length, without a GPU: a
# synthetic PyTorch allocator stream (tests/collector/make-window-stream.py:
# a step every 10 ms, 6 activations, a 4 KiB leak every 100 steps, one
# early 8 GiB peak, a failed request every 2 s) recorded by `record`
# whole and with --window, for several run lengths.  Prints one Markdown
# row per length: events, the whole trace's size, the windowed trace's
# size, and record's wall time after the program for each.
#
# Usage: bench/window-size.sh [WINDOW] [SECONDS...]
#   WINDOW   the --window DURATION (default 10s)
#   SECONDS  run lengths in seconds of the synthetic loop (default 60 300 1200)
#   VRAMSCOPE  the vramscope binary (default build/cli/vramscope), its
#   collector found as record finds it (VRAMSCOPE_COLLECTOR)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
VRAMSCOPE=${VRAMSCOPE:-$root/build/cli/vramscope}
window=${1:-10s}
shift || true
lengths=("$@")
[ ${#lengths[@]} -gt 0 ] || lengths=(60 300 1200)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cat >"$tmp/prog.sh" <<EOS
python3 "$root/tests/collector/make-window-stream.py" "\$VRAMSCOPE_SPOOL_DIR/torch-\$\$.stream" \$\$ \$STEPS >"$tmp/want.json"
printf "pid %s\nreason stream\ndevice 0 GPU-00000000-0000-0000-0000-0000000000aa 85899345920 Test GPU\n" \$\$ \\
  >"\$VRAMSCOPE_SPOOL_DIR/torch-\$\$.stream.info"
EOS
# The wall time of record after the program: the whole run's minus the
# program's own (make-window-stream.py alone, timed apart).
now() { date +%s.%N; }
echo "| run | events | whole trace | post-run | --window $window trace | post-run |"
echo "|---|---|---|---|---|---|"
for secs in "${lengths[@]}"; do
  steps=$((secs * 100))
  t0=$(now)
  python3 "$root/tests/collector/make-window-stream.py" "$tmp/alone.stream" 1 "$steps" >/dev/null
  prog=$(echo "$(now) - $t0" | bc)
  t0=$(now)
  STEPS=$steps "$VRAMSCOPE" record -q -f -o "$tmp/full.db" -- sh "$tmp/prog.sh"
  full_s=$(echo "$(now) - $t0 - $prog" | bc)
  t0=$(now)
  STEPS=$steps "$VRAMSCOPE" record -q -f --window "$window" -o "$tmp/win.db" -- sh "$tmp/prog.sh"
  win_s=$(echo "$(now) - $t0 - $prog" | bc)
  events=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["events"])' "$tmp/want.json")
  printf "| %s s | %s | %.1f MB | %.1f s | %.2f MB | %.1f s |\n" "$secs" "$events" \
    "$(echo "$(stat -c %s "$tmp/full.db") / 1000000" | bc -l)" "$full_s" \
    "$(echo "$(stat -c %s "$tmp/win.db") / 1000000" | bc -l)" "$win_s"
done

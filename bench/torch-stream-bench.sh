#!/bin/sh
# SPDX-License-Identifier: MIT
# torch-stream-bench.sh — the cost of PyTorch's allocator stream: the time
# of a ResNet-18 training step (batch 64, 224×224, after 20 warm-up steps,
# mean of STEPS) run plain, recorded (the stream on: the default),
# recorded with the stream off (VRAMSCOPE_TORCH_STREAM=0: the exit snapshot
# only, as before the stream), alternating, REPS times each.  Prints one
# line per run and the best of each mode with the ratios to plain.
#
# Usage: bench/torch-stream-bench.sh [OUTDIR]
#   VRAMSCOPE  command that records (default build/cli/vramscope)
#   STEPS      training steps timed per run (default 300)
#   REPS       runs per mode (default 2)
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
out=${1:-$(mktemp -d)}
mkdir -p "$out"
VRAMSCOPE=${VRAMSCOPE:-$root/build/cli/vramscope}
STEPS=${STEPS:-300}
REPS=${REPS:-2}
train="python3 $root/tests/gpu/endings-train.py bench --steps $STEPS --warmup 20 --batch 64 --size 224"
best_plain= best_stream= best_nostream=
min() { python3 -c 'import sys; v=[float(x) for x in sys.argv[1:] if x]; print(min(v) if v else "")' "$@"; }
rep=1
while [ $rep -le "$REPS" ]; do
  for mode in plain stream nostream; do
    case $mode in
      plain) ms=$(timeout 600 $train 2>&1 | sed -n 's/^step_ms //p') ;;
      stream) ms=$(timeout 600 "$VRAMSCOPE" record -q -o "$out/bench.db" -- $train 2>&1 \
        | sed -n 's/^step_ms //p') ;;
      nostream) ms=$(VRAMSCOPE_TORCH_STREAM=0 timeout 600 "$VRAMSCOPE" record -q \
        -o "$out/bench.db" -- $train 2>&1 | sed -n 's/^step_ms //p') ;;
    esac
    rm -f "$out/bench.db"
    echo "run $rep $mode step_ms ${ms:-failed}"
    eval "best_$mode=\$(min \$best_$mode $ms)"
  done
  rep=$((rep + 1))
done
python3 - "$best_plain" "$best_stream" "$best_nostream" <<'PY'
import sys
p, s, n = (float(x) if x else None for x in sys.argv[1:])
print("best step_ms: plain %s, recorded %s, recorded without the stream %s" % (p, s, n))
if p and s and n:
    print("recorded/plain %.4f, recorded-without-stream/plain %.4f, stream's own cost %+.2f %%"
          % (s / p, n / p, 100 * (s - n) / n))
PY

#!/bin/sh
# SPDX-License-Identifier: MIT
# framework-bench.sh — what `vramscope record` costs a JAX and a CuPy
# program per step: samples/jax-healthy.py and samples/cupy-healthy.py,
# each run ROUNDS times without and with recording, alternately; each run
# prints the time of its steps after the first (STEPS_NS), so start-up and
# the trace's writing are left out.  Prints the median step time of each
# and their ratio.  Results: docs/performance.md ("JAX and CuPy").
#
# Usage: bench/framework-bench.sh [ROUNDS] [STEPS]
#   VRAMSCOPE  command that records (default: build/cli/vramscope)
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
rounds=${1:-5}
steps=${2:-200}
VRAMSCOPE=${VRAMSCOPE:-$root/build/cli/vramscope}
tmp=$(mktemp -d)
per_step() { # the STEPS_NS line of a run's output, as ns per step
  sed -n 's/^STEPS_NS \([0-9]*\) \([0-9]*\)$/\2 \1/p' "$1" | awk '{ printf "%d\n", $1 / $2 }'
}
median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
for sample in jax-healthy cupy-healthy; do
  : >"$tmp/plain" ; : >"$tmp/rec"
  for i in $(seq "$rounds"); do
    python3 "$root/samples/$sample.py" --steps "$steps" >"$tmp/out" 2>&1 && per_step "$tmp/out" >>"$tmp/plain"
    "$VRAMSCOPE" record -q -o "$tmp/run.db" --force -- python3 "$root/samples/$sample.py" \
      --steps "$steps" >"$tmp/out" 2>&1 && per_step "$tmp/out" >>"$tmp/rec"
  done
  plain=$(median <"$tmp/plain")
  rec=$(median <"$tmp/rec")
  echo "$sample: $steps steps, $rounds rounds: plain $plain ns/step, recorded $rec ns/step," \
    "ratio $(awk -v a="$rec" -v b="$plain" 'BEGIN { printf "%.3f", a / b }')"
  echo "  plain: $(tr '\n' ' ' <"$tmp/plain")"
  echo "  recorded: $(tr '\n' ' ' <"$tmp/rec")"
done
rm -rf "$tmp"

# SPDX-License-Identifier: MIT
# lib.sh — what the benchmark scripts share (bash), sourced first as
# `. "$(dirname "$0")/lib.sh"` so that it reads the script's arguments:
# strict mode (-euo pipefail), build (the first argument, default build)
# and the functions below.
set -euo pipefail
build="${1:-build}"

# bench_work NAME: sets work to $VS_BENCH_DIR (default BUILD/bench-data)
# and makes it, trace to work/NAME and vs to the build's vramscope.
bench_work() {
  work="${VS_BENCH_DIR:-$build/bench-data}"
  mkdir -p "$work"
  trace="$work/$1"
  vs="$build/cli/vramscope"
}

# bench_synthetic EVENTS: bench_work for the synthetic trace of EVENTS
# events, written with bench/vs-gen-trace (its output discarded) unless
# it is there already.
bench_synthetic() {
  bench_work "synthetic-$1.db"
  if [ ! -f "$trace" ]; then
    "$build/bench/vs-gen-trace" -n "$1" -o "$trace" > /dev/null
  fi
}

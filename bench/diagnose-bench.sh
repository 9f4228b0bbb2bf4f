#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# diagnose benchmark: `vramscope report diagnose` on the synthetic trace of
# bench/vs-gen-trace (10 M events by default, written once and kept in
# $VS_BENCH_DIR or BUILD_DIR/bench-data, as run-analyzer-bench.sh does).
# Runs it ROUNDS times (process start and open included) and prints the
# median wall time, the median CPU time (user + system: what the run
# itself costs, which a loaded machine does not inflate the way it does
# wall time), the machine's load average before and after, and each
# figure's ratio to the 2 s target (< 1 meets it).  With a second
# vramscope binary (BASELINE, e.g. one built from an older commit) the two
# run alternately, so both see the same load.
#
# Usage: bench/diagnose-bench.sh [BUILD_DIR] [EVENTS] [ROUNDS] [BASELINE]
set -euo pipefail
build="${1:-build}"
events="${2:-10000000}"
rounds="${3:-5}"
baseline="${4:-}"
work="${VS_BENCH_DIR:-$build/bench-data}"
trace="$work/synthetic-$events.db"
vs="$build/cli/vramscope"

if [ ! -f "$trace" ]; then
  ninja -C "$build" benchmarks >&2 || exit 1
  mkdir -p "$work"
  "$build/bench/vs-gen-trace" -n "$events" -o "$trace" >&2
fi

# One run of BINARY: "wall_ms cpu_ms" on stdout (GNU time's %e %U %S).
one_run () {
  local t
  t=$( { /usr/bin/time -f '%e %U %S' "$1" report --format csv "$trace" diagnose > /dev/null; } 2>&1 | tail -n 1)
  awk '{ printf "%d %d\n", $1 * 1000, ($2 + $3) * 1000 }' <<<"$t"
}

median () { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

echo "# report diagnose on $trace ($events events), $rounds rounds"
echo "load_average_before $(cut -d' ' -f1-3 /proc/loadavg) cores $(nproc)"
: > "$work/diagnose-new.txt"
: > "$work/diagnose-base.txt"
for _ in $(seq "$rounds"); do
  one_run "$vs" >> "$work/diagnose-new.txt"
  if [ -n "$baseline" ]; then
    one_run "$baseline" >> "$work/diagnose-base.txt"
  fi
done
echo "load_average_after $(cut -d' ' -f1-3 /proc/loadavg)"

report () {
  local name=$1 file=$2 wall cpu
  wall=$(cut -d' ' -f1 "$file" | median)
  cpu=$(cut -d' ' -f2 "$file" | median)
  echo "${name}_runs_wall_ms $(cut -d' ' -f1 "$file" | tr '\n' ' ')"
  awk -v n="$name" -v w="$wall" -v c="$cpu" 'BEGIN {
    printf "%s_wall_ms %d target < 2000 ratio %.3f\n", n, w, w / 2000
    printf "%s_cpu_ms %d target < 2000 ratio %.3f\n", n, c, c / 2000 }'
}
report diagnose "$work/diagnose-new.txt"
if [ -n "$baseline" ]; then
  report baseline "$work/diagnose-base.txt"
fi

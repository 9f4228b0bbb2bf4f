#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# predict benchmark: writes a synthetic trace of N events (default 10M) with
# bench/vs-gen-trace, then times `vramscope predict` on it taken as two runs
# (batches 1 and 2) and as one run, with `whatif` (one replay) beside it for
# reference, and prints "key value" lines with the 5 s target.  The same
# trace at two batches is the largest two-run input the generator makes:
# every request matches and none varies, so every batch is the same
# replay (kept by the model): one without limit, and with a limit below the
# peak (--limit, the third figure) one more under it, which fails at every
# batch.
#
# Usage: bench/predict-bench.sh [BUILD_DIR] [EVENTS]
. "$(dirname "$0")/lib.sh"
events="${2:-10000000}"
bench_work "synthetic-$events.db"

[ -s "$trace" ] || "$build/bench/vs-gen-trace" -n "$events" -o "$trace"
ms_now () { date +%s%N | cut -c1-13; }
timed () {
  local name=$1; shift
  local t0 t1
  t0=$(ms_now)
  "$@" > "$work/$name.csv"
  t1=$(ms_now)
  awk -v ms=$((t1 - t0)) -v n="$name" 'BEGIN { printf "%s_ms %d target < 5000 ratio %.2f\n", n, ms, ms / 5000 }'
}
timed whatif "$vs" whatif "$trace" --format csv
timed predict_two_runs "$vs" predict "$trace@1" "$trace@2" --batch 4 --format csv
timed predict_two_runs_limit "$vs" predict "$trace@1" "$trace@2" --batch 4 --limit 1300000000 --format csv
timed predict_one_run "$vs" predict "$trace@1" --batch 4 --format csv

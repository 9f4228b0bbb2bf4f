#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Analyzer and writer benchmark: writes a synthetic trace of N events
# (default 10M) with bench/vs-gen-trace, then times `report summary`,
# `peak`, `leaks`, `fragmentation`, `diagnose`, `roles`, `growth`, `ranks` and
# `whatif`, the viewer's what-if replay (vs_whatif_line_new) and
# one-screen timeline queries at every zoom.  Prints each
# figure with its target and the ratio figure/target (< 1 meets it).
#
# Usage: bench/run-analyzer-bench.sh [BUILD_DIR] [EVENTS]
. "$(dirname "$0")/lib.sh"
# The benchmark programs are not built by default.
ninja -C "$build" benchmarks >&2 || exit 1
events="${2:-10000000}"
bench_work "synthetic-$events.db"

ms_now () { date +%s%N | cut -c1-13; }

echo "# writer: $events events through the writer API (one core)"
gen=$("$build/bench/vs-gen-trace" -n "$events" -o "$trace")
echo "$gen"
rate=$(awk '/write_events_per_second/ {print $2}' <<<"$gen")
awk -v r="$rate" 'BEGIN { printf "writer_events_per_second %d target >= 1500000 ratio %.2f\n", r, 1500000 / r }'

for report in summary peak leaks fragmentation diagnose roles growth ranks; do
  t0=$(ms_now)
  "$vs" report "$trace" --format csv "$report" > "$work/$report.csv"
  t1=$(ms_now)
  awk -v ms=$((t1 - t0)) -v r="$report" 'BEGIN { printf "report_%s_ms %d target < 2000 ratio %.3f\n", r, ms, ms / 2000 }'
done
t0=$(ms_now)
"$vs" report "$trace" --format csv --buckets 1000 timeline > "$work/timeline.csv"
t1=$(ms_now)
awk -v ms=$((t1 - t0)) 'BEGIN { printf "report_timeline_1000_ms %d target < 2000 ratio %.3f\n", ms, ms / 2000 }'

# whatif: the PyTorch allocator's requests replayed through the model, under
# the trace's own settings (one replay), then also under another (two).
t0=$(ms_now)
"$vs" whatif "$trace" --format csv > "$work/whatif.csv"
t1=$(ms_now)
awk -v ms=$((t1 - t0)) 'BEGIN { printf "whatif_ms %d target < 5000 ratio %.3f\n", ms, ms / 5000 }'
t0=$(ms_now)
"$vs" whatif "$trace" --format csv --alloc-conf expandable_segments:True > "$work/whatif-2.csv"
t1=$(ms_now)
awk -v ms=$((t1 - t0)) 'BEGIN { printf "whatif_two_settings_ms %d target < 10000 ratio %.3f\n", ms, ms / 10000 }'

# The viewer's what-if: the same replay with its reserved line and progress.
"$build/bench/vs-bench-whatif-line" "$trace" | tee "$work/whatif-line.txt"

echo "# timeline queries, 1000 buckets, in-process (median worst per zoom)"
"$build/bench/vs-bench-timeline" "$trace" | tee "$work/timeline-zoom.txt"
worst=$(awk '/timeline_worst_ms/ {print $2}' "$work/timeline-zoom.txt")
awk -v ms="$worst" 'BEGIN { printf "timeline_query_worst_ms %.2f target < 50 ratio %.3f\n", ms, ms / 50 }'
ls -l "$trace" | awk '{ print "trace_bytes", $5 }'

#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Export benchmark: writes a synthetic trace of N events (default 1M) with
# bench/vs-gen-trace, then times `vramscope export` in each format and
# prints the time, the peak resident memory and the size of the output.
# The exports stream from indexed reads, so memory stays flat whatever the
# trace's size.
#
# Usage: bench/export-bench.sh [BUILD_DIR] [EVENTS]
. "$(dirname "$0")/lib.sh"
# The benchmark programs are not built by default.
ninja -C "$build" benchmarks >&2 || exit 1
events="${2:-1000000}"
bench_work "synthetic-$events.db"

[ -f "$trace" ] || "$build/bench/vs-gen-trace" -n "$events" -o "$trace" >/dev/null
echo "# export of a $events-event synthetic trace ($(stat -c %s "$trace") bytes)"
for format in perfetto snapshot folded; do
  out="$work/export.$format"
  /usr/bin/time -f "%e %M" -o "$work/time.txt" "$vs" export "$trace" --format "$format" -o "$out" --force
  read -r seconds kib <"$work/time.txt"
  echo "export_${format}_seconds $seconds peak_rss_kib $kib output_bytes $(stat -c %s "$out")"
done

#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Deep-stack benchmark: writes a trace of LEAVES stacks (default 100) of
# the deepest depth a trace may hold (100,000 frames) sharing one chain,
# with bench/vs-gen-deep-stacks, then runs `vramscope report` (the
# diagnosis) and the folded export on it and prints the time (wall and
# user CPU), the peak resident memory and the size of the output.  Readers
# resolve stacks through the trie, so memory stays flat however many
# leaves share the chain.
#
# Usage: bench/deep-stacks-bench.sh [BUILD_DIR] [LEAVES]
. "$(dirname "$0")/lib.sh"
leaves="${2:-100}"
bench_work "deep-$leaves.db"

[ -f "$trace" ] || "$build/bench/vs-gen-deep-stacks" -l "$leaves" -o "$trace"
echo "# $leaves stacks of 100000 frames sharing one chain ($(stat -c %s "$trace") bytes)"
/usr/bin/time -f "%e %U %M" -o "$work/time.txt" "$vs" report "$trace" >"$work/deep-report.txt"
read -r seconds user kib <"$work/time.txt"
echo "report_seconds $seconds user_seconds $user peak_rss_kib $kib"
out="$work/deep.folded"
/usr/bin/time -f "%e %U %M" -o "$work/time.txt" "$vs" export "$trace" --format folded -o "$out" --force
read -r seconds user kib <"$work/time.txt"
echo "export_folded_seconds $seconds user_seconds $user peak_rss_kib $kib output_bytes $(stat -c %s "$out")"
rm -f "$out"

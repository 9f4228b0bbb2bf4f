#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Compacted traces against plain ones: writes a synthetic trace of N events
# (default 3M) and K kernels (default 300k) with bench/vs-gen-trace, not
# finalized; finalizes one copy as schema 4 (tests/trace/vs-compact-tool
# --plain), and one as `record` does now: series and block coded into chunks as the
# finalizer derives them, then compacted (--finalize); prints the time of
# each step, both sizes, and the time of `report summary`, `peak`,
# `leaks`, `fragmentation`, `diagnose`, `growth`, `kernels`, `whatif` and a
# 1000-bucket timeline on each file (the median of 3 runs) and its peak
# resident memory (the largest of the 3, /usr/bin/time), checking that
# both answer the same.
#
# Usage: bench/compact-bench.sh [BUILD_DIR] [EVENTS] [KERNELS]
set -euo pipefail
build="${1:-build}"
# The benchmark programs are not built by default.
ninja -C "$build" benchmarks >&2 || exit 1
events="${2:-3000000}"
kernels="${3:-300000}"
work="${VS_BENCH_DIR:-$build/bench-data}"
mkdir -p "$work"
plain="$work/compact-plain-$events.db"
compact="$work/compact-$events.db"
vs="$build/cli/vramscope"

ms_now () { date +%s%N | cut -c1-13; }

rm -f "$plain" "$compact"
"$build/bench/vs-gen-trace" -n "$events" -k "$kernels" --no-finalize -o "$plain" > /dev/null
cp "$plain" "$compact"
echo "# schema 4: finalize"
"$build/tests/trace/vs-compact-tool" --plain "$plain"
echo "# schema 5: finalize (series and block into chunks), then compact"
"$build/tests/trace/vs-compact-tool" --finalize "$compact"
echo "bytes_plain $(stat -c %s "$plain") bytes_compacted $(stat -c %s "$compact")"

# The median of three runs of a command, in ms, and the largest peak
# resident memory of the three, in MB; its output in $work/out.
median3 () {
  local a=() t0 t1 rss=0 r
  for _ in 1 2 3; do
    t0=$(ms_now)
    /usr/bin/time -f %M -o "$work/rss" "$@" > "$work/out" 2>&1 || true
    t1=$(ms_now)
    a+=($((t1 - t0)))
    r=$(tail -n 1 "$work/rss")
    [ "$r" -gt "$rss" ] && rss=$r
  done
  echo "$(printf '%s\n' "${a[@]}" | sort -n | sed -n 2p) $((rss / 1024))"
}

printf '%-14s %9s %9s %10s %10s\n' "report" "plain_ms" "plain_MB" "compact_ms" "compact_MB"
for r in summary peak leaks fragmentation diagnose growth kernels "timeline --buckets 1000" whatif; do
  if [ "$r" = whatif ]; then cmd=(whatif); else cmd=(report --format csv); fi
  # shellcheck disable=SC2086
  read -r p pm < <(median3 "$vs" "${cmd[0]}" "$plain" "${cmd[@]:1}" $( [ "$r" = whatif ] || echo $r ))
  cp "$work/out" "$work/out.plain"
  # shellcheck disable=SC2086
  read -r c cm < <(median3 "$vs" "${cmd[0]}" "$compact" "${cmd[@]:1}" $( [ "$r" = whatif ] || echo $r ))
  same=$(cmp -s "$work/out" "$work/out.plain" && echo same || echo DIFFERENT)
  printf '%-14s %9d %9d %10d %10d %s\n' "${r%% *}" "$p" "$pm" "$c" "$cm" "$same"
done

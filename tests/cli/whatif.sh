#!/bin/sh
# SPDX-License-Identifier: MIT
# whatif.sh VRAMSCOPE DATA_DIR — `vramscope whatif`: usage errors (exit 2),
# traces it cannot replay (exit 1, one line), the first row reproducing the
# trace's own summary, and the CSV of several settings on a recorded trace
# that ran out of memory, compared with tests/data/golden/whatif.csv
# (UPDATE_GOLDEN=1 rewrites it).  TAP output.
set -u
vramscope=$1 data=$2
. "$(dirname "$0")/../lib.sh"
trace="$data/torch-eval-leak.db"
cp "$trace" "$dir/t.db"

echo "1..12"
check "no file" 2 "expected one trace file" whatif
check "bad alloc-conf" 2 "unknown allocator option 'frobnicate'" whatif --alloc-conf frobnicate:1 "$dir/t.db"
check "max_split_size_mb too small" 2 "must be > 20" whatif --alloc-conf max_split_size_mb:8 "$dir/t.db"
check "bad limit" 2 "--limit takes" whatif --limit 1.5 "$dir/t.db"
check "bad format" 2 "--format must be text, csv or json" whatif --format xml "$dir/t.db"
check "missing file" 1 "vramscope:" whatif "$dir/none.db"
check "no PyTorch allocator" 1 "no PyTorch caching allocator" whatif "$data/sample-oom.db"
check "unknown device" 1 "no PyTorch caching allocator on device 7" whatif --device 7 "$dir/t.db"
check "help lists whatif" 0 "vramscope whatif FILE" help
check "text output" 0 "expandable_segments:True" whatif --alloc-conf expandable_segments:True "$dir/t.db"

# The first row replays the trace itself: its peaks and failures.
n=$((n + 1))
"$vramscope" whatif --format csv "$dir/t.db" >"$dir/own.csv"
"$vramscope" report --format csv --allocator pytorch "$dir/t.db" summary >"$dir/summary.csv"
own=$(awk -F, 'NR == 2 { print $5 "," $6 "," $7 }' "$dir/own.csv")
want=$(awk -F, 'NR == 1 { for (k = 1; k <= NF; k++) c[$k] = k }
  NR == 2 { print $c["peak_reserved_bytes"] "," $c["peak_allocated_bytes"] "," $c["failed_alloc_count"] }' \
  "$dir/summary.csv")
if [ -n "$own" ] && [ "$own" = "$want" ]; then
  echo "ok $n first row reproduces the recorded run ($own)"
else
  echo "not ok $n first row '$own', summary '$want'"
  failed=1
fi

n=$((n + 1))
"$vramscope" whatif --format csv --alloc-conf "" --alloc-conf expandable_segments:True \
  --alloc-conf max_split_size_mb:64 --alloc-conf roundup_power2_divisions:4 \
  --alloc-conf garbage_collection_threshold:0.5 --limit 6442450944 "$dir/t.db" >"$dir/whatif.csv"
if [ "${UPDATE_GOLDEN:-0}" = 1 ]; then
  cp "$dir/whatif.csv" "$data/golden/whatif.csv"
  echo "ok $n golden whatif.csv rewritten"
elif diff -u "$data/golden/whatif.csv" "$dir/whatif.csv" >"$dir/diff"; then
  echo "ok $n golden whatif.csv"
else
  echo "not ok $n golden whatif.csv differs:"
  sed 's/^/# /' "$dir/diff"
  failed=1
fi
exit $failed

#!/bin/sh
# SPDX-License-Identifier: MIT
# whatif.sh VRAMSCOPE DATA_DIR — `vramscope whatif`: usage errors (exit 2),
# traces it cannot replay (exit 1, one line), the first row reproducing the
# trace's own summary, and the CSV of several settings on a recorded trace
# that ran out of memory, compared with tests/data/golden/whatif.csv
# (UPDATE_GOLDEN=1 rewrites it).  TAP output.
set -u
vramscope=$1 data=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
trace="$data/torch-eval-leak.db"
cp "$trace" "$tmp/t.db"

i=0 failed=0
check () { # check NAME EXPECTED_STATUS PATTERN_IN_OUTPUT ARGS...
  name=$1 want=$2 pattern=$3
  shift 3
  i=$((i + 1))
  "$vramscope" "$@" >"$tmp/out" 2>&1
  rc=$?
  if [ "$rc" -eq "$want" ] && grep -qF -- "$pattern" "$tmp/out"; then
    echo "ok $i $name"
  else
    echo "not ok $i $name: exit $rc (wanted $want), output:"
    sed 's/^/# /' "$tmp/out"
    failed=1
  fi
}

echo "1..12"
check "no file" 2 "expected one trace file" whatif
check "bad alloc-conf" 2 "unknown allocator option 'frobnicate'" whatif --alloc-conf frobnicate:1 "$tmp/t.db"
check "max_split_size_mb too small" 2 "must be > 20" whatif --alloc-conf max_split_size_mb:8 "$tmp/t.db"
check "bad limit" 2 "--limit takes" whatif --limit 1.5 "$tmp/t.db"
check "bad format" 2 "--format must be text, csv or json" whatif --format xml "$tmp/t.db"
check "missing file" 1 "vramscope:" whatif "$tmp/none.db"
check "no PyTorch allocator" 1 "no PyTorch caching allocator" whatif "$data/sample-oom.db"
check "unknown device" 1 "no PyTorch caching allocator on device 7" whatif --device 7 "$tmp/t.db"
check "help lists whatif" 0 "vramscope whatif FILE" help
check "text output" 0 "expandable_segments:True" whatif --alloc-conf expandable_segments:True "$tmp/t.db"

# The first row replays the trace itself: its peaks and failures.
i=$((i + 1))
"$vramscope" whatif --format csv "$tmp/t.db" >"$tmp/own.csv"
"$vramscope" report --format csv --allocator pytorch "$tmp/t.db" summary >"$tmp/summary.csv"
own=$(awk -F, 'NR == 2 { print $5 "," $6 "," $7 }' "$tmp/own.csv")
want=$(awk -F, 'NR == 1 { for (k = 1; k <= NF; k++) c[$k] = k }
  NR == 2 { print $c["peak_reserved_bytes"] "," $c["peak_allocated_bytes"] "," $c["failed_alloc_count"] }' \
  "$tmp/summary.csv")
if [ -n "$own" ] && [ "$own" = "$want" ]; then
  echo "ok $i first row reproduces the recorded run ($own)"
else
  echo "not ok $i first row '$own', summary '$want'"
  failed=1
fi

i=$((i + 1))
"$vramscope" whatif --format csv --alloc-conf "" --alloc-conf expandable_segments:True \
  --alloc-conf max_split_size_mb:64 --alloc-conf roundup_power2_divisions:4 \
  --alloc-conf garbage_collection_threshold:0.5 --limit 6442450944 "$tmp/t.db" >"$tmp/whatif.csv"
if [ "${UPDATE_GOLDEN:-0}" = 1 ]; then
  cp "$tmp/whatif.csv" "$data/golden/whatif.csv"
  echo "ok $i golden whatif.csv rewritten"
elif diff -u "$data/golden/whatif.csv" "$tmp/whatif.csv" >"$tmp/diff"; then
  echo "ok $i golden whatif.csv"
else
  echo "not ok $i golden whatif.csv differs:"
  sed 's/^/# /' "$tmp/diff"
  failed=1
fi
exit $failed

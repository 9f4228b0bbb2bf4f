#!/bin/sh
# usage.sh VRAMSCOPE MAKE_FIXTURE — the dispatcher and report's usage
# errors (exit 2 with a usage line), --version, help, and text output.
# TAP output.
set -u
vramscope=$1 make_fixture=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$make_fixture" full "$tmp/full.db"

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

echo "1..20"
check "no arguments" 2 "usage: vramscope"
check "unknown command" 2 "unknown command 'frobnicate'" frobnicate
check "version" 0 "vramscope 0." --version
check "help" 0 "vramscope report FILE" help
check "report without arguments" 2 "usage: vramscope report" report
check "report without a report name diagnoses" 0 "Diagnosis of full.db" report "$tmp/full.db"
check "unknown report" 2 "unknown report 'bogus'" report "$tmp/full.db" bogus
check "bad format" 2 "--format must be text or csv" report --format xml "$tmp/full.db" summary
check "bad buckets" 2 "--buckets must be between" report --buckets 0 "$tmp/full.db" timeline
check "unknown option" 2 "usage: vramscope report" report --frobnicate "$tmp/full.db" summary
check "text output explains itself" 0 "Memory per device" report "$tmp/full.db" summary
check "text output uses human units" 0 "14.00 MiB" report --format text "$tmp/full.db" summary
check "diff needs two traces" 2 "expected two trace files" diff "$tmp/full.db"
check "diff of a trace with itself" 0 "peak_allocated_bytes" diff "$tmp/full.db" "$tmp/full.db"
check "bad limit" 2 "--limit must be" report --limit -5 "$tmp/full.db" peak
check "bad grouping" 2 "--by must be site or stack" report --by frame "$tmp/full.db" peak
check "bad width" 2 "--width must be at least 40" report --width 10 "$tmp/full.db" peak
check "text limits its rows" 0 "more row" report --limit 1 "$tmp/full.db" peak
check "full paths on request" 0 "/usr/lib/python3/dist-packages/torch/nn/functional.py" report --full-paths --full-stacks "$tmp/full.db" peak
check "short paths by default" 0 " torch/nn/functional.py" report --full-stacks "$tmp/full.db" peak
exit $failed

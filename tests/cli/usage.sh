#!/bin/sh
# SPDX-License-Identifier: MIT
# usage.sh VRAMSCOPE MAKE_FIXTURE — the dispatcher and report's usage
# errors (exit 2 with a usage line), --version, help, and text output.
# TAP output.
set -u
vramscope=$1 make_fixture=$2
. "$(dirname "$0")/../lib.sh"
"$make_fixture" full "$dir/full.db"

echo "1..38"
check "no arguments" 2 "usage: vramscope"
check "unknown command" 2 "unknown command 'frobnicate'" frobnicate
check "version" 0 "vramscope 0." --version
check "help" 0 "vramscope report FILE" help
check "report without arguments" 2 "usage: vramscope report" report
check "report without a report name diagnoses" 0 "Diagnosis of full.db" report "$dir/full.db"
check "unknown report" 2 "unknown report 'bogus'" report "$dir/full.db" bogus
check "bad format" 2 "--format must be text, csv or json" report --format xml "$dir/full.db" summary
check "bad buckets" 2 "--buckets must be between" report --buckets 0 "$dir/full.db" timeline
check "unknown option" 2 "usage: vramscope report" report --frobnicate "$dir/full.db" summary
check "text output explains itself" 0 "Memory per device" report "$dir/full.db" summary
check "text output uses human units" 0 "14.00 MiB" report --format text "$dir/full.db" summary
check "diff needs two traces" 2 "expected two trace files" diff "$dir/full.db"
check "diff of a trace with itself" 0 "peak_allocated_bytes" diff "$dir/full.db" "$dir/full.db"
check "bad limit" 2 "--limit must be" report --limit -5 "$dir/full.db" peak
check "bad grouping" 2 "--by must be site or stack" report --by frame "$dir/full.db" peak
check "bad width" 2 "--width must be at least 40" report --width 10 "$dir/full.db" peak
check "text limits its rows" 0 "more row" report --limit 1 "$dir/full.db" peak
check "full paths on request" 0 "/usr/lib/python3/dist-packages/torch/nn/functional.py" report --full-paths --full-stacks "$dir/full.db" peak
check "short paths by default" 0 " torch/nn/functional.py" report --full-stacks "$dir/full.db" peak
# Each subcommand's usage line names it, with its arguments once, and
# GOption's help speaks UTF-8 ("[OPTION…]", not "[OPTION?]").
for cmd in "report FILE... [REPORT]" "diff A B [C…]" "import SNAPSHOT.pickle" "export FILE" "whatif FILE"; do
  name=${cmd%% *}
  n=$((n + 1))
  LC_ALL=C.UTF-8 "$vramscope" "$name" --help >"$dir/out" 2>&1
  if [ "$(grep -cxF "  vramscope $name [OPTION…] ${cmd#* }" "$dir/out")" = 1 ] \
    && ! grep -q '?' "$dir/out"; then
    echo "ok $n $name --help: one correct usage line"
  else
    echo "not ok $n $name --help:"
    sed 's/^/# /' "$dir/out"
    failed=1
  fi
done
check "report name before the file" 0 "Memory per device" report summary "$dir/full.db"
check "report name before the file, options between" 0 "device,allocator" report summary --format csv "$dir/full.db"
check "time with a unit" 0 "from_ns" report "$dir/full.db" timeline --from 1ms --to 2.5ms --format csv
check "bad time" 2 "'850 ms' is not a time" report "$dir/full.db" timeline --from "850 ms"
check "window on a report without one" 2 "--from and --to apply to timeline, peak, leaks, oom and ranges" report "$dir/full.db" summary --from 1s
check "bad colour" 2 "--color must be auto, always or never" report "$dir/full.db" --color=maybe
check "json" 0 '"report": "summary"' report "$dir/full.db" summary --format json
check "diff json" 0 '"report": "diff"' diff "$dir/full.db" "$dir/full.db" --format json
check "diff bad colour" 2 "--color must be" diff "$dir/full.db" "$dir/full.db" --color=maybe
check "import without a snapshot" 2 "expected one snapshot file" import
check "import unknown option" 2 "Unknown option --bogus" import --bogus
check "export without a trace" 2 "expected one trace file" export
check "export bad format" 2 "unknown --format" export "$dir/full.db" --format bogus
exit $failed

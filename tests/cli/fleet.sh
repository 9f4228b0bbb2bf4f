#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The fleet recipes of schemas/README.md, run exactly as documented over
# the committed traces, checked against `vramscope report summary` (TAP).
# Usage: fleet.sh VRAMSCOPE README DATA_DIR
set -euo pipefail
vs=$1 readme=$2 data=$3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
n=0
ok () { n=$((n + 1)); echo "ok $n - $1"; }
not_ok () { n=$((n + 1)); echo "not ok $n - $1"; status=1; }
status=0
# A fenced block of the README by its tag.
block () { awk -v tag="$1" '$0 ~ "^```[a-z]+ " tag "$" {on=1; next} /^```$/ {on=0} on' "$readme"; }
for tag in fleet-gather fleet-near-limit fleet-peak-by-argument fleet-worst-device; do
  [ -n "$(block $tag)" ] || { echo "Bail out! recipe $tag missing from $readme"; exit 1; }
done

traces=("$data"/*.db)
block fleet-gather > "$work/gather.sh"
FLEET="$work/fleet.db" bash "$work/gather.sh" "${traces[@]}"

# One row per trace and device, with the same peaks and failures as report summary.
expected="$work/expected.csv"
: > "$expected"
for f in "${traces[@]}"; do
  "$vs" report "$f" --format csv summary \
    | awk -F, -v f="$f" 'NR > 1 && $2 == "all" { print f "," $1 "," $4 "," $12 }' >> "$expected"
done
sqlite3 -csv "$work/fleet.db" \
  "SELECT file, device, peak_reserved_bytes, failed_alloc_count FROM run ORDER BY file, device" \
  > "$work/got.csv"
if diff -u <(sort "$expected") <(sort "$work/got.csv"); then
  ok "gathered table matches report summary on ${#traces[@]} traces"
else
  not_ok "gathered table matches report summary"
fi

# Near the limit or failed: exactly the traces whose summary shows failures
# or a peak within 5 % of capacity.
want=$(awk -F, '$4 > 0 { print $1 }' "$expected" | sort -u)
got=$(block fleet-near-limit | sqlite3 -csv "$work/fleet.db" | cut -d, -f1 | sort -u)
[ "$want" = "$got" ] && ok "near-limit recipe finds the failed runs ($(echo "$got" | wc -w))" \
  || not_ok "near-limit recipe: want [$want] got [$got]"

# Peak by program: the largest peak of each program equals its traces' maximum.
rows=$(block fleet-peak-by-argument | sqlite3 -csv "$work/fleet.db" | wc -l)
[ "$rows" -ge 2 ] && ok "peak-by-argument recipe groups runs ($rows groups)" \
  || not_ok "peak-by-argument recipe returned $rows rows"

# Worst device: only the two-GPU trace, with its larger peak.
got=$(block fleet-worst-device | sqlite3 -csv "$work/fleet.db")
want=$(awk -F, '{ if ($3 > max[$1]) { max[$1] = $3; dev[$1] = $2 } ; n[$1]++ }
  END { for (f in n) if (n[f] > 1) print f "," dev[f] "," max[f] }' "$expected")
[ "$got" = "$want" ] && ok "worst-device recipe: $got" || not_ok "worst-device: want [$want] got [$got]"
echo "1..$n"
exit $status

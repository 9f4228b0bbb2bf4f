#!/bin/sh
# SPDX-License-Identifier: MIT
# golden.sh VRAMSCOPE MAKE_FIXTURE GOLDEN_DIR — every report as CSV on the
# "full" fixture trace, compared with the committed expected output
# (tests/data/golden/*.csv).  TAP output.  With UPDATE_GOLDEN=1 the expected
# files are rewritten instead (then read them by hand before committing).
set -u
vramscope=$1 make_fixture=$2 golden=$3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$make_fixture" full "$tmp/full.db" || { echo "Bail out! cannot build the fixture"; exit 1; }

# name|arguments after FILE
cases='summary|summary
peak|peak
leaks|leaks
timeline|timeline --buckets 12 --from 900 --to 2100
oom|oom
fragmentation|fragmentation
kernels|kernels
ranges|ranges
summary-allocator|--allocator pytorch summary
peak-allocator|peak --allocator pytorch
leaks-device1|--device 1 leaks
timeline-pool|timeline --allocator pool:0x5000 --buckets 4 --from 1000 --to 1800'

n=$(printf '%s\n' "$cases" | wc -l)
echo "1..$n"
i=0 failed=0
printf '%s\n' "$cases" | {
while IFS='|' read -r name args; do
  i=$((i + 1))
  # shellcheck disable=SC2086
  if ! "$vramscope" report --format csv "$tmp/full.db" $args >"$tmp/$name.csv" 2>"$tmp/$name.err"; then
    echo "not ok $i $name: exit status $? ($(cat "$tmp/$name.err"))"
    failed=1
    continue
  fi
  if [ "${UPDATE_GOLDEN:-0}" = 1 ]; then
    cp "$tmp/$name.csv" "$golden/$name.csv"
  fi
  if diff -u "$golden/$name.csv" "$tmp/$name.csv" >"$tmp/$name.diff"; then
    echo "ok $i $name"
  else
    echo "not ok $i $name"
    sed 's/^/# /' "$tmp/$name.diff"
    failed=1
  fi
done
exit $failed
}

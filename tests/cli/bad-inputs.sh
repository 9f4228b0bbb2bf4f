#!/bin/sh
# SPDX-License-Identifier: MIT
# bad-inputs.sh VRAMSCOPE MAKE_FIXTURE — every kind of bad input gets exactly
# one line on stderr, nothing on stdout and exit status 1 (never a crash);
# a missing file is not created.  TAP output.
set -u
vramscope=$1 make_fixture=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

printf '' >"$tmp/empty.db"
head -c 65536 /dev/urandom >"$tmp/random.db"
printf 'This is a text file.\nIt is not a trace.\n' >"$tmp/text.db"
"$make_fixture" other "$tmp/other.db"
"$make_fixture" newer "$tmp/newer.db"
"$make_fixture" random "$tmp/whole.db"
size=$(wc -c <"$tmp/whole.db")
head -c $((size / 2)) "$tmp/whole.db" >"$tmp/truncated.db"
"$make_fixture" full "$tmp/full.db"

# name|file|arguments after FILE|text the message must contain
cases="missing|$tmp/missing.db|summary|no such file
empty|$tmp/empty.db|summary|is empty
random|$tmp/random.db|peak|not a vramscope trace
text|$tmp/text.db|summary|not a vramscope trace
directory|$tmp|summary|not a regular file
other-application|$tmp/other.db|summary|another application
truncated|$tmp/truncated.db|summary|truncated
newer-schema|$tmp/newer.db|summary|newer vramscope (schema 99, this build reads up to 5)
unknown-device|$tmp/full.db|--device 7 summary|has no device 7
unknown-allocator|$tmp/full.db|--allocator nccl peak|no allocator named 'nccl'"

n=$(printf '%s\n' "$cases" | wc -l)
echo "1..$((n + 1))"
i=0
status=0
printf '%s\n' "$cases" | {
failed=0
while IFS='|' read -r name file args expect; do
  i=$((i + 1))
  # shellcheck disable=SC2086
  "$vramscope" report "$file" $args >"$tmp/out" 2>"$tmp/err"
  rc=$?
  lines=$(wc -l <"$tmp/err")
  if [ "$rc" -eq 1 ] && [ "$lines" -eq 1 ] && [ ! -s "$tmp/out" ] &&
     grep -qF "$expect" "$tmp/err"; then
    echo "ok $i $name: $(cat "$tmp/err")"
  else
    echo "not ok $i $name: exit $rc, $lines stderr lines"
    sed 's/^/# /' "$tmp/err"
    failed=1
  fi
done
i=$((i + 1))
if [ -e "$tmp/missing.db" ]; then
  echo "not ok $i a missing trace was created"
  failed=1
else
  echo "ok $i a missing trace is not created"
fi
exit $failed
}

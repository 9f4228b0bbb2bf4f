#!/bin/sh
# SPDX-License-Identifier: MIT
# edges.sh VRAMSCOPE TRACE — command-line edges: a full stdout, symbolic
# link loops, the extreme integers of --device/--from/--to, and a message
# that says once what failed.  TAP output.
set -u
vramscope=$1 trace=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
n=0 failed=0

ok () {
  n=$((n + 1))
  if [ "$1" = 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; failed=1; fi
}

echo "1..9"
for fmt in text csv; do
  "$vramscope" report "$trace" --format $fmt peak >/dev/full 2>"$tmp/err"
  rc=$?
  [ "$rc" = 1 ] && grep -q "cannot write the report" "$tmp/err"
  ok $? "$fmt report to a full stdout: exit $rc"
done

"$vramscope" help >/dev/full 2>"$tmp/err"
rc=$?
[ "$rc" = 1 ] && grep -q "cannot write the output" "$tmp/err"
ok $? "help to a full stdout: exit $rc"

ln -s loop1 "$tmp/loop2"
ln -s loop2 "$tmp/loop1"
"$vramscope" report "$tmp/loop1" summary 2>"$tmp/err"
rc=$?
[ "$rc" = 1 ] && grep -q "symbolic links" "$tmp/err"
ok $? "report on a symlink loop says so: $(cat "$tmp/err")"
"$vramscope" import "$tmp/loop1" -o "$tmp/x.db" 2>"$tmp/err"
rc=$?
[ "$rc" = 1 ] && grep -q "symbolic links" "$tmp/err"
ok $? "import of a symlink loop says so: $(cat "$tmp/err")"

"$vramscope" report "$trace" --device=-9223372036854775808 summary >"$tmp/out" 2>"$tmp/err"
rc=$?
[ "$rc" = 1 ] && grep -q "has no device -9223372036854775808" "$tmp/err" && [ ! -s "$tmp/out" ]
ok $? "--device INT64_MIN is a device the trace does not have (exit $rc)"
for opt in --from --to; do
  "$vramscope" report "$trace" $opt=-9223372036854775808 timeline >"$tmp/out" 2>"$tmp/err"
  rc=$?
  [ "$rc" = 2 ] && [ ! -s "$tmp/out" ]
  ok $? "$opt INT64_MIN is refused, not taken as unset (exit $rc)"
done
"$vramscope" report "$trace" --from=-9223372036854775807 --to=9223372036854775807 timeline \
  >"$tmp/out" 2>"$tmp/err"
rc=$?
[ "$rc" = 1 ] && grep -q "too wide" "$tmp/err" && [ ! -s "$tmp/out" ]
ok $? "a timeline wider than 2^63 ns is refused (exit $rc)"
exit $failed

#!/bin/sh
# SPDX-License-Identifier: MIT
# test-endings-fixtures.sh — the endings matrix's traces recorded on a GPU
# (tests/gpu/run-endings.sh, kept in tests/data/endings/CASE/), checked
# again without one by tests/gpu/check-endings.py against what each
# program printed before it ended: a trace for each way a run ended, and
# the spool a killed `record` left, recovered here by `vramscope recover`
# (the allocator stream written by the real tracker on a real PyTorch).
#
# Usage: test-endings-fixtures.sh VRAMSCOPE CHECK_ENDINGS ENDINGS_DIR   (TAP output)
# Each CASE/ holds log, kind (torch|c), source (snapshot|stream|-),
# trace.db or spool/, and, where the allocator events must carry Python
# stacks, a file `stacks`.
set -u
vramscope=$1 check=$2 endings=$3
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
n=0 failed=0
for c in "$endings"/*/; do
  name=$(basename "$c")
  kind=$(cat "$c/kind") source=$(cat "$c/source") stacks=-
  [ -f "$c/stacks" ] && stacks=stacks
  if [ -d "$c/spool" ]; then
    cp -r "$c/spool" "$dir/$name.spool"
    "$vramscope" recover -q "$dir/$name.spool" -o "$dir/$name.db" >"$dir/$name.out" 2>&1
    trace=$dir/$name.db what="recovered from the spool a killed record left"
  else
    trace=$c/trace.db what="as recorded"
  fi
  n=$((n + 1))
  if python3 "$check" "$vramscope" "$trace" "$c/log" "$kind" - - "$source" "$stacks" >"$dir/$name.check" 2>&1; then
    echo "ok $n - $name: $what, checks against the program's own account"
  else
    echo "not ok $n - $name: $what: $(grep -v '^ok' "$dir/$name.check" | tr '\n' ' ') $(cat "$dir/$name.out" 2>/dev/null | tr '\n' ' ')"
    failed=1
  fi
done
echo "1..$n"
exit $failed

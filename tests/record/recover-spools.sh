#!/bin/sh
# SPDX-License-Identifier: MIT
# recover-spools.sh — the spools a recording leaves, written into traces
# by two builds of vramscope, the traces compared.
#
#   tests/record/recover-spools.sh BEFORE_VRAMSCOPE AFTER_VRAMSCOPE
#
# `record` and `recover` build a trace from a spool the same way (the
# imports, the merge, the window, compaction: vs_trace_build()); recover
# does it from files alone, so two builds can be given the same input.
# Each spool is copied twice and recovered by each build (--keep): every
# spool committed under tests/data (a real GPU run's), the same with
# `--window 1s` in its run.info, and two spools made here whose process
# left its allocator stream and a snapshot taken at a signal (the stream's
# events after it appended to the snapshot's import; in one of them an
# out-of-memory entry among them).  The traces must be
# the same file, or hold the same rows in every table (`export --format
# sqlite`, dumped) but for meta collector_symbolize_ns, a measured time.
# Prints one line per spool; exits 1 when any differs.  Used to show that
# a change to the code that builds traces leaves every trace as it was.
set -u
before=${1:?usage: recover-spools.sh BEFORE AFTER} after=${2:?usage: recover-spools.sh BEFORE AFTER}
root=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failed=0

dump() { # TRACE: its rows, as plain tables, less the measured time
  "$after" export --format sqlite "$1" -o "$1.sqlite" --force 2>/dev/null \
    && sqlite3 "$1.sqlite" .dump | grep -v "'collector_symbolize_ns'"
}

compare() { # SPOOL NAME
  w="$work/$2"
  mkdir -p "$w"
  cp -a "$1" "$w/b"
  cp -a "$1" "$w/a"
  "$before" recover "$w/b" -o "$w/before.db" --keep -q 2>"$w/before.err"
  rb=$?
  "$after" recover "$w/a" -o "$w/after.db" --keep -q 2>"$w/after.err"
  ra=$?
  if [ $rb != $ra ] || ! cmp -s "$w/before.err" "$w/after.err"; then
    verdict="DIFFERS (exit $rb/$ra)"
  elif [ $rb != 0 ]; then
    verdict="same failure"
  elif cmp -s "$w/before.db" "$w/after.db"; then
    verdict="same file"
  elif [ "$(dump "$w/before.db" | md5sum)" = "$(dump "$w/after.db" | md5sum)" ]; then
    verdict="same rows"
  else
    verdict="DIFFERS"
  fi
  case $verdict in DIFFERS*) failed=1 ;; esac
  echo "$verdict	$2"
}

n=0
for spool in "$root"/tests/data/*/*/spool; do
  [ -d "$spool" ] || continue
  name=$(echo "${spool#"$root"/tests/data/}" | tr / -)
  compare "$spool" "$name"
  cp -a "$spool" "$work/windowed"
  echo "window_ns 1000000000" >>"$work/windowed/run.info"
  compare "$work/windowed" "$name-window-1s"
  rm -rf "$work/windowed"
  n=$((n + 2))
done

# A process that left its stream, then a snapshot taken at a signal; the
# stream goes on after it, in one spool with an out-of-memory entry.
info() { printf "pid %s\nreason %s\ndevice 0 GPU-00000000-0000-0000-0000-0000000000aa 1000 Test GPU\n" "$1" "$2"; }
for kind in tail tail-oom; do
  tail="$work/$kind-spool"
  mkdir -p "$tail"
  python3 "$root/tests/collector/make-torch-stream.py" "$tail/torch-4242.stream" 4242 $kind >/dev/null
  info 4242 stream >"$tail/torch-4242.stream.info"
  info 4242 signal >"$tail/torch-4242-000001.info"
  cp "$root/tests/data/snapshots/train.pickle" "$tail/torch-4242-000001.pickle"
  compare "$tail" "stream-$kind-after-a-signal"
  n=$((n + 1))
done

echo "$n spools, $([ $failed = 0 ] && echo "none differs" || echo "some differ")"
exit $failed

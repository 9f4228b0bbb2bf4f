#!/bin/sh
# SPDX-License-Identifier: MIT
# import-bench.sh — times `vramscope import` on a synthetic snapshot-shaped
# pickle of SIZE_MB MiB (default 1024) and reports wall time, peak RSS and
# the time of each stage (reading the pickle, importing, finalizing).
#   bench/import-bench.sh BUILD_DIR [SIZE_MB]
# Uses BUILD_DIR/cli/vramscope when built, else the import test tool.
# Needs python3 and /usr/bin/time (Debian package `time`).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
build=${1:?usage: import-bench.sh BUILD_DIR [SIZE_MB]}
# The benchmark programs are not built by default.
ninja -C "$build" benchmarks >&2 || exit 1
size=${2:-1024}
work=${TMPDIR:-/tmp}/vs-import-bench
mkdir -p "$work"
snap="$work/snapshot-${size}M.pickle"
[ -f "$snap" ] || python3 "$here/import-gen-snapshot.py" "$snap" "$size"
if [ -x "$build/cli/vramscope" ]; then
  cmd="$build/cli/vramscope import"
else
  cmd="$build/tests/import/vs-import-tool"
fi
rm -f "$work/out.db"
/usr/bin/time -v $cmd --timings "$snap" -o "$work/out.db" 2> "$work/time.txt"
bytes=$(stat -c %s "$snap")
wall=$(sed -n 's/.*Elapsed (wall clock) time (h:mm:ss or m:ss): //p' "$work/time.txt")
rss=$(sed -n 's/.*Maximum resident set size (kbytes): //p' "$work/time.txt")
echo "snapshot: $bytes bytes; import wall time: $wall; peak RSS: $((rss / 1024)) MiB; trace: $(stat -c %s "$work/out.db") bytes"
sed -n 's/^vramscope import: \(reading .*\)/stages: \1/p' "$work/time.txt"

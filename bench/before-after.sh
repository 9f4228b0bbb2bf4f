#!/bin/sh
# SPDX-License-Identifier: MIT
# before-after.sh — the writer, finalize and import benchmarks of two
# builds, interleaved (before, after, before, after, …) so that both see
# the same load, with the median of each.
#   bench/before-after.sh BEFORE_DIR AFTER_DIR [ROUNDS] [EVENTS] [SNAPSHOT_MB]
# Each DIR holds a `vramscope` and a `vs-gen-trace` (a build's cli/ and
# bench/ programs copied side by side).  Per round and build: vs-gen-trace
# writes EVENTS events (default 1000000) and finalizes them (its write
# rate and finalization time), then `vramscope import --timings` imports a
# synthetic snapshot of SNAPSHOT_MB MiB (default 64; its reading,
# importing and finalizing stages).  Prints the medians and after/before.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
before=${1:?usage: before-after.sh BEFORE_DIR AFTER_DIR [ROUNDS] [EVENTS] [SNAPSHOT_MB]}
after=${2:?usage: before-after.sh BEFORE_DIR AFTER_DIR [ROUNDS] [EVENTS] [SNAPSHOT_MB]}
rounds=${3:-5}
events=${4:-1000000}
size=${5:-64}
work=${TMPDIR:-/tmp}/vs-before-after
mkdir -p "$work"
snap="$work/snapshot-${size}M.pickle"
[ -f "$snap" ] || python3 "$here/import-gen-snapshot.py" "$snap" "$size" >/dev/null
results="$work/results.txt"
: > "$results"
one() { # tag dir
  "$2/vs-gen-trace" -n "$events" -o "$work/gen.db" > "$work/gen.txt"
  sed -n "s/^\([a-z_]*\) \([0-9.e+]*\)\$/$1 gen_\1 \2/p" "$work/gen.txt" >> "$results"
  "$2/vramscope" import --timings "$snap" -o "$work/imp.db" --force > /dev/null 2> "$work/imp.txt"
  sed -n "s/^vramscope import: reading \([0-9.]*\) s, importing \([0-9.]*\) s, finalizing \([0-9.]*\) s/$1 import_reading_s \1\n$1 import_importing_s \2\n$1 import_finalizing_s \3/p" \
    "$work/imp.txt" >> "$results"
  rm -f "$work/gen.db" "$work/imp.db"
}
i=0
while [ $i -lt "$rounds" ]; do
  one before "$before"
  one after "$after"
  i=$((i + 1))
done
python3 - "$results" <<'PY'
import statistics, sys
vals = {}
for line in open(sys.argv[1]):
    tag, key, v = line.split()
    vals.setdefault(key, {}).setdefault(tag, []).append(float(v))
print("%-24s %14s %14s %8s  (medians of %d rounds)" % ("measure", "before", "after", "after/before",
      len(next(iter(vals.values()))["before"])))
for key in sorted(vals):
    b = statistics.median(vals[key]["before"]); a = statistics.median(vals[key]["after"])
    print("%-24s %14.4g %14.4g %8.3f" % (key, b, a, a / b if b else float("nan")))
PY

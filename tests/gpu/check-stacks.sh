#!/bin/sh
# SPDX-License-Identifier: MIT
# check-stacks.sh — stacks on a real GPU: record the known chains of
# samples/sample-stacks.cu (with debug info, and stripped) and
# samples/stacks.py and check `report peak` frame by frame
# (tests/gpu/check-stacks.py).  Symbols are cached by build-id
# (record/vs-symbol-cache.c), and strip keeps the build-id: the stripped
# binary recorded with an empty cache shows module+offset, recorded with
# the cache the binary with debug info filled it shows that binary's
# names, as debuginfod would give them.
#
# Usage: tests/gpu/check-stacks.sh [OUTDIR]
#   VRAMSCOPE  the vramscope binary (default: build/cli/vramscope)
#   NVCC       nvcc (default: nvcc, /usr/local/cuda/bin/nvcc)
# Exits 77 without a GPU, 1 when a check failed.
. "$(dirname "$0")/lib.sh"
NVCC=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
"$NVCC" -g -O2 -o "$out/sample-stacks" "$root/samples/sample-stacks.cu" || exit 1
strip -o "$out/sample-stacks-stripped" "$out/sample-stacks" || exit 1

failed=0
record() { # name, command...
  name=$1; shift
  echo "== $name"
  start=$(date +%s%N)
  "$VRAMSCOPE" record -o "$out/$name.db" -- "$@" >"$out/$name.log" 2>&1
  rc=$?
  end=$(date +%s%N)
  cat "$out/$name.log"
  echo "record took $(( (end - start) / 1000000 )) ms"
  [ $rc = 0 ] || { echo "FAILED $name: record exited $rc"; failed=1; return 1; }
  "$VRAMSCOPE" report --format csv --full-paths "$out/$name.db" peak >"$out/$name.peak.csv" ||
    { echo "FAILED $name: report peak"; failed=1; return 1; }
  "$VRAMSCOPE" report --format text "$out/$name.db" peak | head -n 20
}

# Symbol caches of this run only: one the binary with debug info fills,
# one left empty.
had_cache=${VRAMSCOPE_CACHE_DIR-unset}
rm -rf "$out/symbol-cache" "$out/symbol-cache-empty"
export VRAMSCOPE_CACHE_DIR="$out/symbol-cache"
if record sample-stacks "$out/sample-stacks"; then
  python3 "$here/check-stacks.py" native "$out/sample-stacks.db" \
    "$out/sample-stacks.peak.csv" "$out/sample-stacks.log" || failed=1
fi
VRAMSCOPE_CACHE_DIR="$out/symbol-cache-empty"
if record sample-stacks-stripped "$out/sample-stacks-stripped"; then
  python3 "$here/check-stacks.py" stripped "$out/sample-stacks-stripped.db" \
    "$out/sample-stacks-stripped.peak.csv" "$out/sample-stacks-stripped.log" || failed=1
fi
VRAMSCOPE_CACHE_DIR="$out/symbol-cache"
if record sample-stacks-stripped-cached "$out/sample-stacks-stripped"; then
  python3 "$here/check-stacks.py" native "$out/sample-stacks-stripped-cached.db" \
    "$out/sample-stacks-stripped-cached.peak.csv" "$out/sample-stacks-stripped-cached.log" ||
    failed=1
fi
if [ "$had_cache" = unset ]; then
  unset VRAMSCOPE_CACHE_DIR
else
  VRAMSCOPE_CACHE_DIR=$had_cache
fi
torch=
python3 -c 'import torch' 2>/dev/null && torch=--torch
if record stacks-py python3 "$root/samples/stacks.py" $torch; then
  python3 "$here/check-stacks.py" python "$out/stacks-py.db" \
    "$out/stacks-py.peak.csv" "$out/stacks-py.log" $torch || failed=1
fi
exit $failed

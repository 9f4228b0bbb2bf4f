#!/bin/sh
# SPDX-License-Identifier: MIT
# run-chunk-fuzzer.sh — builds the chunk codec's libFuzzer harness
# (vs-chunk-fuzz.c: chunks as stored, payloads, zone maps and round trips)
# with ASan and UBSan and fuzzes it, seeded with fuzz/corpus-chunk (new
# finds go to a scratch folder, not into the committed corpus).
#   fuzz/run-chunk-fuzzer.sh [SECONDS]      default 300
# Needs clang with libFuzzer (Debian: clang) and libzstd-dev.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
secs=${1:-300}
out=${TMPDIR:-/tmp}/vs-chunk-fuzz
mkdir -p "$out/corpus"
clang -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
  -I"$here/../trace/chunk" -I"$here/../common" -I"$here/.." \
  "$here/vs-chunk-fuzz.c" "$here/../trace/chunk/vs-chunk.c" \
  $(pkg-config --libs libzstd) -lm -o "$out/vs-chunk-fuzz"
cd "$out"
exec ./vs-chunk-fuzz -max_total_time="$secs" -max_len=65536 -rss_limit_mb=2048 \
  -print_final_stats=1 "$out/corpus" "$here/corpus-chunk"

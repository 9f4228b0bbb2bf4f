#!/bin/sh
# SPDX-License-Identifier: MIT
# run-chunk-fuzzer.sh — builds the chunk codec's libFuzzer harness
# (vs-chunk-fuzz.c: chunks as stored, payloads, zone maps and round trips)
# with ASan and UBSan and fuzzes it, seeded with fuzz/corpus-chunk (new
# finds go to a scratch folder, not into the committed corpus).
#   fuzz/run-chunk-fuzzer.sh [SECONDS]      default 300
# Needs clang with libFuzzer (Debian: clang) and libzstd-dev.
set -eu
. "$(dirname "$0")/lib.sh"
fuzz_out vs-chunk-fuzz
fuzz_build vs-chunk-fuzz -I"$here/../trace/chunk" -I"$here/../common" -I"$here/.." \
  "$here/vs-chunk-fuzz.c" "$here/../trace/chunk/vs-chunk.c" \
  $(pkg-config --libs libzstd) -lm
fuzz_corpus vs-chunk-fuzz corpus-chunk

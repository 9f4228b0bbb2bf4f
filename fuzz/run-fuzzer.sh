#!/bin/sh
# SPDX-License-Identifier: MIT
# run-fuzzer.sh — builds the pickle reader's libFuzzer harness with ASan and
# UBSan and fuzzes it, seeded with fuzz/corpus (new finds go to a scratch
# folder, not into the committed corpus).
#   fuzz/run-fuzzer.sh [SECONDS]      default 300
# Needs clang with libFuzzer (Debian: clang).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
secs=${1:-300}
out=${TMPDIR:-/tmp}/vs-pickle-fuzz
mkdir -p "$out/corpus"
clang -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
  -I"$here/../import" -I"$here/../common" $(pkg-config --cflags glib-2.0) \
  "$here/vs-pickle-fuzz.c" "$here/../import/vs-pickle.c" \
  "$here/../import/vs-pickle-load.c" "$here/../import/vs-pickle-opcodes.c" \
  "$here/../import/vs-pickle-read.c" "$here/../import/vs-pickle-stream.c" \
  $(pkg-config --libs glib-2.0) -o "$out/vs-pickle-fuzz"
cd "$out"
exec ./vs-pickle-fuzz -max_total_time="$secs" -max_len=65536 -rss_limit_mb=2048 \
  -print_final_stats=1 "$out/corpus" "$here/corpus"

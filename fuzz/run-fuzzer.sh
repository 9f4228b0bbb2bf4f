#!/bin/sh
# SPDX-License-Identifier: MIT
# run-fuzzer.sh — builds the pickle reader's libFuzzer harness with ASan and
# UBSan and fuzzes it, seeded with fuzz/corpus (new finds go to a scratch
# folder, not into the committed corpus).
#   fuzz/run-fuzzer.sh [SECONDS]      default 300
# Needs clang with libFuzzer (Debian: clang).
set -eu
. "$(dirname "$0")/lib.sh"
fuzz_out vs-pickle-fuzz
fuzz_build vs-pickle-fuzz -I"$here/../import" -I"$here/../common" $(pkg-config --cflags glib-2.0) \
  "$here/vs-pickle-fuzz.c" "$here/../import/vs-pickle.c" \
  "$here/../import/vs-pickle-load.c" "$here/../import/vs-pickle-mem.c" \
  "$here/../import/vs-pickle-opcodes.c" \
  "$here/../import/vs-pickle-read.c" "$here/../import/vs-pickle-stream.c" \
  $(pkg-config --libs glib-2.0)
fuzz_corpus vs-pickle-fuzz corpus

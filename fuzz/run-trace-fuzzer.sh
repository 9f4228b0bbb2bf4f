#!/bin/sh
# SPDX-License-Identifier: MIT
# run-trace-fuzzer.sh — builds the trace reader's libFuzzer harness
# (vs-trace-fuzz.c: mutation programs applied through SQLite to the
# committed traces in tests/data, then every report) with ASan and UBSan
# against a sanitized build of libvramscope, and fuzzes it.  New finds go
# to a scratch folder.
#   fuzz/run-trace-fuzzer.sh [SECONDS]      default 300
# Needs clang with libFuzzer (Debian: clang), meson and ninja.
set -eu
. "$(dirname "$0")/lib.sh"
fuzz_out vs-trace-fuzz
build=$out/build
if [ ! -d "$build" ]; then
  CC=clang meson setup "$build" "$root" -Db_sanitize=address,undefined -Db_lundef=false \
    -Dc_args=-fsanitize=fuzzer-no-link \
    -Dgui=disabled -Dcollector=disabled >/dev/null
fi
ninja -C "$build" analyzer/libvramscope.a trace/libvstrace.a trace/libvschunk.a >/dev/null
fuzz_build vs-trace-fuzz -I"$root/analyzer" -I"$root/trace/writer" -I"$root/trace/finalize" -I"$root/trace/chunk" -I"$root/common" -I"$build" $(pkg-config --cflags glib-2.0 sqlite3) \
  "$here/vs-trace-fuzz.c" "$build/analyzer/libvramscope.a" "$build/trace/libvschunk.a" \
  "$build/trace/libvstrace.a" $(pkg-config --libs glib-2.0 sqlite3 libzstd) -lm
cd "$out"
VS_FUZZ_TRACES="$root/tests/data" exec ./vs-trace-fuzz -max_total_time="$secs" -max_len=512 \
  -rss_limit_mb=4096 -timeout=60 -print_final_stats=1 "$out/corpus"

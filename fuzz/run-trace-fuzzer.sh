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
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
secs=${1:-300}
out=${TMPDIR:-/tmp}/vs-trace-fuzz
build=$out/build
mkdir -p "$out/corpus"
if [ ! -d "$build" ]; then
  CC=clang meson setup "$build" "$root" -Db_sanitize=address,undefined -Db_lundef=false \
    -Dc_args=-fsanitize=fuzzer-no-link \
    -Dgui=disabled -Dcollector=disabled >/dev/null
fi
ninja -C "$build" analyzer/libvramscope.a trace/libvstrace.a trace/libvschunk.a >/dev/null
clang -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
  -I"$root/analyzer" -I"$root/trace/writer" -I"$root/trace/finalize" -I"$root/trace/chunk" -I"$root/common" -I"$build" $(pkg-config --cflags glib-2.0 sqlite3) \
  "$here/vs-trace-fuzz.c" "$build/analyzer/libvramscope.a" "$build/trace/libvschunk.a" \
  "$build/trace/libvstrace.a" $(pkg-config --libs glib-2.0 sqlite3 libzstd) -lm \
  -o "$out/vs-trace-fuzz"
cd "$out"
VS_FUZZ_TRACES="$root/tests/data" exec ./vs-trace-fuzz -max_total_time="$secs" -max_len=512 \
  -rss_limit_mb=4096 -timeout=60 -print_final_stats=1 "$out/corpus"

# SPDX-License-Identifier: MIT
# lib.sh — what the fuzz scripts share, sourced as `. "$(dirname "$0")/lib.sh"`
# so that it reads the script's own arguments: here (fuzz/), root (the
# checkout), secs (the first argument, default 300), and the functions
# below.
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
secs=${1:-300}

# fuzz_out NAME: sets out to ${TMPDIR:-/tmp}/NAME, the harness's scratch
# folder, and makes out/corpus there for its new finds (the committed
# corpus is never written).
fuzz_out() {
  out=${TMPDIR:-/tmp}/$1
  mkdir -p "$out/corpus"
}

# fuzz_build NAME CLANG_ARGS...: builds the libFuzzer harness out/NAME
# with ASan and UBSan from CLANG_ARGS (flags, sources, libraries).
fuzz_build() {
  name=$1
  shift
  clang -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
    "$@" -o "$out/$name"
}

# fuzz_corpus NAME CORPUS: in out, replaces the shell with the harness
# fuzzing for secs seconds, inputs up to 64 KiB, seeded with fuzz/CORPUS.
fuzz_corpus() {
  cd "$out"
  exec "./$1" -max_total_time="$secs" -max_len=65536 -rss_limit_mb=2048 \
    -print_final_stats=1 "$out/corpus" "$here/$2"
}

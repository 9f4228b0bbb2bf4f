#!/bin/sh
# SPDX-License-Identifier: MIT
# collector-bench.sh — slowdown caused by the collector, as ratios measured
# in one run on the GPU server.
#
# Usage: bench/collector-bench.sh OUTDIR
#   VRAMSCOPE  command that records (default build/cli/vramscope)
#   ASYNC      built bench/collector-async.cu (default: built here with nvcc)
#   PAIRS      cudaMallocAsync/cudaFreeAsync pairs (default 1000000)
#   STEPS      PyTorch training steps (default 60)
#   RECORD_ARGS  extra options for record (set per run below)
# Each workload runs plain, recorded, plain, recorded; the ratio compares the
# best plain time with the best recorded time.  Prints the dropped-record
# count and the events written from each trace's meta.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
out=${1:-$(mktemp -d)}
mkdir -p "$out"
VRAMSCOPE=${VRAMSCOPE:-$root/build/cli/vramscope}
PAIRS=${PAIRS:-1000000}
STEPS=${STEPS:-60}
if [ -z "${ASYNC:-}" ]; then
  ASYNC=$out/collector-async
  ${NVCC:-nvcc} -O2 -o "$ASYNC" "$here/collector-async.cu"
fi

meta() { # trace key
  python3 -c 'import sqlite3,sys; r=sqlite3.connect(sys.argv[1]).execute("select value from meta where key=?",(sys.argv[2],)).fetchone(); print(r[0] if r else "")' "$1" "$2"
}

bench() { # name, field, command...
  name=$1; field=$2; shift 2
  best_plain=; best_rec=
  for round in 1 2; do
    t=$("$@" | sed -n "s/.*$field \([0-9.]*\).*/\1/p")
    best_plain=$(python3 -c "import sys; a=[float(x) for x in sys.argv[1:] if x]; print(min(a))" $t $best_plain)
    "$VRAMSCOPE" record -q ${RECORD_ARGS:-} -o "$out/$name.db" -- "$@" >"$out/$name.rec.log"
    t=$(sed -n "s/.*$field \([0-9.]*\).*/\1/p" "$out/$name.rec.log")
    best_rec=$(python3 -c "import sys; a=[float(x) for x in sys.argv[1:] if x]; print(min(a))" $t $best_rec)
  done
  ratio=$(python3 -c "print('%.4f' % ($best_rec / $best_plain))")
  echo "$name: plain $best_plain, recorded $best_rec ($field), ratio $ratio," \
       "events $(meta "$out/$name.db" collector_events)," \
       "records $(meta "$out/$name.db" collector_records)," \
       "dropped records $(meta "$out/$name.db" collector_dropped_records)," \
       "dropped items $(meta "$out/$name.db" collector_dropped_items)," \
       "collector buffers $(meta "$out/$name.db" collector_buffer_bytes) B"
}

bench async-pairs seconds "$ASYNC" "$PAIRS"
bench torch-resnet18 step_ms python3 "$root/samples/torch-train.py" --steps "$STEPS" --warmup 5
RECORD_ARGS=--no-kernels bench torch-resnet18-no-kernels step_ms \
  python3 "$root/samples/torch-train.py" --steps "$STEPS" --warmup 5

#!/bin/bash
# SPDX-License-Identifier: MIT
# record-post-run-bench.sh — the post-run work of `vramscope record`
# without a GPU: a program that leaves in record's spool, while it runs,
# what a PyTorch training process leaves: its allocator stream, written
# over RUN_S seconds as the hook's tracker appends it (STREAM_EVENTS
# records from tests/collector/make-window-stream.py: a training loop, its
# exit snapshot's marker and the frees after it; PyTorch's own history
# off, so the stream is the process's level) and a process trace of
# KERNELS kernels written by bench/vs-gen-trace as the collector writes
# one (EVENTS memory events before them: the default, 1, leaves a single
# segment, as a PyTorch process's CUPTI trace holds no allocator-level
# events); recorded with --timings REPS times by each
# vramscope given, alternating.  Prints, per binary, the median of each
# phase (ms, from the trace's record_*_ns meta) and of the post-run total,
# and how many stream records were imported while the program ran.
#
# Usage: bench/record-post-run-bench.sh BUILD_DIR [VRAMSCOPE...]
#   BUILD_DIR   a build tree with bench/vs-gen-trace and the collector
#   VRAMSCOPE   binaries to compare (default BUILD_DIR/cli/vramscope)
#   STREAM_EVENTS (default 640000), KERNELS (default 300000), EVENTS
#   (default 1), RUN_S (default 6), REPS (default 3)
#   KEEP        a directory: each binary's last trace is kept there as
#               run-N.db (N its place in the list), for bench/trace-size.sh
set -u
build=$(cd "${1:?usage: record-post-run-bench.sh BUILD_DIR [VRAMSCOPE...]}" && pwd)
shift
# The benchmark programs are not built by default.
ninja -C "$build" benchmarks >&2 || exit 1
[ $# -gt 0 ] || set -- "$build/cli/vramscope"
here=$(cd "$(dirname "$0")" && pwd)
STREAM_EVENTS=${STREAM_EVENTS:-640000}
KERNELS=${KERNELS:-300000}
EVENTS=${EVENTS:-1}
RUN_S=${RUN_S:-6}
REPS=${REPS:-3}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export VRAMSCOPE_COLLECTOR=${VRAMSCOPE_COLLECTOR:-$build/collector/libvramscope-collector.so}

# About 19.4 records a step (make-window-stream.py's loop).
steps=$((STREAM_EVENTS * 10 / 194))
python3 "$here/../tests/collector/make-window-stream.py" "$work/stream" 4242 "$steps" exit \
  >"$work/stream.json" || exit 1
# Its events span the stream's times (make-window-stream.py starts at
# 1763900000 s), as a process's CUPTI events and allocator events do.
"$build/bench/vs-gen-trace" -n "$EVENTS" -k "$KERNELS" -t 1763900000000000000 --no-finalize \
  -o "$work/process.db" \
  >/dev/null || exit 1
# The stream appended a slice at a time over RUN_S seconds, as a training
# process's tracker appends it.
cat >"$work/feed.py" <<'PY'
import os, sys, time
src, dst, run_s = sys.argv[1], sys.argv[2], float(sys.argv[3])
data = open(src, "rb").read()
with open(dst, "wb", buffering=0) as f:
    f.write(data[:4096])
    body = data[4096:]
    slices = max(1, int(run_s * 10))
    per = -(-len(body) // slices // 48) * 48
    for k in range(0, len(body), per):
        f.write(body[k:k + per])
        time.sleep(run_s / slices)
PY
cat >"$work/prog.sh" <<EOS
cp "$work/process.db" "\$VRAMSCOPE_SPOOL_DIR/process-\$\$-1.db"
info='pid 4242\ndevice 0 GPU-synthetic-0 150754820096 Synthetic H200\n'
printf "reason stream\nhistory 0\n\$info" >"\$VRAMSCOPE_SPOOL_DIR/torch-4242.stream.info"
python3 "$work/feed.py" "$work/stream" "\$VRAMSCOPE_SPOOL_DIR/torch-4242.stream" $RUN_S
printf "pid 4242\nreason exit\n\$info" >"\$VRAMSCOPE_SPOOL_DIR/torch-4242-000001.info"
: >"\$VRAMSCOPE_SPOOL_DIR/torch-4242-000001.pickle"
EOS

: >"$work/results"
for rep in $(seq 1 "$REPS"); do
  b=0
  for vs in "$@"; do
    b=$((b + 1))
    rm -f "$work/run.db"
    if ! "$vs" record -q --timings -o "$work/run.db" -- sh "$work/prog.sh" >/dev/null 2>"$work/err"; then
      cat "$work/err" >&2
      exit 1
    fi
    [ -z "${KEEP:-}" ] || cp "$work/run.db" "$KEEP/run-$b.db"
    python3 - "$work/run.db" "$b" >>"$work/results" <<'PY'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
for k, v in db.execute("SELECT key, value FROM meta WHERE key LIKE 'record%_ns'"
                       " OR key = 'record_stream_live_records'"):
    k = k[len("record_"):]
    print("%s\t%s\t%s" % (sys.argv[2], k[:-len("_ns")] if k.endswith("_ns") else k, v))
PY
  done
done
python3 - "$work/results" "$@" <<'PY'
import statistics, sys
rows = [l.rstrip("\n").split("\t") for l in open(sys.argv[1])]
bins = sys.argv[2:]
phases = []
for _, k, _ in rows:
    if k not in phases:
        phases.append(k)
print("| phase (median ms) | " + " | ".join("binary %d" % (i + 1) for i in range(len(bins))) + " |")
print("|---|" + "---|" * len(bins))
for k in phases:
    cells = []
    for i in range(len(bins)):
        v = [int(r[2]) for r in rows if r[0] == str(i + 1) and r[1] == k]
        scale = 1 if k == "stream_live_records" else 1e6
        cells.append("%.0f" % (statistics.median(v) / scale) if v else "")
    print("| %s | %s |" % (k.replace("_", " ") if k == "stream_live_records" else k,
                           " | ".join(cells)))
for i, b in enumerate(bins):
    print("binary %d: %s" % (i + 1, b))
PY

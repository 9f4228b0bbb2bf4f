#!/bin/bash
# record-post-run-bench.sh — the post-run work of `vramscope record`
# without a GPU: a program that leaves in record's spool what a PyTorch
# training process leaves (an exit snapshot of SNAP_MB MiB, about 4,150
# history entries per MiB, written by bench/import-gen-snapshot.py, and a
# process trace of EVENTS events written by bench/vs-gen-trace as the
# collector writes one), recorded with --timings REPS times by each
# vramscope given, alternating.  Prints, per binary, the median of each
# phase (ms, from the trace's record_*_ns meta) and of the post-run total.
#
# Usage: bench/record-post-run-bench.sh BUILD_DIR [VRAMSCOPE...]
#   BUILD_DIR   a build tree with bench/vs-gen-trace and the collector
#   VRAMSCOPE   binaries to compare (default BUILD_DIR/cli/vramscope)
#   SNAP_MB (default 160), EVENTS (default 100000), REPS (default 3)
set -u
build=$(cd "${1:?usage: record-post-run-bench.sh BUILD_DIR [VRAMSCOPE...]}" && pwd)
shift
[ $# -gt 0 ] || set -- "$build/cli/vramscope"
here=$(cd "$(dirname "$0")" && pwd)
SNAP_MB=${SNAP_MB:-160}
EVENTS=${EVENTS:-100000}
REPS=${REPS:-3}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export VRAMSCOPE_COLLECTOR=${VRAMSCOPE_COLLECTOR:-$build/collector/libvramscope-collector.so}

python3 "$here/import-gen-snapshot.py" "$work/snap.pickle" "$SNAP_MB" >&2 || exit 1
cat >"$work/prog.sh" <<EOS
printf 'pid %s\ndevice 0 GPU-00000000-0000-0000-0000-0000000000aa 1000 Test GPU\n' \$\$ \
  >"\$VRAMSCOPE_SPOOL_DIR/torch-\$\$-000001.info"
cp "$work/snap.pickle" "\$VRAMSCOPE_SPOOL_DIR/torch-\$\$-000001.pickle"
exec "$build/bench/vs-gen-trace" -n $EVENTS --no-finalize -o "\$VRAMSCOPE_SPOOL_DIR/process-\$\$-1.db" >/dev/null
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
    python3 - "$work/run.db" "$b" >>"$work/results" <<'PY'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
for k, v in db.execute("SELECT key, value FROM meta WHERE key LIKE 'record%_ns'"):
    print("%s\t%s\t%s" % (sys.argv[2], k[len("record_"):-len("_ns")], v))
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
        v = [int(r[2]) / 1e6 for r in rows if r[0] == str(i + 1) and r[1] == k]
        cells.append("%.0f" % statistics.median(v) if v else "")
    print("| %s | %s |" % (k, " | ".join(cells)))
for i, b in enumerate(bins):
    print("binary %d: %s" % (i + 1, b))
PY

#!/bin/bash
# SPDX-License-Identifier: MIT
# window-run.sh — the flight recorder (record --window) on a long PyTorch
# run: the trace's size against the run's length, and its answers against
# the program's own ground truth.
#
# Usage: bash tests/gpu/window-run.sh OUTDIR      (1 GPU)
#   VRAMSCOPE  the vramscope binary (default: build/cli/vramscope)
# tests/gpu/window-train.py (a training-like loop with a slow leak, an
# early peak and one caught out-of-memory error) recorded
#   OUTDIR/fix-8/run.db        with --window 2s --no-kernels, 8 s of a slower
#                              loop (a step every 50 ms): small, a fixture
#   OUTDIR/full-20/run.db      whole, for 20 s
#   OUTDIR/win-S/run.db        with --window 20s, for S = 30, 120, 60 s
#   OUTDIR/cuda-40/run.db      tests/gpu/window-sample.cu (CUDA C: a loop of
#                              cudaMalloc/cudaFree, a leak, a 1 GiB peak, a
#                              failed 1 TiB request) with --window 10s, 40 s
# Next to each: truth.json (the program's ground truth), run.log (what
# record and the program printed), size.txt (the trace's bytes), spool.txt
# (the spool's bytes on disk — allocated blocks, as du counts them, so a
# stream whose imported records were given back counts without them —
# every 2 s while it ran; spool-parts.txt the same by part: the
# allocator streams, their imports, the process traces, the live trace
# the window is applied to while the program runs, the rest),
# meta.txt, summary.csv,
# diagnose.txt, leaks.csv, oom.txt and tables.txt (rows per table).
# OUTDIR/results.json gathers the sizes, the spool's largest size, record's
# post-run work (--timings), vramscope's answers and the truths; OUTDIR/check.log is tests/gpu/check-window.py's verdict on them; traces over 2 MB are removed (at most ~5 MB kept).  Each step
# has its own timeout, cut to what is left of BUDGET (390 s).
set -u
. "$(dirname "$0")/run-common.sh" window-run "$@"
BUDGET=${BUDGET:-390}
"$VRAMSCOPE" --version >>"$log" 2>&1
# The hook's stream library is built into OUTDIR (removed at the end).
export VRAMSCOPE_CACHE_DIR="$out/cache"
NVCC=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
failed=0

# run NAME SECONDS SLEEP [record options...]: one recorded run in
# OUTDIR/NAME, the loop pausing SLEEP seconds after each step (SLEEP
# `cuda`: the CUDA C sample instead).
run() {
  local name=$1 secs=$2 pause=$3
  shift 3
  # RUNS="name ...": only those.
  case " ${RUNS:-$name} " in *" $name "*) ;; *) return 0 ;; esac
  local limit=$((secs + 90)) t0
  t0=$(date +%s)
  if [ $((t0 - start + limit)) -gt "$BUDGET" ]; then
    limit=$((BUDGET - (t0 - start)))
    if [ "$limit" -lt $((secs + 20)) ]; then
      say "== $name: not run, $((t0 - start))s spent of ${BUDGET}s"
      failed=1
      return 0
    fi
  fi
  mkdir -p "$out/$name"
  cd "$out/$name" || return 0
  say "== $name: record $* for ${secs}s (limit ${limit}s)"
  # The spool's size on disk while it runs (it sits beside the trace).
  (while :; do
     echo "$(date +%s.%N) $(du -sB1 . 2>/dev/null | cut -f1)"
     du -B1 .vramscope-spool-*/* 2>/dev/null | awk -v t="$(date +%s)" '
       { p = "other" }
       $2 ~ /torch-[0-9]+\.stream$/ { p = "stream" }
       $2 ~ /torch-[0-9]+\.db/ { p = "import" }
       $2 ~ /process-.*\.db/ { p = "process" }
       $2 ~ /live\.trace/ { p = "live" }
       { b[p] += $1 }
       END { print t, "stream", b["stream"] + 0, "import", b["import"] + 0, "process",
             b["process"] + 0, "live", b["live"] + 0, "other", b["other"] + 0 }' >>spool-parts.txt
     sleep 2
   done) >spool.txt &
  local sampler=$!
  local rc
  if [ "$pause" = cuda ]; then
    timeout "$limit" "$VRAMSCOPE" record --timings "$@" -o run.db -- \
      "$out/window-sample" "$secs" >run.log 2>&1
    rc=$?
    sed -n 's/^GROUND_TRUTH //p' run.log >truth.json
  else
    timeout "$limit" "$VRAMSCOPE" record --timings "$@" -o run.db -- \
      python3 "$here/window-train.py" --seconds "$secs" --sleep "$pause" --truth truth.json \
      >run.log 2>&1
    rc=$?
  fi
  kill "$sampler" 2>/dev/null
  wait "$sampler" 2>/dev/null
  say "   exit $rc in $(($(date +%s) - t0))s"
  if [ "$rc" != 0 ] || [ ! -f run.db ]; then
    tail -n 30 run.log >>"$log"
    failed=1
    cd "$out"
    return 0
  fi
  stat -c %s run.db >size.txt
  say "   trace $(cat size.txt) bytes; spool at most $(awk '$2 > m { m = $2 } END { print m + 0 }' \
    spool.txt) bytes on disk; post-run $(awk '/post-run total/ { print $3 / 1000 }' run.log) s"
  timeout 20 "$VRAMSCOPE" report run.db meta >meta.txt 2>&1
  timeout 20 "$VRAMSCOPE" report run.db summary --format csv >summary.csv 2>&1
  timeout 20 "$VRAMSCOPE" report run.db summary >summary.txt 2>&1
  timeout 30 "$VRAMSCOPE" report run.db diagnose --width 100 >diagnose.txt 2>&1
  timeout 20 "$VRAMSCOPE" report run.db leaks --format csv >leaks.csv 2>&1
  timeout 20 "$VRAMSCOPE" report run.db oom >oom.txt 2>&1
  timeout 20 "$VRAMSCOPE" report run.db growth --format csv >growth.csv 2>&1
  timeout 20 "$VRAMSCOPE" report run.db timeline --format csv >timeline.csv 2>&1
  python3 - run.db >tables.txt 2>&1 <<'PY'
import sqlite3, sys
db = sqlite3.connect("file:%s?mode=ro" % sys.argv[1], uri=True)
for (name,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name"):
    print(name, db.execute('SELECT count(*) FROM "%s"' % name).fetchone()[0])
for row in db.execute("SELECT * FROM detail_interval") if db.execute(
        "SELECT 1 FROM sqlite_master WHERE name = 'detail_interval'").fetchone() else []:
    print("detail_interval", *row)
PY
  grep -a 'GROUND_TRUTH' run.log >>"$log" 2>/dev/null
  cd "$out"
}

run fix-8 8 0.05 --window 2s --no-kernels
run full-20 20 0.004
run win-30 30 0.004 --window 20s
run win-120 120 0.004 --window 20s
if timeout 120 "$NVCC" -O2 -I"$root/samples" -o "$out/window-sample" "$here/window-sample.cu" \
  >"$out/nvcc.log" 2>&1; then
  run cuda-40 40 cuda --window 10s
else
  say "nvcc failed: $(tail -n 3 "$out/nvcc.log")"
  failed=1
fi
run win-60 60 0.004 --window 20s
# LONG=S: one more, S seconds long, to show the spool flat over time.
# RUNS="win-120 win-300": only the runs named.
[ -n "${LONG:-}" ] && run "win-$LONG" "$LONG" 0.004 --window 20s

# Everything in one file: sizes, vramscope's summary and the truths.
cd "$out"
python3 - "$out" >results.json 2>>"$log" <<'PY'
import csv, glob, json, os, sys
out = sys.argv[1]
res = {}
for d in sorted(glob.glob(os.path.join(out, "*-*"))):
    if not os.path.isdir(d) or os.path.basename(d) == "cache":
        continue
    r = {}
    def read(name):
        p = os.path.join(d, name)
        return open(p).read() if os.path.exists(p) else None
    for name in ("size.txt",):
        v = read(name)
        r["trace_bytes"] = int(v) if v and v.strip().isdigit() else None
    spool = read("spool.txt") or ""
    sizes = [int(l.split()[1]) for l in spool.splitlines() if len(l.split()) == 2 and l.split()[1].isdigit()]
    r["spool_max_bytes"] = max(sizes) if sizes else None
    parts = {}
    for l in (read("spool-parts.txt") or "").splitlines():
        f = l.split()
        for k in range(1, len(f) - 1, 2):
            if f[k + 1].isdigit():
                parts[f[k]] = max(parts.get(f[k], 0), int(f[k + 1]))
    r["spool_parts_max_bytes"] = parts or None
    log = read("run.log") or ""
    post = [l.split()[2] for l in log.splitlines() if l.strip().startswith("post-run total")]
    r["post_run_s"] = float(post[-1]) / 1000 if post else None
    t = read("truth.json")
    r["truth"] = json.loads(t) if t else None
    s = read("summary.csv")
    r["summary"] = list(csv.DictReader(s.splitlines())) if s and s.startswith("device") else s
    r["meta"] = read("meta.txt")
    res[os.path.basename(d)] = r
json.dump(res, sys.stdout, indent=1)
PY
# Every run against its program's ground truth (tests/gpu/check-window.py),
# before the large traces go.
timeout 120 python3 "$here/check-window.py" "$VRAMSCOPE" "$out" >"$out/check.log" 2>&1 || failed=1
grep -c '^ok' "$out/check.log" | sed 's/^/check: ok /' >>"$log"
grep '^not ok' "$out/check.log" >>"$log"
# Small traces stay (fixtures); large ones go.
for t in "$out"/*/run.db; do
  [ -f "$t" ] && [ "$(stat -c %s "$t")" -gt 2000000 ] && rm -f "$t"
done
rm -rf "$out/cache" "$out/window-sample"
du -ah "$out" | sort -h | tail -n 12 >>"$log"
say "window-run: done in $(($(date +%s) - start))s, failed=$failed"
exit $failed

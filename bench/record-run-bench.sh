#!/bin/bash
# SPDX-License-Identifier: MIT
# record-run-bench.sh — what a whole recorded run costs: the wall time of the
# whole process (start to exit, post-run work included) of a ResNet-18
# training loop (samples/torch-train.py, batch BATCH, STEPS steps) run
#   plain            the program alone
#   torch-history    PyTorch's own profiler: _record_memory_history (Python
#                    stacks, as vramscope's hook asks) + _dump_snapshot
#   record-nokernels vramscope record --no-kernels --timings
#   record           vramscope record --timings (kernels on; the allocator
#                    stream with its own Python stacks, no history)
# and, with PROBES=1, the collector without the PyTorch hook
# (--torch=off), to tell the two in-run costs apart:
#   record-notorch           record --timings --torch=off
#   record-nokernels-notorch record --timings --no-kernels --torch=off
#   record-history           record --timings with PyTorch's own history as
#                            well (VRAMSCOPE_TORCH_HISTORY=1: the exit
#                            snapshot, with its stacks, is the level)
#   record-history-nokernels the same with --no-kernels
# REPS times each, interleaved (all modes, then again), median per mode.
# For each recorded run it keeps what --timings printed; for the first of
# each mode the trace's size per table (bench/trace-sizes.py, SQLite's
# dbstat); then the traces are removed.  First, one STEPS_KEEP-step
# recorded run with kernels is kept as OUTDIR/resnet18-keep.db.
#
# Usage: bench/record-run-bench.sh OUTDIR
#   VRAMSCOPE   the vramscope binary (default build/cli/vramscope)
#   STEPS       training steps per measured run (default 800)
#   BATCH       batch size (default 32)
#   REPS        runs per mode (default 2)
#   STEPS_KEEP  steps of the kept trace (default 100; 0: none)
#   BUDGET      seconds: a run whose predicted time would end past BUDGET
#               is not started, and the table says so (default 0: no limit)
#   RUN_TIMEOUT seconds each run may take (default 300)
#   PROBES      1: also the two --torch=off runs (default 0)
#   MODES       the modes to run, space-separated (default: the four above,
#               and the probes with PROBES=1)
# Writes OUTDIR/table.md (the tables), OUTDIR/bench.log (every step) and,
# per run, OUTDIR/NAME.log (what it printed) and NAME.json (its ground
# truth: settings, torch.cuda.memory_stats()).
set -u
out=${1:?usage: record-run-bench.sh OUTDIR}
mkdir -p "$out"
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
VRAMSCOPE=${VRAMSCOPE:-$root/build/cli/vramscope}
STEPS=${STEPS:-800}
BATCH=${BATCH:-32}
REPS=${REPS:-2}
STEPS_KEEP=${STEPS_KEEP:-100}
BUDGET=${BUDGET:-0}
RUN_TIMEOUT=${RUN_TIMEOUT:-300}
PROBES=${PROBES:-0}
log="$out/bench.log"
table="$out/table.md"
t_start=$EPOCHREALTIME
say() { echo "$*" | tee -a "$log"; }
elapsed() { python3 -c 'import sys; print("%.1f" % (float(sys.argv[1]) - float(sys.argv[2])))' "$EPOCHREALTIME" "$t_start"; }

say "record-run-bench: $(date -u +%FT%TZ) steps=$STEPS batch=$BATCH reps=$REPS budget=${BUDGET}s"
say "vramscope: $VRAMSCOPE"
if ! command -v nvidia-smi >/dev/null 2>&1 || ! nvidia-smi -L >/dev/null 2>&1; then
  say "no GPU: skipped"
  exit 77
fi
nvidia-smi -L >>"$log" 2>&1
if ! python3 -c 'import torch, torchvision; assert torch.cuda.is_available()' >>"$log" 2>&1; then
  say "no PyTorch with CUDA and torchvision: skipped"
  exit 77
fi
python3 -c 'import torch; print("torch", torch.__version__, torch.version.cuda)' >>"$log" 2>&1
timings=--timings
if ! "$VRAMSCOPE" record --help 2>&1 | grep -q -- --timings; then
  say "this vramscope has no record --timings: runs without it"
  timings=
fi

train="$root/samples/torch-train.py"
results="$out/results.tsv" # mode rep wall_s step_ms after_end_s trace_bytes program_s post_run_s
: >"$results"

# run NAME MODE STEPS: one run; appends a line to results.tsv.
run() {
  local name=$1 mode=$2 steps=$3
  local args=(--steps "$steps" --batch "$BATCH" --out "$out/$name.json")
  local cmd=()
  case $mode in
    plain) cmd=(python3 "$train" "${args[@]}") ;;
    torch-history) cmd=(python3 "$train" "${args[@]}" --torch-history "$out/$name.pickle") ;;
    record-nokernels) cmd=("$VRAMSCOPE" record $timings --no-kernels -o "$out/$name.db" -- python3 "$train" "${args[@]}") ;;
    record | keep) cmd=("$VRAMSCOPE" record $timings -o "$out/$name.db" -- python3 "$train" "${args[@]}") ;;
    record-notorch) cmd=("$VRAMSCOPE" record $timings --torch=off -o "$out/$name.db" -- python3 "$train" "${args[@]}") ;;
    record-nokernels-notorch) cmd=("$VRAMSCOPE" record $timings --no-kernels --torch=off -o "$out/$name.db" -- python3 "$train" "${args[@]}") ;;
    record-history) cmd=(env VRAMSCOPE_TORCH_HISTORY=1 "$VRAMSCOPE" record $timings -o "$out/$name.db" -- python3 "$train" "${args[@]}") ;;
    record-history-nokernels) cmd=(env VRAMSCOPE_TORCH_HISTORY=1 "$VRAMSCOPE" record $timings --no-kernels -o "$out/$name.db" -- python3 "$train" "${args[@]}") ;;
  esac
  rm -f "$out/$name.db" "$out/$name.pickle"
  say "== $name ($(elapsed) s in): ${cmd[*]}"
  local t0=$EPOCHREALTIME
  timeout "$RUN_TIMEOUT" "${cmd[@]}" >"$out/$name.log" 2>&1
  local rc=$?
  local t1=$EPOCHREALTIME
  local end_wall step_ms bytes=0
  end_wall=$(sed -n 's/^end_wall //p' "$out/$name.log" | tail -n 1)
  step_ms=$(sed -n 's/^step_ms //p' "$out/$name.log" | tail -n 1)
  if [ -s "$out/$name.db" ]; then
    bytes=$(stat -c %s "$out/$name.db")
  elif [ -s "$out/$name.pickle" ]; then
    bytes=$(stat -c %s "$out/$name.pickle")
  fi
  # record --timings: the program's run (start to exit) and the post-run total, in s.
  local program post
  program=$(sed -n 's/^ *program run (start to exit) *\([0-9.]*\) ms.*/\1/p' "$out/$name.log" | tail -n 1)
  post=$(sed -n 's/^ *post-run total *\([0-9.]*\) ms.*/\1/p' "$out/$name.log" | tail -n 1)
  local line
  line=$(python3 -c '
import sys
t0, t1 = float(sys.argv[1]), float(sys.argv[2])
end = float(sys.argv[3]) if sys.argv[3] else None
print("%.3f\t%s\t%s" % (t1 - t0, sys.argv[4] or "-", "%.3f" % (t1 - end) if end else "-"))' \
    "$t0" "$t1" "${end_wall:-}" "${step_ms:-}")
  say "   exit $rc; wall, step_ms, after the program's end (s): $(echo "$line" | tr '\t' ' '); $bytes bytes"
  grep -A40 -i 'timings' "$out/$name.log" | grep -v '^GROUND_TRUTH\|^end_wall\|^step_ms' >>"$log" || true
  if [ "$rc" != 0 ]; then
    tail -n 20 "$out/$name.log" >>"$log"
    say "   FAILED $name"
    return 1
  fi
  printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$mode" "$name" "$line" "$bytes" \
    "$(ms_to_s "$program")" "$(ms_to_s "$post")" >>"$results"
}

ms_to_s() { [ -n "$1" ] && python3 -c 'import sys; print("%.3f" % (float(sys.argv[1]) / 1e3))' "$1" || echo -; }

# predicted MODE: seconds a run of MODE is expected to take (its last run,
# else twice the plain run's, else 120).
predicted() {
  python3 - "$results" "$1" <<'PY'
import sys
rows = [l.rstrip("\n").split("\t") for l in open(sys.argv[1]) if l.strip()]
same = [float(r[2]) for r in rows if r[0] == sys.argv[2]]
plain = [float(r[2]) for r in rows if r[0] == "plain"]
print("%.0f" % (same[-1] if same else 2 * plain[-1] if plain else 120))
PY
}

fits() {
  [ "$BUDGET" = 0 ] && return 0
  local p now
  p=$(predicted "$1")
  now=$(elapsed)
  python3 -c 'import sys; sys.exit(0 if float(sys.argv[1]) + float(sys.argv[2]) <= float(sys.argv[3]) else 1)' \
    "$now" "$p" "$BUDGET" && return 0
  say "== $2: not run: ${now} s spent, about $p s more needed, budget $BUDGET s"
  return 1
}

sizes() { # TRACE LABEL: its tables into the log and sizes.md
  python3 "$here/trace-sizes.py" "$1" "$2" >>"$out/sizes.md" 2>>"$log" && echo >>"$out/sizes.md"
}

: >"$out/sizes.md"
if [ "$STEPS_KEEP" != 0 ]; then
  run resnet18-keep keep "$STEPS_KEEP" && sizes "$out/resnet18-keep.db" "resnet18-keep.db ($STEPS_KEEP steps, kernels)"
fi
modes="plain torch-history record-nokernels record"
[ "$PROBES" = 1 ] && modes="$modes record-nokernels-notorch record-notorch record-history record-history-nokernels"
modes=${MODES:-$modes}
for rep in $(seq 1 "$REPS"); do
  for mode in $modes; do
    name=$mode-$rep
    fits "$mode" "$name" || continue
    run "$name" "$mode" "$STEPS" || continue
    if [ "$rep" = 1 ] && [ -s "$out/$name.db" ]; then
      sizes "$out/$name.db" "$name.db ($STEPS steps)"
    fi
    rm -f "$out/$name.db" "$out/$name.pickle"
  done
done

python3 - "$results" "$STEPS" "$BATCH" "$(nvidia-smi --query-gpu=name --format=csv,noheader | head -n 1)" >"$table" <<'PY'
import statistics
import sys
rows = [l.rstrip("\n").split("\t") for l in open(sys.argv[1]) if l.strip()]
steps, batch, gpu = sys.argv[2], sys.argv[3], sys.argv[4]
label = {"plain": "plain",
         "torch-history": "PyTorch's own `_record_memory_history` + `_dump_snapshot`",
         "record-nokernels": "`vramscope record --no-kernels`",
         "record": "`vramscope record`",
         "record-nokernels-notorch": "`vramscope record --no-kernels --torch=off` (no PyTorch hook)",
         "record-notorch": "`vramscope record --torch=off` (no PyTorch hook)",
         "record-history": "`vramscope record`, PyTorch's history too (`VRAMSCOPE_TORCH_HISTORY=1`)",
         "record-history-nokernels": "`vramscope record --no-kernels`, PyTorch's history too"}
print("ResNet-18, batch %s, %s steps, %s: whole process wall time, median of the runs done" % (batch, steps, gpu))
print()
print("| run | runs | wall | vs. plain | step ms | after the program's end | program run | vs. plain | post-run | output MB |")
print("|---|---|---|---|---|---|---|---|---|---|")
med = {}
for mode in label:
    r = [x for x in rows if x[0] == mode]
    if not r:
        if mode in ("plain", "torch-history", "record-nokernels", "record"):
            print("| %s | 0 | not run | | | | |" % label[mode])
        continue
    wall = statistics.median(float(x[2]) for x in r)
    med[mode] = wall
    step = [float(x[3]) for x in r if x[3] != "-"]
    after = [float(x[4]) for x in r if x[4] != "-"]
    mb = max(int(x[5]) for x in r) / 1e6
    ratio = "%.2f×" % (wall / med["plain"]) if "plain" in med else ""
    # record --timings: the program's own run (start to exit) and the
    # post-run work, apart.
    prog = [float(x[6]) for x in r if len(x) > 7 and x[6] != "-"]
    post = [float(x[7]) for x in r if len(x) > 7 and x[7] != "-"]
    prog_ratio = ("%.2f×" % (statistics.median(prog) / med["plain"])
                  if prog and "plain" in med else "")
    print("| %s | %d | %.1f s | %s | %s | %s | %s | %s | %s | %s |" % (
        label[mode], len(r), wall, ratio,
        "%.2f" % statistics.median(step) if step else "",
        "%.2f s" % statistics.median(after) if after else "",
        "%.1f s" % statistics.median(prog) if prog else "",
        prog_ratio,
        "%.2f s" % statistics.median(post) if post else "",
        "%.1f" % mb if mb else ""))
PY
echo >>"$table"
cat "$out/sizes.md" >>"$table"
cat "$table" | tee -a "$log"
say "done in $(elapsed) s"

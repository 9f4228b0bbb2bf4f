#!/bin/bash
# SPDX-License-Identifier: MIT
# whatif-runs.sh — the same PyTorch training loop (samples/torch-whatif.py)
# recorded under several allocator settings and memory caps, so that the
# what-if replay of one run's trace can be checked against the other runs.
#
# Usage: bash tests/gpu/whatif-runs.sh OUTDIR
#   VRAMSCOPE  the vramscope binary (default: build/cli/vramscope)
# For each run NAME it writes OUTDIR/NAME.db (the trace), NAME.json (the
# program's ground truth: settings, cap, OOM, torch.cuda.memory_stats()),
# NAME.log (everything printed) and NAME.summary.csv; OUTDIR/runs.log says
# what each step did.  The caps are chosen from the first, unlimited run's
# own peaks: "tight" lies between its allocated and reserved peaks (where
# fragmentation decides), "low" below its allocated peak (fails whatever the
# settings), "high" above its reserved peak.  Each step has its own timeout
# and the script stops starting runs after BUDGET seconds (default 130).
set -u
BUDGET=${BUDGET:-130}
vs_run_log=runs.log
. "$(dirname "$0")/run-common.sh" whatif-runs "$@"
if ! python3 -c 'import torch; assert torch.cuda.is_available()' >>"$log" 2>&1; then
  say "no PyTorch with CUDA: skipped"
  exit 77
fi

failed=0
# run NAME CONF LIMIT_BYTES: records one run of the sample.
run() {
  local name=$1 conf=$2 limit=$3
  local now=$(($(date +%s) - start))
  if [ "$now" -ge "$BUDGET" ]; then
    say "== $name: not run, ${now}s spent of ${BUDGET}s"
    return
  fi
  say "== $name: PYTORCH_CUDA_ALLOC_CONF='$conf' limit_bytes=$limit"
  local t0=$(date +%s)
  PYTORCH_CUDA_ALLOC_CONF=$conf timeout 40 "$VRAMSCOPE" record -q --no-kernels --torch=on -o "$out/$name.db" -- \
    python3 "$root/samples/torch-whatif.py" --out "$out/$name.json" --limit-bytes "$limit" \
    >"$out/$name.log" 2>&1
  local rc=$?
  say "   record exit $rc in $(($(date +%s) - t0))s"
  if [ "$rc" != 0 ] || [ ! -s "$out/$name.json" ] || [ ! -s "$out/$name.db" ]; then
    tail -n 20 "$out/$name.log" >>"$log"
    say "   FAILED $name"
    failed=1
    return
  fi
  grep '^GROUND_TRUTH' "$out/$name.log" | tee -a "$log"
  timeout 20 "$VRAMSCOPE" report "$out/$name.db" --format csv summary >"$out/$name.summary.csv" 2>>"$log"
  cat "$out/$name.summary.csv" >>"$log"
  ls -l "$out/$name.db" >>"$log"
}

# stat NAME KEY: one number from a run's memory_stats.
stat() {
  python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["memory_stats"][sys.argv[2]])' \
    "$out/$1.json" "$2" 2>>"$log"
}

run default "" 0
reserved=$(stat default reserved_bytes.all.peak)
allocated=$(stat default allocated_bytes.all.peak)
if [ -z "$reserved" ] || [ -z "$allocated" ]; then
  say "the unlimited run gave no peaks: no capped runs"
  exit 1
fi
mib=$((2 * 1024 * 1024))
tight=$(((allocated + (reserved - allocated) / 2) / mib * mib))
low=$((allocated * 8 / 10 / mib * mib))
high=$((reserved * 3 / 2 / mib * mib))
gclimit=$((reserved * 11 / 10 / mib * mib))
say "peaks of the unlimited run: reserved $reserved allocated $allocated;" \
  "caps: tight $tight low $low high $high gc $gclimit"

run expandable "expandable_segments:True" 0
run max-split-64 "max_split_size_mb:64" 0
run default-tight "" "$tight"
run expandable-tight "expandable_segments:True" "$tight"
run default-low "" "$low"
run default-high "" "$high"
run roundup-4 "roundup_power2_divisions:4" 0
run gc-0.6 "garbage_collection_threshold:0.6" "$gclimit"
run max-split-64-tight "max_split_size_mb:64" "$tight"

say "done in $(($(date +%s) - start))s, failed=$failed"
exit $failed

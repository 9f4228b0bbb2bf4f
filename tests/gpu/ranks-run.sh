#!/bin/bash
# SPDX-License-Identifier: MIT
# ranks-run.sh — two data-parallel ranks recorded two ways, for the rank
# comparison (`vramscope report ranks`) and the identity kept in meta.
#
# Usage: bash tests/gpu/ranks-run.sh OUTDIR      (1 or 2 GPUs)
#   VRAMSCOPE  the vramscope binary (default: build/cli/vramscope)
# samples/torch-ranks.py under torchrun, 2 ranks: one GPU each over NCCL
# where there are two, else both on GPU 0 over Gloo (steps.log says which
# ran).  Rank 1 peaks highest (a larger batch), rank 0 fails one request
# under a per-process memory fraction and goes on.  SLURM_JOB_ID=4242 is set, as a
# batch system would, to show the job id landing in each trace's meta.
#   OUTDIR/one/ranks.db        one `record` around torchrun: both ranks
#                              in one trace
#   OUTDIR/per-rank/run-R.db   torchrun --no-python around `record -o
#                              run-%q{RANK}.db`: a trace per rank
#   OUTDIR/job/job.db          one process under Slurm-like variables and
#                              `record --job`: --job wins, Slurm's rank
#                              variables give the rank
# Next to each: truth-rankR.json (the rank's own ground truth: settings,
# the error it caught, torch.cuda.memory_stats()), run.log (everything
# printed), and the reports vramscope gives on them; check.log holds
# tests/gpu/check-ranks.py's verdict.  OUTDIR/steps.log says what each step
# did.  Each step has its own timeout, cut to what is left of BUDGET
# (280 s), so the whole stays under 300 s.
set -u
. "$(dirname "$0")/run-common.sh" ranks-run "$@"
BUDGET=${BUDGET:-280}
gpus=$(python3 -c 'import torch; print(torch.cuda.device_count())' 2>>"$log")
if [ -z "$gpus" ] || [ "$gpus" -lt 1 ]; then
  say "PyTorch sees no GPU: skipped"
  exit 77
fi
if [ "$gpus" -ge 2 ]; then
  say "layout: $gpus GPUs, one rank per GPU, NCCL"
else
  say "layout: 1 GPU, both ranks on GPU 0, Gloo"
  # Gloo finds its address through the host name, which an isolated
  # machine may not resolve: the loopback interface always works here.
  export GLOO_SOCKET_IFNAME=${GLOO_SOCKET_IFNAME:-lo}
fi
"$VRAMSCOPE" --version >>"$log" 2>&1

# NVLink SHARP / multicast stays off (as in run-gpu-tests.sh's torch-ddp).
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export SLURM_JOB_ID=4242
# The hook's stream library is built into OUTDIR, not the home folder, so
# the traces name no machine's home (neutralize-paths.py --root OUTDIR).
export VRAMSCOPE_CACHE_DIR="$out/cache"
failed=0
sample="$root/samples/torch-ranks.py"

# step NAME TIMEOUT COMMAND...: runs one step, its output to NAME.log in
# the current directory, and says how it went.
step() {
  local name=$1 limit=$2
  shift 2
  local t0=$(date +%s)
  if [ $((t0 - start + limit)) -gt "$BUDGET" ]; then
    limit=$((BUDGET - (t0 - start)))
    if [ "$limit" -lt 5 ]; then
      say "== $name: not run, $((t0 - start))s spent of ${BUDGET}s"
      failed=1
      return 0
    fi
  fi
  say "== $name: $*"
  timeout "$limit" "$@" >"$name.log" 2>&1
  local rc=$?
  say "   exit $rc in $(($(date +%s) - t0))s"
  if [ "$rc" != 0 ]; then
    tail -n 30 "$name.log" >>"$log"
    failed=1
  fi
  grep -a 'GROUND_TRUTH' "$name.log" >>"$log" 2>/dev/null
  return 0
}

# (a) One record around torchrun: one trace, every rank a process of it.
mkdir -p "$out/one" && cd "$out/one"
step run 100 "$VRAMSCOPE" record -q --no-kernels -o ranks.db -- \
  python3 -m torch.distributed.run --nproc-per-node 2 --master-port 29531 \
  "$sample" --truth-dir "$out/one"

# (b) A record per rank, each naming its own file after the rank torchrun
# gives it (no "--": torchrun's argument parser keeps the rest as it is).
mkdir -p "$out/per-rank" && cd "$out/per-rank"
step run 100 python3 -m torch.distributed.run --nproc-per-node 2 --master-port 29532 \
  --no-python "$VRAMSCOPE" record -q --no-kernels -o 'run-%q{RANK}.db' \
  python3 "$sample" --truth-dir "$out/per-rank"

# (c) Identity alone: Slurm's rank variables, record --job over SLURM_JOB_ID.
mkdir -p "$out/job" && cd "$out/job"
step run 30 env SLURM_PROCID=3 SLURM_LOCALID=1 SLURM_NTASKS=4 \
  "$VRAMSCOPE" record -q --no-kernels --job nightly-7 -o job.db -- \
  python3 -c 'import torch; x = torch.ones(1 << 20, device="cuda"); torch.cuda.synchronize(); print("ok")'

# What vramscope says about them, and what they hold.
cd "$out"
for t in one/ranks.db per-rank/run-0.db per-rank/run-1.db job/job.db; do
  [ -f "$t" ] || { say "missing $t"; failed=1; continue; }
  python3 - "$t" >"$t.identity.txt" 2>&1 <<'PY'
import sqlite3, sys
db = sqlite3.connect("file:%s?mode=ro" % sys.argv[1], uri=True)
for row in db.execute("SELECT key, value FROM meta WHERE key IN"
                      " ('job_id', 'job_id_source', 'host', 'processes') ORDER BY key"):
    print("meta", *row)
for row in db.execute("SELECT pid, host, rank, local_rank, world_size, exit_status FROM process"):
    print("process", *row)
PY
  cat "$t.identity.txt" >>"$log"
  timeout 10 "$VRAMSCOPE" report "$t" summary --format csv >"$t.summary.csv" 2>>"$log"
done
step ranks-one 10 "$VRAMSCOPE" report ranks one/ranks.db --format csv
step ranks-per-rank 10 "$VRAMSCOPE" report ranks per-rank/run-0.db per-rank/run-1.db --format csv
step ranks-per-rank-text 10 "$VRAMSCOPE" report ranks per-rank/run-*.db --width 120
step diagnose-per-rank 10 "$VRAMSCOPE" report per-rank/run-0.db per-rank/run-1.db --width 100
# Each rank's numbers against its own ground truth (the test the fixtures
# get); its log is check.log.
step check 30 python3 "$here/check-ranks.py" "$VRAMSCOPE" "$out"
du -ah "$out" | sort -h | tail -n 12 >>"$log"
rm -rf "$out/cache"
say "ranks-run: done, failed=$failed"
exit $failed

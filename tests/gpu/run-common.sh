# SPDX-License-Identifier: MIT
# run-common.sh — the start every multi-step GPU run script shares, sourced
# as `. "$(dirname "$0")/run-common.sh" NAME "$@"`: OUTDIR (the first
# argument, made absolute), here (tests/gpu), root (the checkout),
# VRAMSCOPE (absolute; default build/cli/vramscope), log (OUTDIR/steps.log,
# or OUTDIR/$vs_run_log where the script set vs_run_log before), say (a
# line to the terminal and the log), start (the time it began); then the
# first line of the log, and exit 77 without a GPU.
vs_run_name=$1
shift
out=${1:?usage: $vs_run_name.sh OUTDIR}
mkdir -p "$out"
out=$(cd "$out" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
VRAMSCOPE=${VRAMSCOPE:-$root/build/cli/vramscope}
case $VRAMSCOPE in /*) ;; *) VRAMSCOPE=$(pwd)/$VRAMSCOPE ;; esac
export VRAMSCOPE
log="$out/${vs_run_log:-steps.log}"
say() { echo "$*" | tee -a "$log"; }
start=$(date +%s)

say "$vs_run_name: $(date -u +%FT%TZ) vramscope=$VRAMSCOPE"
if ! command -v nvidia-smi >/dev/null 2>&1 || ! nvidia-smi -L >/dev/null 2>&1; then
  say "no GPU: skipped"
  exit 77
fi
nvidia-smi -L >>"$log" 2>&1

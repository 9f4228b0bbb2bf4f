# SPDX-License-Identifier: MIT
# lib.sh — the start the single-run GPU test scripts share (run-gpu-tests.sh,
# run-alloc-tests.sh, run-framework-tests.sh, check-stacks.sh), sourced as
# `. "$(dirname "$0")/lib.sh"` so that it reads the script's own arguments:
# set -u, here (tests/gpu), root (the checkout), out (the first argument,
# or a new temporary folder; made), VRAMSCOPE exported (default
# build/cli/vramscope); then exit 77 with "no GPU: skipped" without a GPU.
# POSIX sh only: the scripts run on a bare GPU server.
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
out=${1:-$(mktemp -d)}
mkdir -p "$out"
export VRAMSCOPE=${VRAMSCOPE:-$root/build/cli/vramscope}
if ! command -v nvidia-smi >/dev/null 2>&1 || ! nvidia-smi -L >/dev/null 2>&1; then
  echo "no GPU: skipped"
  exit 77
fi

# vs_record_truth NAME WANT COMMAND...: records COMMAND (quiet) into
# $out/NAME.db, its output in $out/NAME.log, and saves the last
# GROUND_TRUTH line it printed as $out/NAME.json.  When record's exit
# status is not WANT or there is no ground truth it prints the log and
# the failure, sets failed=1 and returns 1; else returns 0.
vs_record_truth() {
  name=$1; want=$2; shift 2
  echo "== $name"
  "$VRAMSCOPE" record -q -o "$out/$name.db" -- "$@" >"$out/$name.log" 2>&1
  rc=$?
  if [ "$rc" != "$want" ]; then
    cat "$out/$name.log"
    echo "FAILED $name: record exited $rc, expected $want"
    failed=1
    return 1
  fi
  sed -n 's/^GROUND_TRUTH //p' "$out/$name.log" | tail -n 1 >"$out/$name.json"
  if [ ! -s "$out/$name.json" ]; then
    cat "$out/$name.log"
    echo "FAILED $name: printed no ground truth"
    failed=1
    return 1
  fi
}

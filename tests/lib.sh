# SPDX-License-Identifier: MIT
# lib.sh — what the shell tests share (TAP output), sourced after they read
# their arguments as `. "$(dirname "$0")/../lib.sh"`: dir, a new folder
# removed at exit; n and failed, both 0; and the functions below.  POSIX sh.
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
n=0 failed=0

# ok STATUS TEXT: prints the next TAP line, "ok N - TEXT" when STATUS is 0,
# else "not ok N - TEXT" and sets failed=1.
ok() { n=$((n + 1)); if [ "$1" = 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; failed=1; fi; }

# check NAME WANT PATTERN ARGS...: runs $vramscope ARGS and prints the next
# TAP line, "ok N NAME" when it exits WANT and its output (stdout and
# stderr) holds PATTERN, else "not ok N NAME: …" with the output and sets
# failed=1.
check() {
  name=$1 want=$2 pattern=$3
  shift 3
  n=$((n + 1))
  "$vramscope" "$@" >"$dir/out" 2>&1
  rc=$?
  if [ "$rc" -eq "$want" ] && grep -qF -- "$pattern" "$dir/out"; then
    echo "ok $n $name"
  else
    echo "not ok $n $name: exit $rc (wanted $want), output:"
    sed 's/^/# /' "$dir/out"
    failed=1
  fi
}

# poll TIMES PAUSE COMMAND...: runs COMMAND until it succeeds, sleeping
# PAUSE seconds after each failure, at most TIMES times.
poll() {
  vs_polls=$1 vs_pause=$2
  shift 2
  vs_poll=0
  while ! "$@" && [ $vs_poll -lt "$vs_polls" ]; do sleep "$vs_pause"; vs_poll=$((vs_poll + 1)); done
}

# vs_trace_db_env VRAMSCOPE: exports VRAMSCOPE and puts tests/ first on
# PYTHONPATH, so that python3 reads compacted traces' tables through
# tests/vs_trace_db.py.
vs_trace_db_env() {
  export VRAMSCOPE="$1"
  export PYTHONPATH="$(cd "$(dirname "$0")/.." && pwd)${PYTHONPATH:+:$PYTHONPATH}"
}

# signals_default CMD [ARG...] &: runs CMD as a background job whose
# process ($!) is CMD itself, with SIGINT and SIGHUP back to their default:
# a shell's background job ignores SIGINT, and a test run under nohup
# ignores SIGHUP, which a program then keeps ignoring.  (It replaces the
# job's subshell: only for `&`.)
signals_default() {
  exec python3 -c 'import os, signal, sys
signal.signal(signal.SIGINT, signal.SIG_DFL)
signal.signal(signal.SIGHUP, signal.SIG_DFL)
os.execvp(sys.argv[1], sys.argv[1:])' "$@"
}

# signal_at_temp FILE PID BYTES SIG: once a temporary of FILE holding more
# than BYTES exists (wait_temp), stops process PID and, if it still runs
# and has not yet put FILE in place, sends it SIG and lets it go on; prints
# the temporary's name.  Returns 1 when that moment was missed: on a
# loaded machine the shell can be held up between seeing the temporary and
# signalling while the process runs to its end, so a caller tries again.
signal_at_temp() {
  t=$(wait_temp "$1" "$2" "$3") || return 1
  kill -STOP "$2" 2>/dev/null || return 1
  st=Z
  [ -r /proc/"$2"/stat ] && read -r _ _ st _ </proc/"$2"/stat 2>/dev/null
  if [ "$st" = Z ] || [ -e "$1" ]; then
    kill -CONT "$2" 2>/dev/null
    return 1
  fi
  kill -"$4" "$2"
  kill -CONT "$2"
  echo "$t"
}

# wait_temp FILE PID BYTES: waits until a temporary of FILE (FILE.tmp-*)
# holding more than BYTES exists, while process PID runs (not yet ended, a
# zombie counting as ended); prints its name.  How long that takes depends
# on the machine's load: only a process that ends first, or a bound of
# polls no working run reaches, stops the wait.
wait_temp() {
  i=0
  while [ $i -lt 20000 ]; do
    for f in "$1".tmp-*; do
      [ -f "$f" ] && [ "$(wc -c <"$f")" -gt "$3" ] && { echo "$f"; return 0; }
    done
    st=Z
    [ -r /proc/"$2"/stat ] && read -r _ _ st _ </proc/"$2"/stat 2>/dev/null
    [ "$st" = Z ] && return 1
    sleep 0.01
    i=$((i + 1))
  done
  return 1
}

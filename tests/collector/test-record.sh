#!/bin/sh
# SPDX-License-Identifier: MIT
# test-record.sh — `vramscope record` without a GPU: exit statuses, signal
# forwarding, output names, bad input, and the collector failing to start.
#
# Usage: test-record.sh RECORD INJECT CUDA_APP COLLECTOR
#   RECORD     vs-test-record (vs_cmd_record as a program)
#   INJECT     vs-test-inject;  CUDA_APP  vs-test-cuda-app
#   COLLECTOR  libvramscope-collector.so
# TAP output.
set -u
record=$1 inject=$2 app=$3
export VRAMSCOPE_COLLECTOR=$4
. "$(dirname "$0")/../lib.sh"
is_trace() { python3 -c 'import sqlite3,sys; db=sqlite3.connect("file:"+sys.argv[1]+"?mode=ro", uri=True); sys.exit(0 if db.execute("pragma application_id").fetchone()[0]==1448234323 and db.execute("select value from meta where key=\"finalized\"").fetchone()[0] in (1,"1") else 1)' "$1"; }

"$record" record -q -o "$dir/true.db" -- true 2>"$dir/true.err"; rc=$?
ok $([ $rc = 0 ] && [ ! -e "$dir/true.db" ] && [ $(wc -l <"$dir/true.err") = 1 ] && grep -q "no process of the run used CUDA" "$dir/true.err" && echo 0 || echo 1) \
  "record -- true exits 0, says no process used CUDA and writes no trace"

# A program that leaves a process file in the spool gets a finalized trace.
"$record" record -q -o "$dir/one.db" -- sh -c ': >"$VRAMSCOPE_SPOOL_DIR/process-$$-1.db"'; rc=$?
ok $([ $rc = 0 ] && is_trace "$dir/one.db" && echo 0 || echo 1) "a run that left a process file writes a finalized trace"
ls -a "$dir" | grep -q vramscope-spool; ok $([ $? = 1 ] && echo 0 || echo 1) "the spool directory is removed"

"$record" record -q -o "$dir/seven.db" -- sh -c 'exit 7'; rc=$?
ok $([ $rc = 7 ] && echo 0 || echo 1) "the program's exit status comes back (7, got $rc)"

"$record" record -q -o "$dir/term.db" -- sh -c 'kill -TERM $$'; rc=$?
ok $([ $rc = 143 ] && echo 0 || echo 1) "a program killed by SIGTERM gives 143 (got $rc)"

"$record" record -q -o "$dir/int.db" -- sh -c 'trap "exit 9" INT; kill -INT $PPID; sleep 5 & wait'; rc=$?
ok $([ $rc = 9 ] && echo 0 || echo 1) "SIGINT sent to record reaches the program (got $rc)"

"$record" record -q -o "$dir/nx.db" -- "$dir/no-such-program" 2>"$dir/nx.err"; rc=$?
ok $([ $rc = 127 ] && grep -q "cannot run" "$dir/nx.err" && echo 0 || echo 1) "a missing program: 127 and one clear line"

VS_T=tag "$record" record -q -o "$dir/%q{VS_T}-%p-%%.db" -- sh -c ': >"$VRAMSCOPE_SPOOL_DIR/process-$$-1.db"'; rc=$?
ok $([ $rc = 0 ] && ls "$dir"/tag-*-%.db >/dev/null 2>&1 && echo 0 || echo 1) "output patterns %q{VAR}, %p and %% expand"

"$record" record -o "$dir/x-%z.db" -- true 2>"$dir/pat.err"; rc=$?
ok $([ $rc = 1 ] && [ $(wc -l <"$dir/pat.err") = 1 ] && echo 0 || echo 1) "an unknown pattern: exit 1, one line"

"$record" record --bogus -- true 2>"$dir/opt.err"; rc=$?
ok $([ $rc = 2 ] && grep -q "Unknown option --bogus" "$dir/opt.err" && grep -q "^usage: vramscope record" "$dir/opt.err" && echo 0 || echo 1) "an unknown option: usage error, exit 2"

"$record" record -o "$dir/none.db" 2>"$dir/none.err"; rc=$?
ok $([ $rc = 2 ] && grep -q "no program given" "$dir/none.err" && echo 0 || echo 1) "no program: usage error, exit 2"

"$record" record --torch=maybe -- true 2>"$dir/torch.err"; rc=$?
ok $([ $rc = 2 ] && grep -q "auto, on or off" "$dir/torch.err" && echo 0 || echo 1) "a bad --torch: usage error, exit 2"

"$record" record -q -o "$dir/args.db" -- sh -c 'printf "%s|" "$@" >"$0"' "$dir/args.out" -- -o --help -q; rc=$?
ok $([ $rc = 0 ] && [ "$(cat "$dir/args.out")" = "--|-o|--help|-q|" ] && echo 0 || echo 1) "the program's arguments after -- reach it untouched, a second -- included"

"$record" record -q --output="$dir/posix.db" sh -c 'printf "%s|" "$@" >"$0"; : >"$VRAMSCOPE_SPOOL_DIR/process-$$-1.db"' "$dir/posix.out" -o --no-kernels; rc=$?
ok $([ $rc = 0 ] && [ "$(cat "$dir/posix.out")" = "-o|--no-kernels|" ] && [ -f "$dir/posix.db" ] && echo 0 || echo 1) "without --, options end at the program's name"

LC_ALL=C.UTF-8 "$record" record --help >"$dir/help.out" 2>&1; rc=$?
ok $([ $rc = 0 ] && grep -q "vramscope record \[OPTION…\] \[--\] PROGRAM" "$dir/help.out" && grep -q -- "--no-kernels" "$dir/help.out" && echo 0 || echo 1) "--help: the usage line names record, exit 0"

VRAMSCOPE_COLLECTOR="$dir/missing.so" "$record" record -o "$dir/m.db" -- true 2>"$dir/m.err"; rc=$?
ok $([ $rc = 1 ] && echo 0 || echo 1) "a missing collector: exit 1"

"$record" record -o "$dir/app.db" -- "$app" >"$dir/app.out" 2>"$dir/app.err"; rc=$?
if grep -q "no CUDA driver" "$dir/app.out"; then
  ok $([ $rc = 5 ] && grep -q "no process of the run used CUDA; no trace written" "$dir/app.err" && [ ! -e "$dir/app.db" ] && echo 0 || echo 1) \
    "without a driver the program runs, its status (5) comes back, one clear line, no trace"
else
  ok $([ $rc = 5 ] && is_trace "$dir/app.db" && echo 0 || echo 1) "with a driver the program runs and its status (5) comes back"
fi

VRAMSCOPE_JOB_ID=outer "$record" record -q --job nightly-7 -o "$dir/job.db" -- sh -c 'printf %s "$VRAMSCOPE_JOB_ID" >"$0"; : >"$VRAMSCOPE_SPOOL_DIR/process-$$-1.db"' "$dir/job.out"; rc=$?
ok $([ $rc = 0 ] && [ "$(cat "$dir/job.out")" = nightly-7 ] && echo 0 || echo 1) "--job reaches every process of the run as VRAMSCOPE_JOB_ID"

"$record" record --job= -- true 2>"$dir/job.err"; rc=$?
ok $([ $rc = 2 ] && grep -q "non-empty" "$dir/job.err" && echo 0 || echo 1) "an empty --job: usage error, exit 2"


"$inject" >"$dir/inj.out" 2>"$dir/inj.err"; rc=$?
if [ -e /dev/nvidiactl ]; then
  ok $([ $rc = 0 ] && echo 0 || echo 1) "InitializeInjection returns 1"
else
  ok $([ $rc = 0 ] && [ $(wc -l <"$dir/inj.err") = 1 ] && grep -q "runs untraced" "$dir/inj.err" && echo 0 || echo 1) \
    "CUPTI cannot start: InitializeInjection returns 1 after one clear line ($(cat "$dir/inj.err"))"
fi
echo "1..$n"
exit $failed

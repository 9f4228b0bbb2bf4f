#!/bin/sh
# SPDX-License-Identifier: MIT
# hostile-view.sh VRAMSCOPE_VIEW DATA_DIR — `vramscope view --screenshot`
# on damaged traces and onto files it must not replace: a picture only when
# the trace could be drawn (exit 0), otherwise exit 1 and no picture; an
# existing file replaced only with --force; never a device, a FIFO or the
# trace itself.  Run under Xvfb.  TAP output.
set -u
view=$1 data=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
trace=$data/sample-nvtx-pool.db
n=0 failed=0

ok () {
  n=$((n + 1))
  if [ "$1" = 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; failed=1; fi
}

# Copies trace $1 to $2 and runs SQL on the copy.
mutate_from () {
  src=$1 out=$2
  shift 2
  cp "$src" "$out"
  python3 - "$out" "$@" <<'PY'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
for sql in sys.argv[2:]:
    db.execute(sql)
db.commit()
PY
}

# Copies $trace to $1 and runs SQL on the copy.
mutate () {
  mutate_from "$trace" "$@"
}

shot () { "$view" "$@" >"$tmp/out" 2>"$tmp/err"; }

echo "1..9"

# A range without a name (its table rebuilt without NOT NULL) is drawn.
mutate "$tmp/noname.db" "CREATE TABLE n2 AS SELECT * FROM nvtx_range" "DROP TABLE nvtx_range" \
  "CREATE TABLE nvtx_range (id INTEGER PRIMARY KEY, process_id, tid, domain, name, start_ns, end_ns, parent_id, depth)" \
  "INSERT INTO nvtx_range SELECT * FROM n2" \
  "UPDATE nvtx_range SET name = NULL"
shot --screenshot "$tmp/noname.png" "$tmp/noname.db"
rc=$?
[ "$rc" = 0 ] && [ -s "$tmp/noname.png" ]
ok $? "a range with no name is drawn (exit $rc)"

# A column the queries need renamed: an error, exit 1, no picture.
mutate "$tmp/renamed.db" "ALTER TABLE block RENAME COLUMN stack_id TO stack_x"
shot --screenshot "$tmp/renamed.png" "$tmp/renamed.db"
rc=$?
[ "$rc" = 1 ] && [ ! -e "$tmp/renamed.png" ] && ! ls "$tmp"/renamed.png.tmp-* >/dev/null 2>&1
ok $? "a renamed column: exit 1 and no picture, no temporary left (exit $rc)"

# Every stack looping on itself: an error, exit 1, no picture.
mutate_from "$data/torch-allocator.db" "$tmp/loops.db" "UPDATE stack SET parent_id = id"
shot --screenshot "$tmp/loops.png" "$tmp/loops.db"
rc=$?
[ "$rc" = 1 ] && [ ! -e "$tmp/loops.png" ]
ok $? "stacks that loop on themselves: exit 1 and no picture (exit $rc)"

# An existing file: refused without --force, replaced with it.
echo keep >"$tmp/keep.png"
shot --screenshot "$tmp/keep.png" "$trace"
rc=$?
[ "$rc" = 1 ] && [ "$(cat "$tmp/keep.png")" = keep ] && grep -q -- "--force" "$tmp/err"
ok $? "an existing file is kept without --force (exit $rc)"
shot --force --screenshot "$tmp/keep.png" "$trace"
rc=$?
[ "$rc" = 0 ] && [ "$(head -c 4 "$tmp/keep.png" | tail -c 3)" = PNG ]
ok $? "--force replaces it with a picture (exit $rc)"

# Not regular files: never replaced, even with --force.
mkfifo "$tmp/fifo"
shot --force --screenshot "$tmp/fifo" "$trace"
rc=$?
[ "$rc" = 1 ] && [ -p "$tmp/fifo" ]
ok $? "a FIFO is not replaced (exit $rc)"
shot --force --screenshot /dev/full "$trace"
rc=$?
[ "$rc" = 1 ] && [ -c /dev/full ]
ok $? "/dev/full is not replaced (exit $rc)"

# The trace itself.
cp "$trace" "$tmp/self.db"
shot --force --screenshot "$tmp/self.db" "$tmp/self.db"
rc=$?
cmp -s "$trace" "$tmp/self.db" && [ "$rc" = 1 ]
ok $? "the trace is never written onto (exit $rc)"

# Writing fails: exit 1.
mkdir "$tmp/ro" && chmod 500 "$tmp/ro"
shot --screenshot "$tmp/ro/x.png" "$trace"
rc=$?
if [ "$(id -u)" = 0 ]; then
  echo "ok 9 - # SKIP a read-only folder does not stop root"
  n=$((n + 1))
else
  [ "$rc" = 1 ] && [ ! -e "$tmp/ro/x.png" ]
  ok $? "a folder that cannot be written: exit 1 (exit $rc)"
fi
exit $failed

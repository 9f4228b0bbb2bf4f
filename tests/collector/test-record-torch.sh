#!/bin/sh
# SPDX-License-Identifier: MIT
# test-record-torch.sh — `vramscope record` merging PyTorch's allocator
# level without a GPU: a program that leaves a real snapshot (recorded on an
# H200, tests/data/snapshots/train.pickle) and its .info in the spool, as the
# PyTorch hook does, gets it imported onto its own process and GPU (by uuid),
# and the merged trace's `pytorch` row equals that run's memory_stats().
# The .info's "meta KEY VALUE" lines (the allocator's settings) land in
# the trace's meta, with the working directory.  Also: --torch=off sets no
# hook; a bad --torch value is a usage error (exit 2).
#
# Usage: test-record-torch.sh VRAMSCOPE SNAPSHOTS_DIR   (TAP output)
set -u
vramscope=$1 snaps=$2
. "$(dirname "$0")/../lib.sh"

cat >"$dir/prog.sh" <<EOS
printf 'pid %s\ndevice 0 GPU-00000000-0000-0000-0000-0000000000aa 1000 Test GPU\nmeta pytorch.memory_fraction.0 0.042\nmeta pytorch.alloc_conf expandable_segments:True,max_split_size_mb:128\nmeta pytorch.expandable_segments 1\n' \$\$ \
  >"\$VRAMSCOPE_SPOOL_DIR/torch-\$\$-000002.info"
cp "$snaps/oom.pickle" "\$VRAMSCOPE_SPOOL_DIR/torch-\$\$-000001.pickle"
cp "$snaps/train.pickle" "\$VRAMSCOPE_SPOOL_DIR/torch-\$\$-000002.pickle"
case "\$PYTHONPATH" in */python*) exit 3 ;; *) exit 4 ;; esac
EOS
"$vramscope" record -q -o "$dir/t.db" -- sh "$dir/prog.sh"; rc=$?
ok $([ $rc = 3 ] && echo 0 || echo 1) "the hook's folder is on PYTHONPATH and the exit status comes back (got $rc)"
res=$(python3 -c '
import json, sqlite3, sys
db = sqlite3.connect(sys.argv[1])
st = json.load(open(sys.argv[2]))["memory_stats"]
row = db.execute("SELECT s.peak_reserved_bytes, s.peak_allocated_bytes, s.final_reserved_bytes, s.final_allocated_bytes, s.alloc_count, s.failed_alloc_count FROM summary s JOIN allocator a ON a.id = s.allocator_id WHERE a.kind = \"pytorch\"").fetchall()
want = (st["reserved_bytes.all.peak"], st["requested_bytes.all.peak"], st["reserved_bytes.all.current"], st["requested_bytes.all.current"], st["allocation.all.allocated"], st["num_ooms"])
dev = db.execute("SELECT uuid, name FROM device").fetchall()
procs = db.execute("SELECT count(*) FROM process").fetchone()[0]
print(int(row == [want]), int(dev == [("GPU-00000000-0000-0000-0000-0000000000aa", "Test GPU")]), int(procs == 1))
' "$dir/t.db" "$snaps/train.json" 2>&1)
set -- $res
ok $([ "${1:-0}" = 1 ] && echo 0 || echo 1) "the newest snapshot of the process is merged: pytorch row = its memory_stats()"
ok $([ "${2:-0}" = 1 ] && echo 0 || echo 1) "its device is the GPU named by uuid in the .info"
ok $([ "${3:-0}" = 1 ] && echo 0 || echo 1) "its events go to the program's process row"

meta=$(python3 -c '
import sqlite3, sys
# pytorch.allocator_settings comes from the snapshot itself (its own dict);
# the rest from the .info, which the hook writes from what the program set.
rows = sqlite3.connect(sys.argv[1]).execute("SELECT key, value FROM meta WHERE (key LIKE \"pytorch.%\" AND key != \"pytorch.allocator_settings\") OR key = \"cwd\" ORDER BY key")
print(" ".join("%s=%s" % r for r in rows), end=" ")
' "$dir/t.db" 2>&1)
want="cwd=$(pwd) pytorch.alloc_conf=expandable_segments:True,max_split_size_mb:128 pytorch.expandable_segments=1 pytorch.memory_fraction.0=0.042 "
ok $([ "$meta" = "$want" ] && echo 0 || echo 1) "the allocator's settings from the .info and the working directory are in meta (got: $meta)"
snap=$(python3 -c '
import json, sqlite3, sys
v = sqlite3.connect(sys.argv[1]).execute("SELECT value FROM meta WHERE key = \"pytorch.allocator_settings\"").fetchone()
print(int(v is not None and "max_split_size" in json.loads(v[0])))
' "$dir/t.db" 2>&1)
ok $([ "$snap" = 1 ] && echo 0 || echo 1) "the snapshot's own allocator settings are in meta as JSON (got: $snap)"

"$vramscope" record -q --torch=off -o "$dir/off.db" -- sh -c 'case "$PYTHONPATH" in *vramscope*|*/python*) exit 3 ;; esac; exit 0'; rc=$?
ok $([ $rc = 0 ] && echo 0 || echo 1) "--torch=off puts no hook on PYTHONPATH"

"$vramscope" record --torch=maybe -o "$dir/bad.db" -- true 2>"$dir/bad.err"; rc=$?
ok $([ $rc = 2 ] && grep -q "auto, on or off" "$dir/bad.err" && [ ! -e "$dir/bad.db" ] && echo 0 || echo 1) "a bad --torch value: usage error, exit 2, nothing written"

echo "1..$n"
exit $failed

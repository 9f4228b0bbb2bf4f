#!/bin/sh
# SPDX-License-Identifier: MIT
# test-record-timings.sh — `vramscope record --timings` on a run that needs
# no GPU: the program leaves in record's spool what a PyTorch process
# leaves (a process trace written as the collector writes it, by
# vs-test-spool-writer, and an exit snapshot), so every post-run phase
# runs.  --timings must print each phase, the exit figures and the total
# against the program's run, keep the same figures in the trace's meta
# (record_PHASE_ns, the phases summing to record_post_run_ns), and change
# nothing else: without it, nothing is printed and no record_* key kept.
# Also: the snapshots of several processes, imported in parallel, give the
# trace importing them one after another gives.
#
# Usage: test-record-timings.sh VRAMSCOPE SPOOL_WRITER SNAPSHOTS_DIR   (TAP output)
set -u
vramscope=$1 writer=$2 snaps=$3
. "$(dirname "$0")/../lib.sh"
vs_trace_db_env "$vramscope"

# writer.sh, sourced by the programs below: write BATCHES ROWS runs the
# writer (a child of the program) until it committed BATCHES batches of
# ROWS rows and waits mid-batch, and kills it there.
cat >"$dir/writer.sh" <<EOS
write() {
  "$writer" - \$1 \$2 0 >"$dir/w.\$\$.out" &
  w=\$!
  i=0
  while ! grep -q mid-batch "$dir/w.\$\$.out" 2>/dev/null && [ \$i -lt 2000 ]; do sleep 0.1; i=\$((i + 1)); done
  kill -KILL \$w
}
EOS

# The writer commits 2 batches, then waits to be killed; the program
# kills it there and exits 0.
cat >"$dir/prog.sh" <<EOS
printf 'pid %s\ndevice 0 GPU-00000000-0000-0000-0000-0000000000aa 1000 Test GPU\ntiming take_ns 1234567\ntiming write_ns 2345678\n' \$\$ \
  >"\$VRAMSCOPE_SPOOL_DIR/torch-\$\$-000001.info"
cp "$snaps/train.pickle" "\$VRAMSCOPE_SPOOL_DIR/torch-\$\$-000001.pickle"
. "$dir/writer.sh"
write 2 5000
EOS

"$vramscope" record --timings -o "$dir/t.db" -- sh "$dir/prog.sh" >/dev/null 2>"$dir/t.err"
rc=$?
ok $([ $rc = 0 ] && [ -s "$dir/t.db" ] && echo 0 || echo 1) "record --timings writes the trace (exit $rc)"
missing=
for phase in "program run (start to exit)" "program exit after its last recorded event" \
  "symbolizing, beside the imports" "importing the allocator stream" "importing snapshots" \
  "appending stream tails" "symbolizing (waiting after the imports)" \
  "symbolizing the imported histories" "merging (copy)" "finalize: loading events" "finalize: sorting and pairing" \
  "finalize: series and levels" "finalize: blocks" "finalize: summary" "finalize: indexes" \
  "finalize: commit" "committing the file" "post-run total"; do
  grep -qF "  $phase " "$dir/t.err" || missing="$missing [$phase]"
done
ok $([ -z "$missing" ] && echo 0 || echo 1) "every post-run phase is printed${missing:+; missing:$missing}"
cat "$dir/t.err" | sed 's/^/# /'

# What the hook says its exit snapshot cost, printed and kept.
take=$(python3 -c 'import vs_trace_db,sys; print(vs_trace_db.connect(sys.argv[1]).execute("SELECT group_concat(value) FROM (SELECT value FROM meta WHERE key IN (\"record_exit_snapshot_take_ns\", \"record_exit_snapshot_write_ns\") ORDER BY key)").fetchone()[0])' "$dir/t.db" 2>&1)
ok $(grep -q "^ *taking the snapshot (_snapshot) *1.2 ms" "$dir/t.err" && grep -q "^ *writing it (pickle) *2.3 ms" "$dir/t.err" && [ "$take" = "1234567,2345678" ] && echo 0 || echo 1) \
  "the snapshot's own cost, as its .info says, is printed and kept ($take)"

# The meta keeps what was printed: one key per phase, the phases summing
# to the post-run total, each printed figure equal to its key's.
python3 - "$dir/t.db" "$dir/t.err" >"$dir/meta.out" 2>&1 <<'PY'
import re, sys, vs_trace_db
db = vs_trace_db.connect(sys.argv[1])
meta = dict(db.execute("SELECT key, CAST(value AS INTEGER) FROM meta WHERE key LIKE 'record%_ns'"))
printed = {}
for line in open(sys.argv[2]):
    m = re.match(r"  (\S.*?)\s+(\d+\.\d) ms", line)
    if m:
        printed[m.group(1)] = float(m.group(2))
def key(name):
    return "record_" + "_".join(re.findall(r"[a-z0-9]+", name.lower())) + "_ns"
extra = {"program run (start to exit)": "record_program_run_ns",
         "program exit after its last recorded event": "record_exit_after_last_event_ns",
         "symbolizing, beside the imports": "record_symbolizing_beside_the_imports_ns",
         "post-run total": "record_post_run_ns"}
bad = []
phases = [p for p in printed if p not in extra and not p.startswith("of which")]
for name, ms in printed.items():
    k = extra.get(name, key(name))
    if k not in meta:
        bad.append("no %s" % k)
    elif abs(meta[k] / 1e6 - ms) > 0.051:
        bad.append("%s: printed %.1f, meta %d" % (name, ms, meta[k]))
total = sum(meta[key(p)] for p in phases if key(p) in meta)
if total != meta.get("record_post_run_ns"):
    bad.append("phases sum to %d, post-run total %s" % (total, meta.get("record_post_run_ns")))
if len(phases) < 12:
    bad.append("only %d phases" % len(phases))
print("ok" if not bad else "; ".join(bad))
PY
ok $([ "$(cat "$dir/meta.out")" = ok ] && echo 0 || echo 1) "the trace's meta keeps each printed figure, the phases summing to the total ($(cat "$dir/meta.out"))"

# Without PyTorch's level there is nothing to symbolize beside: in turn.
"$vramscope" record --timings --torch=off -o "$dir/off.db" -- sh "$dir/prog.sh" >/dev/null 2>"$dir/off.err"
rc=$?
ok $([ $rc = 0 ] && grep -q "^  symbolizing  " "$dir/off.err" && ! grep -q "beside the imports" "$dir/off.err" && echo 0 || echo 1) \
  "--torch=off: the process traces are symbolized in turn, one phase (exit $rc)"

"$vramscope" record -o "$dir/plain.db" -- sh "$dir/prog.sh" >/dev/null 2>"$dir/plain.err"
rc=$?
keys=$(python3 -c 'import vs_trace_db,sys; print(vs_trace_db.connect(sys.argv[1]).execute("SELECT count(*) FROM meta WHERE key LIKE \"record%\"").fetchone()[0])' "$dir/plain.db" 2>&1)
ok $([ $rc = 0 ] && [ "$keys" = 0 ] && ! grep -q "timings\|post-run total" "$dir/plain.err" && echo 0 || echo 1) \
  "without --timings nothing is printed or kept (exit $rc, $keys record_* keys)"
same=$(python3 -c '
import sys, vs_trace_db
a, b = (vs_trace_db.connect(p) for p in sys.argv[1:])
q = ("SELECT device_id, allocator_id, alloc_count, peak_allocated_bytes, final_allocated_bytes,"
     " peak_reserved_bytes, final_reserved_bytes FROM summary ORDER BY device_id, allocator_id")
print(int(a.execute(q).fetchall() == b.execute(q).fetchall()))' "$dir/t.db" "$dir/plain.db" 2>&1)
ok $([ "$same" = 1 ] && echo 0 || echo 1) "with and without --timings the trace holds the same counts and peaks"

# Several processes' snapshots are imported at once, each in its own
# thread: the trace is the one importing them one after another gives.
cat >"$dir/many.sh" <<EOS
for k in 1 2 3; do
  pid=\$((\$\$ * 10 + k))
  printf 'pid %s\ndevice 0 GPU-00000000-0000-0000-0000-0000000000aa 1000 Test GPU\n' \$pid \
    >"\$VRAMSCOPE_SPOOL_DIR/torch-\$pid-000001.info"
done
cp "$snaps/train.pickle" "\$VRAMSCOPE_SPOOL_DIR/torch-\$((\$\$ * 10 + 1))-000001.pickle"
cp "$snaps/leak.pickle" "\$VRAMSCOPE_SPOOL_DIR/torch-\$((\$\$ * 10 + 2))-000001.pickle"
cp "$snaps/fragmentation.pickle" "\$VRAMSCOPE_SPOOL_DIR/torch-\$((\$\$ * 10 + 3))-000001.pickle"
. "$dir/writer.sh"
write 1 100
EOS
"$vramscope" record -q -o "$dir/par.db" -- sh "$dir/many.sh" 2>"$dir/par.err"
rc1=$?
VRAMSCOPE_IMPORT_THREADS=1 "$vramscope" record -q -o "$dir/seq.db" -- sh "$dir/many.sh" 2>"$dir/seq.err"
rc2=$?
same=$(python3 -c '
import sys, vs_trace_db
def rows(p):
    db = vs_trace_db.connect(p)
    ev = db.execute("SELECT d.uuid, a.kind, e.op, e.address, e.requested_bytes, e.block_bytes, e.ts - (SELECT min(ts) FROM alloc_event x WHERE x.allocator_id = e.allocator_id) FROM alloc_event e JOIN device d ON d.id = e.device_id JOIN allocator a ON a.id = e.allocator_id ORDER BY e.id").fetchall()
    n = db.execute("SELECT count(*) FROM allocator WHERE kind = \"pytorch\"").fetchone()[0]
    return ev, n
(a, na), (b, nb) = rows(sys.argv[1]), rows(sys.argv[2])
print(int(a == b and len(a) > 0), na, nb, len(a))' "$dir/par.db" "$dir/seq.db" 2>&1)
set -- $same
ok $([ $rc1 = 0 ] && [ $rc2 = 0 ] && [ "${1:-0}" = 1 ] && [ "${2:-0}" = 3 ] && echo 0 || echo 1) \
  "three processes' snapshots imported in parallel and one after another give the same events ($same)"

echo "1..$n"
exit $failed

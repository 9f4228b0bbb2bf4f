#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Where a trace's bytes go: each table with its indexes (SQLite's dbstat),
# rows, bytes per row, and the whole file per memory event, per kernel
# and per step.  Read-only on the trace.  In a compacted trace (schema 5)
# a table's column chunks are the table <name>_chunk, whose rows are the
# rows its chunks hold.
#
# Usage: bench/trace-size.sh TRACE [STEPS]
#   STEPS  training steps the trace recorded, for bytes per step
#
# To see what the current schema makes of a trace written by an older
# version, rewrite it the way `record` writes a trace (merge, then
# finalize) and measure the result:
#   mkdir spool && cp OLD.db spool/process-999999-1.db   (a pid not running)
#   vramscope recover spool -o new.db && bench/trace-size.sh new.db STEPS
set -euo pipefail
trace="${1:?usage: bench/trace-size.sh TRACE [STEPS]}"
steps="${2:-0}"
command -v sqlite3 > /dev/null || { echo "trace-size.sh: needs the sqlite3 shell" >&2; exit 1; }
[ -r "$trace" ] || { echo "trace-size.sh: cannot read $trace" >&2; exit 1; }

uri="file:$trace?mode=ro"
bytes=$(stat -c %s "$trace")
echo "file $trace: $bytes bytes, schema $(sqlite3 "$uri" 'PRAGMA user_version')," \
  "page $(sqlite3 "$uri" 'PRAGMA page_size') bytes, $(sqlite3 "$uri" 'PRAGMA freelist_count') free pages"
echo
echo "| table | rows | table bytes | index bytes | bytes/row |"
echo "|---|---|---|---|---|"
# Each b-tree under the table it belongs to (indexes by their table).
sqlite3 -separator ' ' "$uri" "
  SELECT m.tbl_name, sum(CASE WHEN m.type = 'table' THEN d.pgsize ELSE 0 END),
         sum(CASE WHEN m.type = 'index' THEN d.pgsize ELSE 0 END)
  FROM dbstat d JOIN sqlite_master m ON m.name = d.name
  GROUP BY m.tbl_name ORDER BY sum(d.pgsize) DESC" |
  while read -r table tbytes ibytes; do
    case $table in
      *_chunk) rows=$(sqlite3 "$uri" "SELECT coalesce(sum(row_count), 0) FROM \"$table\"") ;;
      *) rows=$(sqlite3 "$uri" "SELECT count(*) FROM \"$table\"") ;;
    esac
    per=$([ "$rows" -gt 0 ] && echo $(((tbytes + ibytes) / rows)) || echo "")
    if [ "$((tbytes + ibytes))" -ge 65536 ]; then
      echo "| \`$table\` | $rows | $tbytes | $ibytes | $per |"
    fi
  done
echo "(tables and indexes under 64 KiB together not listed)"
echo
if [ "$(sqlite3 "$uri" 'PRAGMA user_version')" -ge 5 ]; then
  rows () { sqlite3 "$uri" "SELECT coalesce(sum(row_count), 0) FROM ${1}_chunk"; }
  events=$(( $(rows mem_event) + $(rows alloc_event)
             + $(sqlite3 "$uri" "SELECT count(*) FROM pool_event") ))
  kernels=$(rows kernel_exec)
else
  events=$(sqlite3 "$uri" "SELECT (SELECT count(*) FROM mem_event) + (SELECT count(*) FROM alloc_event)
                           + (SELECT count(*) FROM pool_event)")
  kernels=$(sqlite3 "$uri" "SELECT count(*) FROM kernel")
fi
echo "memory_events $events kernels $kernels"
[ "$events" -gt 0 ] && echo "bytes_per_memory_event $((bytes / events))"
[ "$steps" -gt 0 ] && echo "bytes_per_step $((bytes / steps))"
exit 0

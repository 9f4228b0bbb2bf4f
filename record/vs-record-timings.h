/* SPDX-License-Identifier: MIT */
/* vs-record-timings.h — `vramscope record --timings`: the exit figures
 * read from the spool, and the report of each post-run phase (printed
 * and kept in the trace's meta).  The phases themselves are marked with
 * vs-timings.h as record and the finalizer run.
 */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "vs-timings.h"

/* The latest event time (CLOCK_REALTIME ns) in the traces of the spool,
 * -1 when none: when the program's recorded work ended. */
int64_t vs_record_last_event_ns (char **files, size_t n);

/* When the newest PyTorch snapshot of the spool was written (its mtime,
 * CLOCK_REALTIME ns), -1 when there is none; *take_ns and *write_ns get
 * what its .info says taking and writing it cost (-1: not said). */
int64_t vs_record_newest_snapshot_ns (const char *spool, int64_t *take_ns, int64_t *write_ns);

/* --timings: prints each post-run phase (wall ms, share of the post-run
 * total), the exit figures and the total against the program's own run,
 * and keeps them in the trace's meta as record_PHASE_ns.  program_ns is
 * the program's run (start to exit); after_last_ns and snapshot_ns the
 * time from its last recorded event to its exit and to its exit snapshot
 * (-1: unknown), take_ns and write_ns what taking and writing that
 * snapshot cost, as the hook measured them (-1: unknown); beside_ns how long the process traces' symbolization
 * ran beside the imports (-1: it did not), of which only the wait after
 * them is a phase; live_records the allocator stream records imported
 * while the program ran (-1: not followed), kept as
 * record_stream_live_records. */
void vs_record_report_timings (const VsTimings *t, int64_t program_ns, int64_t after_last_ns,
                               int64_t snapshot_ns, int64_t take_ns, int64_t write_ns,
                               int64_t beside_ns, int64_t live_records, const char *trace);

/* --timings: the allocator stream's rows its import handed to the
 * finalizer while the program ran (vs-fin-given.h) and the finalizer took
 * (0: none), coded_rows of them coded into chunks then, bytes the memory
 * they held; printed and kept in the trace's meta as record_given_rows,
 * record_given_coded_rows and record_given_bytes. */
void vs_record_report_given (const char *trace, int64_t rows, int64_t coded_rows, int64_t bytes);

/* SPDX-License-Identifier: MIT */
/* vs-ranks.h — the ranks of a distributed run compared: one row per rank,
 * the worst rank, the ranks that failed.
 *
 * A rank is a process that used a GPU: its row gives where it ran (trace,
 * job, host, rank, local rank, pid, device) and what it came to (peak
 * reserved and allocated and their times, failed requests and the first
 * of them).  The ranks may come from one trace holding every process of
 * the run (one `record` around the launcher) or from several traces (a
 * `record -o run-%q{RANK}.db` per rank), in any mix.  A process that used
 * several devices gives a row per device.  The devices a process used are
 * those of its allocators and its failed requests and, on a device where
 * no process has an allocator, those of its device-level events.
 *
 * Peaks are read from the traces' summaries (nothing is recomputed): of
 * everything on the rank's device (allocator "all", the default) or of one
 * allocator of the rank's own (e.g. "pytorch": that process's caching
 * allocator, exactly what its torch.cuda.memory_stats() says).  Summaries
 * are per device: when several processes of one trace used the same device
 * the "all" figures are the device's, shared by them, and the row says so
 * (shared_device); an allocator's figures are always the process's own.
 *
 * Failed requests count as the summary counts them (vs-summary.h): those
 * an allocator reported, and device-level failures of processes without a
 * PyTorch allocator (PyTorch retries its own after emptying its cache).
 */
#pragma once

#include "vs-trace.h"
#include "vs-table.h"

G_BEGIN_DECLS

typedef struct
{
  guint trace_index;  /* which of the traces compared */
  const char *trace;  /* its path as given (owned by the comparison) */
  const char *job_id; /* meta job_id of the trace, NULL when unknown */
  gint64 pid;
  const char *host;                    /* NULL when unknown */
  gint64 rank, local_rank, world_size; /* VS_UNKNOWN when unknown */
  gint64 exit_status;                  /* VS_UNKNOWN when unknown */
  gint64 device_idx;
  const char *device_uuid; /* NULL when unknown */
  gint64 capacity_bytes;   /* VS_UNKNOWN when unknown */
  gboolean shared_device;  /* another process of the trace used the device */
  gint64 peak_reserved_bytes, peak_reserved_time_ns;   /* VS_UNKNOWN when unknown */
  gint64 peak_allocated_bytes, peak_allocated_time_ns; /* VS_UNKNOWN when unknown */
  gint64 failed_alloc_count;
  gint64 first_failure_time_ns, first_failure_bytes; /* VS_UNKNOWN when none */
  gboolean worst;                                    /* the worst rank (see below) */
  /* The highest peak reserved among the process's own allocators on the
   * device (VS_UNKNOWN when it has none): what tells apart ranks that
   * share a device. */
  gint64 own_peak_reserved_bytes;
} VsRank;

typedef struct _VsRankComparison VsRankComparison;

/* Compares the ranks of traces[0..n_traces-1] (n_traces ≥ 1), the peaks
 * being of allocator (NULL or "all": everything on the device; else a name
 * such as "pytorch", "pool:0x…", "nvtx:<heap>", looked up among each
 * process's own allocators — a rank without one has unknown peaks).
 * Rows are ordered by rank (unknown last), then trace, pid and device.
 * The worst rank is the one whose peak reserved is the highest share of
 * its device's capacity (the highest peak in bytes when no capacity is
 * known); on a tie — ranks sharing a device — the one whose own
 * allocators reserved most, else the first in order.  Returns NULL with error set when a
 * trace cannot be read, naming it. */
VsRankComparison *vs_ranks_compare (VsTrace *const *traces, guint n_traces, const char *allocator,
                                    GError **error);

void vs_rank_comparison_free (VsRankComparison *c);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (VsRankComparison, vs_rank_comparison_free)

/* The rows, and one of them. */
guint vs_rank_comparison_get_n_ranks (const VsRankComparison *c);
const VsRank *vs_rank_comparison_get_rank (const VsRankComparison *c, guint i);

/* The worst rank's row, or NULL when no rank has a known peak. */
const VsRank *vs_rank_comparison_get_worst (const VsRankComparison *c);

/* The first rank in order that failed a request, or NULL. */
const VsRank *vs_rank_comparison_get_first_failed (const VsRankComparison *c);

/* How a rank is called in sentences: "rank 3", or "process 1234" when the
 * rank is unknown, followed by " of TRACE" when the comparison spans
 * several traces and the rank alone does not tell the rows apart.  Free
 * with g_free. */
char *vs_rank_comparison_dup_label (const VsRankComparison *c, const VsRank *r);

/* The rows as a table: trace, job_id, host, rank, local_rank, world_size,
 * pid, device, capacity_bytes, peak_reserved_bytes, peak_reserved_time_ns,
 * peak_allocated_bytes, peak_allocated_time_ns, failed_alloc_count,
 * first_failure_time_ns, first_failure_bytes, exit_status, mark (words
 * separated by spaces: "worst", "failed", "shared-device").  brief keeps
 * the columns a person compares, for text: trace, host, rank, local_rank,
 * device, peak_reserved_bytes, peak_reserved_time_ns,
 * peak_allocated_bytes, failed_alloc_count, first_failure_time_ns, mark. */
VsTable *vs_rank_comparison_table (const VsRankComparison *c, gboolean brief);

/* Appends the headline for people, two lines: who peaks highest and who
 * failed ("rank 1 on host b peaks highest: 3.52 GiB of 79.10 GiB (4 %);
 * rank 0 failed"; at most 8 failed ranks named, then "and N more"), and
 * the spread of peak reserved between ranks
 * ("spread of peak reserved over 2 ranks: 1.50 GiB (rank 0) to 3.52 GiB
 * (rank 1), max/min 2.35×"; "no spread of peak reserved: all 8 ranks at
 * 3.52 GiB"), when at least two ranks have a known peak. */
void vs_rank_comparison_write_headline (const VsRankComparison *c, GString *out);

G_END_DECLS

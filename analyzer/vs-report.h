/* SPDX-License-Identifier: MIT */
/* vs-report.h — the reports of `vramscope report`, as tables.
 *
 * Each report is defined once here and printed by the CLI as CSV or text;
 * the columns of every report are listed in docs/reports.md.
 */
#pragma once

#include "vs-trace.h"
#include "vs-table.h"

G_BEGIN_DECLS

typedef struct
{
  gint64 device_id;      /* device.id; 0 = every device */
  const char *allocator; /* allocator name ("pytorch", "pool:0x…"); NULL or "all" = all */
  guint buckets;         /* timeline: number of buckets (default 100) */
  gint64 from_ns;        /* timeline, peak, leaks: window start, VS_UNKNOWN = 0 */
  gint64 to_ns;          /* window end, excluded; VS_UNKNOWN = the trace's end (included);
                          * peak: the peak inside the window; leaks: those
                          * allocated inside it (before the trace: only
                          * without from_ns) */
  gboolean by_site;      /* peak, leaks: one row per site instead of per stack */
  gboolean user_stacks;  /* stack columns hold the user's own frames only */
} VsReportOptions;

/* Fills opts with the defaults: every device, all, 100 buckets, whole
 * trace, rows by stack, full stacks. */
void vs_report_options_init (VsReportOptions *opts);

/* The names of the reports, NULL-terminated, in the order the CLI lists
 * them. */
const char *const *vs_report_names (void);

/* A one-line description of report name, or NULL when it does not exist. */
const char *vs_report_describe (const char *name);

/* Builds report name on trace.  Returns NULL with error set on failure
 * (VS_TRACE_ERROR_INVALID_ARGUMENT for an unknown report name, a device
 * or allocator the trace does not have, or a bad timeline range). */
VsTable *vs_report_build (VsTrace *trace, const char *name, const VsReportOptions *opts,
                          GError **error);

/* Sets how table, built for report (a name of vs_report_names()), reads
 * as text: its key columns first (vs_table_set_text_order()), and a block
 * per row for `oom` (vs_table_set_text_blocks()).  vs_report_build() does
 * it; call it for a report's table built another way (ranks). */
void vs_report_set_text_layout (const char *report, VsTable *table);

G_END_DECLS

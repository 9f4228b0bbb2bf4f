/* SPDX-License-Identifier: MIT */
/* vs-report-text.c — how each report's table reads as text: which columns
 * are its key ones (shown first, kept longest when the width is short)
 * and whether it reads a block per row.  CSV and JSON keep the tables'
 * own column order.
 */
#include "vs-report.h"

#include <string.h>

static const char *const peak_order[] = { "bytes", "count", "site", NULL };
static const char *const leaks_order[] = {
  "bytes", "count", "site", "first_alloc_time_ns", "last_alloc_time_ns", NULL,
};
static const char *const timeline_order[] = {
  "from_ns",
  "to_ns",
  "max_allocated_bytes",
  "max_reserved_bytes",
  "last_allocated_bytes",
  "last_reserved_bytes",
  NULL,
};
static const char *const oom_order[] = {
  "time_ns", "requested_bytes", "cause", "site", NULL,
};
static const char *const fragmentation_order[] = {
  "instant",         "time_ns",        "free_bytes",      "largest_free_bytes",
  "requested_bytes", "reserved_bytes", "allocated_bytes", NULL,
};
static const char *const ranges_order[] = {
  "name",
  "start_ns",
  "duration_ns",
  "peak_allocated_bytes",
  "peak_reserved_bytes",
  "allocated_at_start_bytes",
  "allocated_at_end_bytes",
  NULL,
};
static const char *const kernels_order[] = { "name", "count", "total_ns", NULL };
static const char *const ranks_order[] = {
  "trace", "rank", "peak_reserved_bytes", "peak_allocated_bytes", "failed_alloc_count",
  "mark",  NULL,
};

static const struct
{
  const char *report;
  const char *const *order;
  gboolean blocks;
} layouts[] = {
  { "summary", NULL, FALSE },        { "peak", peak_order, FALSE },
  { "leaks", leaks_order, FALSE },   { "timeline", timeline_order, FALSE },
  { "oom", oom_order, TRUE },        { "fragmentation", fragmentation_order, FALSE },
  { "ranges", ranges_order, FALSE }, { "kernels", kernels_order, FALSE },
  { "ranks", ranks_order, FALSE },
};

void
vs_report_set_text_layout (const char *report, VsTable *table)
{
  g_return_if_fail (report != NULL && table != NULL);
  for (guint i = 0; i < G_N_ELEMENTS (layouts); i++)
    if (strcmp (layouts[i].report, report) == 0)
      {
        if (layouts[i].order != NULL)
          vs_table_set_text_order (table, layouts[i].order);
        vs_table_set_text_blocks (table, layouts[i].blocks);
      }
}

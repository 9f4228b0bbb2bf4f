/* SPDX-License-Identifier: MIT */
/* vs-whatif-private.h — what vs-whatif-plan.c needs of a plan's
 * internals (vs-whatif.c). */
#pragma once

#include "vs-whatif.h"

G_BEGIN_DECLS

/* The trace the plan's learning pass read. */
VsTrace *vs_whatif_plan_trace (const VsWhatifPlan *plan);

/* One replay from plan: alloc_conf under limit_bytes (as
 * VsWhatifSetting), reading the requests through trace (NULL: the plan's
 * own; another connection to the same file gives the same result).
 * Reads plan without changing it, so several threads may replay from it
 * at once, each on its own trace.  Fills out as vs_whatif_run does. */
gboolean vs_whatif_plan_replay (VsWhatifPlan *plan, VsTrace *trace, const char *alloc_conf,
                                gint64 limit_bytes, VsWhatifResult *out, GError **error);

G_END_DECLS

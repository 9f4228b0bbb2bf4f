/* SPDX-License-Identifier: MIT */
/* vs-oom-explain.h — why a request failed, in words.
 *
 * The one place where a failed allocation's cause and its wording are
 * decided: `report oom`, the viewer's Failed pane and the timeline's
 * tooltip over a failure all show what vs_oom_explain() says.  A failure
 * of a framework's pool (XLA's, CuPy's) is explained as its finding says
 * it (vs_framework_oom_classify()); any other as vs_oom_classify() says it
 * against the device's allocator settings.  The words are translated
 * (gettext, the "vramscope" domain) where a catalog is bound.
 */
#pragma once

#include "vs-oom.h"

G_BEGIN_DECLS

typedef struct
{
  VsOomCause cause;
  /* The allocator that failed as reports name it: a framework's pool
   * where the failure is one of its, otherwise the failure's own. */
  gint64 allocator_id;
  /* One sentence with numbers: the cause's evidence or, when the cause is
   * unknown, what would have fitted.  NULL only for a framework's failure
   * whose finding could not be read. */
  char *evidence;
} VsOomExplanation;

/* Explains failure o, one of device_failures (vs_oom_list() of o's device
 * with allocator 0: every failure of that device, device-level ones
 * included), under the device's allocator settings (read here).  Fills
 * *out; free what it holds with vs_oom_explanation_clear(). */
void vs_oom_explain (VsTrace *trace, const VsOom *o, const GPtrArray *device_failures,
                     VsOomExplanation *out);

/* Frees what *e holds (not e itself). */
void vs_oom_explanation_clear (VsOomExplanation *e);

/* The cause as a heading: "Cause: the device was full", "Cause: the
 * allocator’s limit", "Cause: fragmentation", "Cause unknown". */
const char *vs_oom_cause_title (VsOomCause cause);

/* The device's memory as CUDA reported it at o: "133.05 GiB free of
 * 139.80 GiB".  The total is the failure's own where it carries one,
 * otherwise the device's capacity; "unknown" stands for what the trace
 * does not know.  Newly allocated. */
char *vs_oom_device_memory_text (VsTrace *trace, const VsOom *o);

G_END_DECLS

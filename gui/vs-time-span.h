/* SPDX-License-Identifier: MIT */
/* vs-time-span.h — a span of trace time [begin, end) in ns since the
 * trace's start, as a boxed type for properties (the session's visible
 * range and selection).  An empty span (end <= begin) means "none". */
#pragma once

#include <glib-object.h>

G_BEGIN_DECLS

typedef struct
{
  gint64 begin;
  gint64 end;
} VsTimeSpan;

#define VS_TYPE_TIME_SPAN (vs_time_span_get_type ())
GType vs_time_span_get_type (void) G_GNUC_CONST;

VsTimeSpan *vs_time_span_copy (const VsTimeSpan *span);
void vs_time_span_free (VsTimeSpan *span);

/* Whether the span holds any time (end > begin). */
gboolean vs_time_span_is_empty (const VsTimeSpan *span);

/* Whether a and b are the same span (two NULLs are; empty spans equal
 * NULL). */
gboolean vs_time_span_equal (const VsTimeSpan *a, const VsTimeSpan *b);

/* A visible range as the timelines allow it: at least min_span long and,
 * when limit > 0, inside [0, limit] keeping its length where it fits (at
 * most limit).  The session and every chart clamp alike, so a range one
 * of them accepts the others keep as it is. */
void vs_time_span_clamp (VsTimeSpan *span, gint64 limit, gint64 min_span);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (VsTimeSpan, vs_time_span_free)

G_END_DECLS

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

G_DEFINE_AUTOPTR_CLEANUP_FUNC (VsTimeSpan, vs_time_span_free)

G_END_DECLS

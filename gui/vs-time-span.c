/* SPDX-License-Identifier: MIT */
/* vs-time-span.c — the boxed [begin, end) span of trace time. */
#include "vs-time-span.h"

G_DEFINE_BOXED_TYPE (VsTimeSpan, vs_time_span, vs_time_span_copy, vs_time_span_free)

/* See vs-time-span.h. */
VsTimeSpan *
vs_time_span_copy (const VsTimeSpan *span)
{
  g_return_val_if_fail (span != NULL, NULL);
  return g_memdup2 (span, sizeof *span);
}

/* See vs-time-span.h. */
void
vs_time_span_free (VsTimeSpan *span)
{
  g_free (span);
}

/* See vs-time-span.h. */
gboolean
vs_time_span_is_empty (const VsTimeSpan *span)
{
  return span == NULL || span->end <= span->begin;
}

/* See vs-time-span.h. */
void
vs_time_span_clamp (VsTimeSpan *span, gint64 limit, gint64 min_span)
{
  gint64 t0 = span->begin;
  gint64 len = MAX (span->end - span->begin, min_span);

  if (limit > 0)
    {
      len = MIN (len, limit);
      if (t0 < 0)
        t0 = 0;
      if (t0 + len > limit)
        t0 = limit - len;
    }
  span->begin = t0;
  span->end = t0 + len;
}

/* See vs-time-span.h. */
gboolean
vs_time_span_equal (const VsTimeSpan *a, const VsTimeSpan *b)
{
  if (vs_time_span_is_empty (a) || vs_time_span_is_empty (b))
    return vs_time_span_is_empty (a) == vs_time_span_is_empty (b);
  return a->begin == b->begin && a->end == b->end;
}

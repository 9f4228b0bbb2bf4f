/* SPDX-License-Identifier: MIT */
/* vs-time-format.c — human units for times in the viewer.
 *
 * Presentation only: every value shown was computed by the analyzer.
 */
#include "vs-time-format.h"

#include <math.h>

static gboolean event_order;

/* See vs-time-format.h. */
void
vs_time_format_set_event_order (gboolean on)
{
  event_order = on;
}

/* See vs-time-format.h. */
gint64
vs_time_format_min_span (void)
{
  return event_order ? 8 : 1000;
}

/* Decimals needed to show multiples of step (in unit ns per unit). */
static int
decimals_for (gint64 step, double unit)
{
  double s = step / unit;
  int d = 0;

  while (d < 9 && fabs (s * pow (10, d) - round (s * pow (10, d))) > 1e-6)
    d++;
  return d;
}

/* See vs-time-format.h. */
char *
vs_format_time_tick (gint64 t, gint64 step)
{
  double unit;
  const char *name;

  if (event_order)
    return g_strdup_printf ("#%" G_GINT64_FORMAT, t);
  if (step >= 100000000 || llabs (t) >= G_GINT64_CONSTANT (1000000000))
    unit = 1e9, name = "s";
  else if (step >= 100000 || llabs (t) >= 1000000)
    unit = 1e6, name = "ms";
  else if (step >= 100 || llabs (t) >= 1000)
    unit = 1e3, name = "µs";
  else
    unit = 1, name = "ns";
  return g_strdup_printf ("%.*f %s", decimals_for (step, unit), t / unit, name);
}

/* See vs-time-format.h. */
char *
vs_format_time (gint64 t)
{
  if (t < 0)
    return g_strdup ("—");
  if (event_order)
    return g_strdup_printf ("event #%" G_GINT64_FORMAT, t);
  if (t >= 1000000000)
    return g_strdup_printf ("%.6f s", t / 1e9);
  if (t >= 1000000)
    return g_strdup_printf ("%.3f ms", t / 1e6);
  if (t >= 1000)
    return g_strdup_printf ("%.3f µs", t / 1e3);
  return g_strdup_printf ("%" G_GINT64_FORMAT " ns", t);
}

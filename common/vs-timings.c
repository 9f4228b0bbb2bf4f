/* SPDX-License-Identifier: MIT */
/* vs-timings.c — wall-clock time per named phase (vs-timings.h). */
#include "vs-timings.h"
#include "vs-clock.h"

#include <assert.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

int64_t
vs_timings_now (void)
{
  return vs_clock_ns (CLOCK_MONOTONIC);
}

void
vs_timings_start (VsTimings *t)
{
  assert (t != NULL);
  memset (t, 0, sizeof *t);
  t->last_ns = vs_timings_now ();
}

void
vs_timings_add (VsTimings *t, const char *name, int64_t ns)
{
  assert (t != NULL && name != NULL);
  for (int i = 0; i < t->n; i++)
    if (strcmp (t->phase[i].name, name) == 0)
      {
        t->phase[i].ns += ns;
        return;
      }
  if (t->n == VS_TIMINGS_MAX)
    return;
  snprintf (t->phase[t->n].name, sizeof t->phase[t->n].name, "%s", name);
  t->phase[t->n].ns = ns;
  t->n++;
}

void
vs_timings_mark (VsTimings *t, const char *name)
{
  int64_t now = vs_timings_now ();
  vs_timings_add (t, name, now - t->last_ns);
  t->last_ns = now;
}

void
vs_timings_skip (VsTimings *t)
{
  t->last_ns = vs_timings_now ();
}

void
vs_timings_phase (VsTimings *t, const char *name)
{
  if (t != NULL)
    vs_timings_mark (t, name);
}

int64_t
vs_timings_total (const VsTimings *t)
{
  int64_t sum = 0;
  for (int i = 0; i < t->n; i++)
    sum += t->phase[i].ns;
  return sum;
}

void
vs_timings_print (const VsTimings *t, FILE *f)
{
  assert (t != NULL && f != NULL);
  int64_t total = vs_timings_total (t);
  for (int i = 0; i < t->n; i++)
    fprintf (f, "  %-42s %10.1f ms %5.1f %%\n", t->phase[i].name, t->phase[i].ns / 1e6,
             total > 0 ? 100.0 * (double)t->phase[i].ns / (double)total : 0.0);
}

/* SPDX-License-Identifier: MIT */
/* vs-progress.c — progress from a worker thread, reported on the
 * caller's main context (see vs-progress.h).
 */
#include "vs-progress.h"

#include <string.h>

/* See vs-progress.h. */
void
vs_progress_init (VsProgress *progress, VsDocumentProgressFunc func, gpointer data)
{
  progress->func = func;
  progress->data = data;
  progress->context = g_main_context_ref_thread_default ();
}

/* See vs-progress.h. */
void
vs_progress_clear (VsProgress *progress)
{
  g_clear_pointer (&progress->context, g_main_context_unref);
}

/* One report on its way to the caller's context: one allocation, its
 * text inline. */
typedef struct
{
  VsDocumentProgressFunc func;
  gpointer data;
  double fraction;
  char what[];
} ProgressCall;

static gboolean
progress_dispatch (gpointer p)
{
  ProgressCall *c = p;
  c->func (c->what, c->fraction, c->data);
  return G_SOURCE_REMOVE;
}

/* See vs-progress.h. */
void
vs_progress_report (const VsProgress *progress, const char *what, double fraction)
{
  ProgressCall *c;
  gsize len;

  if (progress == NULL || progress->func == NULL)
    return;
  len = strlen (what) + 1;
  c = g_malloc (sizeof (ProgressCall) + len);
  c->func = progress->func;
  c->data = progress->data;
  c->fraction = fraction;
  memcpy (c->what, what, len);
  g_main_context_invoke_full (progress->context, G_PRIORITY_DEFAULT, progress_dispatch, c, g_free);
}

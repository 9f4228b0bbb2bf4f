/* SPDX-License-Identifier: MIT */
/* vs-trace-close.c — a writer's last step when the trace is finalized:
 * bulk mode with the events gathered for the finalizer, and closing
 * through the finalizer (vs-trace-finalize.h).
 *
 * These are the writer's functions that need the finalizer; they live on
 * its side so that the writer (trace/writer), which the collector links,
 * needs nothing of it.
 */
#include "vs-trace-finalize-private.h"
#include "vs-trace-writer-private.h"

#include <assert.h>
#include <stdlib.h>

static int
gather_mem (void *data, int64_t id, const VsMemEvent *e)
{
  return vs_fin_add_mem_event (data, id, e);
}

static int
gather_alloc (void *data, int64_t id, const VsAllocEvent *e)
{
  return vs_fin_add_alloc_event (data, id, e);
}

static int
gather_pool (void *data, int64_t id, const VsPoolEvent *e)
{
  return vs_fin_add_pool_event (data, id, e);
}

/* Frees t and its arrays (NULL: nothing). */
static void
gather_drop (void *data)
{
  VsFinTrace *t = data;
  if (t == NULL)
    return;
  free (t->ev);
  free (t->bl);
  free (t);
}

static const VsWriterGather fin_gather
    = { .mem = gather_mem, .alloc = gather_alloc, .pool = gather_pool, .drop = gather_drop };

int
vs_writer_set_bulk (VsWriter *w)
{
  assert (w != NULL);
  bool empty = false;
  if (vs_writer_begin_bulk (w, &empty) < 0)
    return -1;
  /* Every event row passes through w: the finalizer takes them from
   * memory instead of reading them back (vs_fin_finalize_gathered).
   * Without the memory, it reads the tables. */
  VsFinTrace *t = empty ? calloc (1, sizeof *t) : NULL;
  if (t != NULL)
    vs_writer_set_gather (w, &fin_gather, t);
  return 0;
}

/* Commits and closes w, finalizing with *o first unless o is NULL; always
 * frees w. */
static int
close_writer (VsWriter *w, const VsFinalizeOptions *o, char *err, size_t errlen)
{
  assert (w != NULL);
  char msg[512] = "";
  int ret = vs_writer_end_rows (w);
  VsFinTrace *t = vs_writer_take_gathered (w);
  if (ret == 0 && o != NULL && t != NULL)
    ret = vs_fin_finalize_gathered (vs_writer_db (w), t, o, msg, sizeof msg);
  else if (ret == 0 && o != NULL)
    ret = vs_trace_finalize_with (vs_writer_db (w), o, msg, sizeof msg);
  gather_drop (t);
  return vs_writer_release (w, ret, msg[0] != '\0' ? msg : NULL, err, errlen);
}

int
vs_writer_close (VsWriter *w, bool finalize, VsProgressFunc progress, void *progress_data,
                 char *err, size_t errlen)
{
  VsFinalizeOptions o = { .progress = progress, .progress_data = progress_data };
  return close_writer (w, finalize ? &o : NULL, err, errlen);
}

int
vs_trace_close_finalized (VsWriter *w, const VsFinalizeOptions *o, char *err, size_t errlen)
{
  static const VsFinalizeOptions none = { 0 };
  return close_writer (w, o != NULL ? o : &none, err, errlen);
}

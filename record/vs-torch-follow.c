/* SPDX-License-Identifier: MIT */
/* vs-torch-follow.c — the spool's PyTorch allocator streams imported while
 * the program runs (see vs-torch-follow.h).
 *
 * One thread, one pass every interval: the spool is listed, a stream not
 * seen before gets its import (vs_stream_import_open, once its header is
 * written), and every import takes the records completed since its last
 * pass (vs_stream_import_step, one transaction).  A stream that is no
 * stream, or whose import fails (a full disk), is given up: its file is
 * removed and the stream is read again once the program has exited, where
 * its error is reported as it always was.  Nothing here prints.
 *
 * Workload: a training process writes some 10^4 allocator events a
 * second; a pass imports them in a few milliseconds, on a core the program
 * does not use (the GPU runs its work).
 */
#include "vs-torch-follow.h"
#include "vs-fin-given.h"

#include <stdio.h>
#include <sys/stat.h>

#include <glib.h>

#include "vs-window-live.h"

typedef struct
{
  long long pid;
  VsStreamImport *im; /* NULL once given up or taken */
  bool given_up;
  VsFinGiven *given; /* vs_torch_follow_keep_given's, until taken */
} VsFollowed;

struct VsTorchFollow
{
  char *spool;
  int interval_ms;
  GThread *thread;
  GMutex lock;
  GCond wake;
  bool stop;       /* under lock */
  GArray *streams; /* VsFollowed; the thread's until it is joined */
  int64_t records;
  bool gather;        /* VS_TORCH_FOLLOW_GATHER */
  VsWindowLive *live; /* record --window: imported records given back */
};

static VsFollowed *
find (VsTorchFollow *f, long long pid)
{
  for (guint k = 0; k < f->streams->len; k++)
    {
      VsFollowed *s = &g_array_index (f->streams, VsFollowed, k);
      if (s->pid == pid)
        return s;
    }
  return NULL;
}

/* Whether directories a and b are the same one. */
static bool
same_dir (const char *a, const char *b)
{
  struct stat sa, sb;
  return stat (a, &sa) == 0 && stat (b, &sb) == 0 && sa.st_dev == sb.st_dev
         && sa.st_ino == sb.st_ino;
}

/* The streams' header is 4096 bytes: shorter, its writer is not done
 * with it yet. */
enum
{
  STREAM_HEADER = 4096
};

/* One pass: new streams found, every import stepped. */
static void
follow_pass (VsTorchFollow *f)
{
  g_autoptr (GDir) d = g_dir_open (f->spool, 0, NULL);
  const char *name;
  long long pid;
  while ((name = vs_torch_stream_next (d, &pid)) != NULL)
    {
      VsFollowed *s = find (f, pid);
      if (s != NULL && (s->given_up || s->im == NULL))
        continue;
      char err[1024] = "";
      if (s == NULL)
        {
          g_autofree char *path = g_build_filename (f->spool, name, NULL);
          struct stat st;
          if (stat (path, &st) != 0 || st.st_size < STREAM_HEADER)
            continue; /* its process is writing the header */
          g_autofree char *stacks = g_strdup_printf ("%s/torch-%lld.stacks", f->spool, pid);
          g_autofree char *out = g_strdup_printf ("%s/torch-%lld.db", f->spool, pid);
          VsFollowed add = { .pid = pid };
          add.im = vs_stream_import_open (path, stacks, out, err, sizeof err);
          /* With a window the import is kept before its first step. */
          if (add.im != NULL && f->live != NULL
              && !vs_window_live_opened (f->live, add.im, err, sizeof err))
            {
              vs_stream_import_abort (add.im);
              add.im = NULL;
            }
          add.given_up = add.im == NULL;
          if (add.im != NULL && f->gather)
            vs_stream_import_gather (add.im);
          g_array_append_val (f->streams, add);
          s = &g_array_index (f->streams, VsFollowed, f->streams->len - 1);
          if (s->given_up)
            continue;
        }
      int64_t got = vs_stream_import_step (s->im, err, sizeof err);
      if (got < 0)
        {
          vs_stream_import_abort (s->im);
          s->im = NULL;
          s->given_up = true;
          continue;
        }
      f->records += got;
      if (f->live != NULL)
        {
          g_autofree char *path = g_build_filename (f->spool, name, NULL);
          vs_window_live_stepped (f->live, s->im, pid, path);
        }
    }
}

static gpointer
follow_thread (gpointer data)
{
  VsTorchFollow *f = data;
  g_mutex_lock (&f->lock);
  while (!f->stop)
    {
      g_mutex_unlock (&f->lock);
      follow_pass (f);
      g_mutex_lock (&f->lock);
      gint64 until = g_get_monotonic_time () + (gint64)f->interval_ms * 1000;
      while (!f->stop && g_cond_wait_until (&f->wake, &f->lock, until))
        ;
    }
  g_mutex_unlock (&f->lock);
  return NULL;
}

VsTorchFollow *
vs_torch_follow_start (const char *spool, int interval_ms, VsTorchFollowMode mode)
{
  g_return_val_if_fail (spool != NULL, NULL);
  VsTorchFollow *f = g_new0 (VsTorchFollow, 1);
  f->gather = mode == VS_TORCH_FOLLOW_GATHER;
  f->spool = g_strdup (spool);
  f->live = mode == VS_TORCH_FOLLOW_WINDOW ? vs_window_live_new () : NULL;
  f->interval_ms = MAX (interval_ms, 1);
  f->streams = g_array_new (FALSE, FALSE, sizeof (VsFollowed));
  g_mutex_init (&f->lock);
  g_cond_init (&f->wake);
  f->thread = g_thread_try_new ("vs-follow", follow_thread, f, NULL);
  if (f->thread == NULL)
    {
      vs_torch_follow_free (f);
      return NULL;
    }
  return f;
}

void
vs_torch_follow_stop (VsTorchFollow *f)
{
  g_return_if_fail (f != NULL);
  if (f->thread == NULL)
    return;
  g_mutex_lock (&f->lock);
  f->stop = true;
  g_cond_signal (&f->wake);
  g_mutex_unlock (&f->lock);
  g_thread_join (f->thread);
  f->thread = NULL;
}

VsStreamImport *
vs_torch_follow_take (VsTorchFollow *f, long long pid)
{
  g_return_val_if_fail (f != NULL && f->thread == NULL, NULL);
  VsFollowed *s = find (f, pid);
  if (s == NULL)
    return NULL;
  VsStreamImport *im = s->im;
  s->im = NULL;
  return im;
}

void
vs_torch_follow_keep_given (VsTorchFollow *f, long long pid, VsFinGiven *given)
{
  g_return_if_fail (f != NULL && f->thread == NULL);
  VsFollowed *s = find (f, pid);
  if (s == NULL)
    {
      vs_fin_given_free (given);
      return;
    }
  vs_fin_given_free (s->given);
  s->given = given;
}

VsFinGiven *
vs_torch_follow_take_given (VsTorchFollow *f, const char *trace)
{
  g_return_val_if_fail (f != NULL && f->thread == NULL && trace != NULL, NULL);
  g_autofree char *base = g_path_get_basename (trace);
  long long pid;
  int end = 0;
  if (sscanf (base, "torch-%lld.db%n", &pid, &end) != 1 || end == 0 || base[end] != '\0')
    return NULL;
  g_autofree char *expect = g_strdup_printf ("%s/torch-%lld.db", f->spool, pid);
  g_autofree char *dir = g_path_get_dirname (trace);
  VsFollowed *s = find (f, pid);
  if (s == NULL || !g_file_test (expect, G_FILE_TEST_EXISTS) || !same_dir (dir, f->spool))
    return NULL;
  VsFinGiven *g = s->given;
  s->given = NULL;
  return g;
}

int64_t
vs_torch_follow_records (const VsTorchFollow *f)
{
  return f ? f->records : 0;
}

void
vs_torch_follow_drop_imports (VsTorchFollow *f)
{
  g_return_if_fail (f != NULL);
  vs_torch_follow_stop (f);
  for (guint k = 0; k < f->streams->len; k++)
    {
      VsFollowed *s = &g_array_index (f->streams, VsFollowed, k);
      vs_stream_import_abort (s->im);
      s->im = NULL;
    }
}

void
vs_torch_follow_free (VsTorchFollow *f)
{
  if (f == NULL)
    return;
  vs_torch_follow_drop_imports (f);
  for (guint k = 0; k < f->streams->len; k++)
    vs_fin_given_free (g_array_index (f->streams, VsFollowed, k).given);
  g_array_unref (f->streams);
  vs_window_live_free (f->live);
  g_mutex_clear (&f->lock);
  g_cond_clear (&f->wake);
  g_free (f->spool);
  g_free (f);
}

/* SPDX-License-Identifier: MIT */
/* vs-torch-spool.c — the PyTorch allocator levels a run's processes left
 * in the spool (see vs-torch-stream.h): which of a process's stream and
 * snapshots is its level, the stream's import (the tail of one `record`
 * followed while the program ran, vs-torch-follow.c), and the stream's
 * events after a snapshot taken at a signal.
 */
#include "vs-torch-stream.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <glib.h>
#include <sqlite3.h>

#include "vs-spool-run.h"
#include "vs-fin-given.h"
#include "vs-trace-writer.h"
#include "vs-torch-follow.h"
#include "vs-torch-stream-private.h"

/* The final snapshot process pid left in spool, if any: a
 * torch-PID-SEQ.info saying `reason exit` or `reason signal` beside its
 * .pickle; *info (may be NULL) gets the path of that .info, or NULL. */
typedef enum
{
  FINAL_NONE,
  FINAL_AT_EXIT,
  FINAL_AT_SIGNAL
} VsFinalSnapshot;

static VsFinalSnapshot
final_snapshot (const char *spool, long long pid, char **info_out)
{
  VsFinalSnapshot found = FINAL_NONE;
  long long found_seq = -1;
  g_autofree char *found_info = NULL;
  g_autoptr (GDir) d = g_dir_open (spool, 0, NULL);
  const char *name;
  while (d != NULL && (name = g_dir_read_name (d)) != NULL)
    {
      long long p, seq;
      int end = 0;
      if (sscanf (name, "torch-%lld-%lld.info%n", &p, &seq, &end) != 2 || name[end] != '\0'
          || p != pid)
        continue;
      g_autofree char *info = g_build_filename (spool, name, NULL);
      g_autofree char *text = NULL;
      g_autofree char *base = g_strndup (info, strlen (info) - strlen (".info"));
      g_autofree char *pickle = g_strconcat (base, ".pickle", NULL);
      if (!g_file_get_contents (info, &text, NULL, NULL)
          || !g_file_test (pickle, G_FILE_TEST_IS_REGULAR))
        continue;
      VsFinalSnapshot this = strstr (text, "\nreason signal\n") ? FINAL_AT_SIGNAL
                             : strstr (text, "\nreason exit\n") ? FINAL_AT_EXIT
                                                                : FINAL_NONE;
      if (this > found || (this == found && this != FINAL_NONE && seq > found_seq))
        {
          found = this;
          found_seq = seq;
          g_free (found_info);
          found_info = g_strdup (info);
        }
    }
  if (info_out)
    *info_out = g_steal_pointer (&found_info);
  return found;
}

/* True when process pid's stream is its allocator level whatever
 * snapshots it left: its .info says PyTorch recorded no history, so the
 * stream's own stacks are the only ones (`history 0`). */
static bool
stream_is_level (const char *spool, long long pid)
{
  g_autofree char *info = g_strdup_printf ("%s/torch-%lld.stream.info", spool, pid);
  g_autofree char *text = NULL;
  return g_file_get_contents (info, &text, NULL, NULL) && strstr (text, "\nhistory 0\n") != NULL;
}

/* A process's stream in the spool, and the import of it beside it. */
typedef struct
{
  long long pid;
  char *stream; /* spool/torch-PID.stream */
  char *trace;  /* spool/torch-PID.db */
} SpoolStream;

/* The next process's stream of the spool read through d (spool: its
 * path) into *s, after freeing the paths of the one before; false, with
 * none left to free, at the end. */
static bool
next_stream (GDir *d, const char *spool, SpoolStream *s)
{
  const char *name = vs_torch_stream_next (d, &s->pid);

  g_free (s->stream);
  g_free (s->trace);
  s->stream = name != NULL ? g_build_filename (spool, name, NULL) : NULL;
  s->trace = name != NULL ? g_strdup_printf ("%s/torch-%lld.db", spool, s->pid) : NULL;
  return name != NULL;
}

/* Removes s's import: what an import of the process's stream left
 * (record followed it while the program ran, or a killed record or
 * recover did), when its final snapshot is taken instead. */
static void
drop_stream_import (const SpoolStream *s, VsTorchFollow *follow)
{
  VsStreamImport *im = follow ? vs_torch_follow_take (follow, s->pid) : NULL;
  vs_stream_import_abort (im);
  unlink (s->trace);
}

int
vs_torch_stream_import_spool (const char *spool, const char *host, bool every,
                              VsTorchFollow *follow, bool *keep)
{
  g_return_val_if_fail (spool != NULL && keep != NULL, 0);
  g_autoptr (GDir) d = g_dir_open (spool, 0, NULL);
  SpoolStream s = { 0 };
  int imported = 0;
  while (next_stream (d, spool, &s))
    {
      /* Where PyTorch recorded its history, a final snapshot (it has the
       * history's stacks) is taken rather than the stream.  Otherwise the
       * stream and its stacks are the level: up to the final snapshot's
       * marker when the process exited normally (what Python frees as it
       * shuts down would hide what was live at exit), all of it when a
       * signal or nothing ended it; the snapshot's .info, with the
       * allocator's settings, ties it to its process.  With every (record
       * --window), the stream is the level in any case. */
      g_autofree char *final_info = NULL;
      VsFinalSnapshot final = final_snapshot (spool, s.pid, &final_info);
      if (final != FINAL_NONE && !every && !stream_is_level (spool, s.pid))
        {
          drop_stream_import (&s, follow);
          continue;
        }
      g_autofree char *stacks = g_strdup_printf ("%s/torch-%lld.stacks", spool, s.pid);
      g_autofree char *info
          = final_info ? g_strdup (final_info) : g_strconcat (s.stream, ".info", NULL);
      char err[1024] = "";
      int64_t events = 0;
      bool stopped = false;
      /* Followed while the program ran: only the tail is left to read. */
      VsStreamImport *im = follow ? vs_torch_follow_take (follow, s.pid) : NULL;
      int rc = -1;
      VsFinGiven *given = NULL;
      if (im != NULL && vs_stream_import_step (im, err, sizeof err) >= 0)
        rc = vs_stream_import_close (im, final == FINAL_AT_EXIT, &events, &stopped, &given, err,
                                     sizeof err);
      else
        vs_stream_import_abort (im);
      /* Not followed, or following failed: the whole stream, in one pass. */
      if (rc != 0)
        rc = vs_torch_stream_import (s.stream, stacks, s.trace, final == FINAL_AT_EXIT, &events,
                                     &stopped, err, sizeof err);
      /* Kept for the finalizer of the trace written into this import. */
      if (given != NULL)
        vs_torch_follow_keep_given (follow, s.pid, given);
      if (rc != 0 || !vs_spool_run_tie (s.trace, info, host, err, sizeof err))
        {
          fprintf (stderr,
                   "vramscope: PyTorch's allocator stream of process %lld could not be "
                   "read (%s); it is kept in %s\n",
                   s.pid, err, spool);
          *keep = true;
          /* A stream given back in part (record --window) lives on in its
           * import only. */
          if (vs_torch_stream_punched (s.stream) == 0)
            unlink (s.trace);
          continue;
        }
      if (stopped)
        fprintf (stderr,
                 "vramscope: PyTorch's allocator stream of process %lld reached its size "
                 "limit (VRAMSCOPE_TORCH_STREAM_MAX_MB) after %lld events: its allocator level "
                 "ends there\n",
                 s.pid, (long long)events);
      imported++;
    }
  return imported;
}

/* The stream file at path mapped read-only: its records and their count
 * (up to the first one not completely written).  NULL when it is no
 * stream this version reads. */
static const VsStreamRecord *
map_records (const char *path, size_t *n, void **map, size_t *map_len)
{
  int fd = open (path, O_RDONLY | O_CLOEXEC);
  struct stat st;
  if (fd < 0 || fstat (fd, &st) != 0 || st.st_size < STREAM_HEADER)
    {
      if (fd >= 0)
        close (fd);
      return NULL;
    }
  unsigned char *m = mmap (NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
  close (fd);
  uint32_t version = 0, rec_size = 0;
  if (m != MAP_FAILED)
    {
      memcpy (&version, m + 8, 4);
      memcpy (&rec_size, m + 12, 4);
    }
  if (m == MAP_FAILED || memcmp (m, STREAM_MAGIC, 8) != 0 || version != 1
      || rec_size != sizeof (VsStreamRecord))
    {
      if (m != MAP_FAILED)
        munmap (m, (size_t)st.st_size);
      return NULL;
    }
  const VsStreamRecord *recs = (const VsStreamRecord *)(m + STREAM_HEADER);
  size_t count = ((size_t)st.st_size - STREAM_HEADER) / sizeof (VsStreamRecord);
  size_t k = 0;
  while (k < count && recs[k].action != 0)
    k++;
  *n = k;
  *map = m;
  *map_len = (size_t)st.st_size;
  return recs;
}

/* The ids of PyTorch device index dev in the trace of w: its device row
 * and its allocator's (di[0] -1 when the trace does not know it). */
static void
device_ids (VsWriter *w, sqlite3_stmt *ids, int dev, int64_t di[2])
{
  sqlite3_reset (ids);
  sqlite3_bind_int (ids, 1, dev);
  if (sqlite3_step (ids) == SQLITE_ROW)
    {
      di[0] = sqlite3_column_int64 (ids, 0);
      di[1] = sqlite3_column_int64 (ids, 1);
    }
  else
    di[0] = -1; /* a device the snapshot does not know */
  (void)w;
}

/* Writes stream record r through w: an allocator event, or a failed
 * request (STREAM_OOM).  0 or -1. */
static int
write_record (VsWriter *w, const VsStreamRecord *r, int64_t process_id, const int64_t di[2])
{
  VsAllocEvent e = vs_stream_event_row (r, process_id, di[0], di[1]);

  if (r->action == STREAM_OOM)
    {
      VsFailedAlloc f = vs_torch_oom_row (&e, (int64_t)r->addr);

      return vs_writer_failed_alloc (w, &f);
    }
  return vs_writer_alloc_event (w, &e);
}

/* Appends to the raw trace at trace (a process's final snapshot, imported)
 * the stream's events that came after the snapshot: per device, those
 * after its last snapshot marker, written through the trace's writer
 * (vs_writer_open) in one transaction.  Returns the count appended, or -1
 * with err filled. */
static int64_t
append_tail (const char *stream, const char *trace, char *err, size_t errlen)
{
  static const char *process_sql = "SELECT id FROM process ORDER BY id LIMIT 1";
  static const char *ids_sql = "SELECT d.id, a.id FROM device d JOIN allocator a"
                               " ON a.device_id = d.id AND a.kind = 'pytorch' WHERE d.idx = ?1";
  size_t n = 0, map_len = 0;
  void *map = NULL;
  const VsStreamRecord *recs = map_records (stream, &n, &map, &map_len);
  if (recs == NULL)
    {
      snprintf (err, errlen, "%s is not a PyTorch allocator stream this version reads", stream);
      return -1;
    }
  int64_t last_marker[MAX_DEVICES];
  for (size_t d = 0; d < MAX_DEVICES; d++)
    last_marker[d] = -1;
  for (size_t i = 0; i < n; i++)
    if (recs[i].action == STREAM_SNAPSHOT && recs[i].device >= 0 && recs[i].device < MAX_DEVICES)
      last_marker[recs[i].device] = (int64_t)i;
  char werr[512] = "";
  VsWriter *w = vs_writer_open (trace, werr, sizeof werr);
  sqlite3 *db = w != NULL ? vs_writer_db (w) : NULL;
  sqlite3_stmt *ps = NULL, *ids = NULL;
  int64_t appended = 0, process_id = 0;
  int64_t dev_ids[MAX_DEVICES][2] = { { 0 } };
  bool ok = w != NULL && sqlite3_prepare_v2 (db, process_sql, -1, &ps, NULL) == SQLITE_OK
            && sqlite3_prepare_v2 (db, ids_sql, -1, &ids, NULL) == SQLITE_OK
            && sqlite3_step (ps) == SQLITE_ROW && vs_writer_hold (w, true, false) == 0;
  if (ok)
    process_id = sqlite3_column_int64 (ps, 0);
  for (size_t i = 0; ok && i < n; i++)
    {
      const VsStreamRecord *r = &recs[i];
      if (r->device < 0 || r->device >= MAX_DEVICES || last_marker[r->device] < 0
          || (int64_t)i <= last_marker[r->device] || r->action > STREAM_OOM)
        continue;
      int64_t *di = dev_ids[r->device];
      if (di[0] == 0)
        device_ids (w, ids, r->device, di);
      if (di[0] < 0)
        continue;
      ok = write_record (w, r, process_id, di) == 0;
      appended++;
    }
  if (!ok && w != NULL && db != NULL)
    snprintf (werr, sizeof werr, "%s",
              vs_writer_errmsg (w)[0] ? vs_writer_errmsg (w) : sqlite3_errmsg (db));
  sqlite3_finalize (ps);
  sqlite3_finalize (ids);
  /* Committed whole, or nothing of it. */
  if (w != NULL && vs_writer_hold (w, false, ok) != 0 && ok)
    {
      ok = false;
      snprintf (werr, sizeof werr, "%s", vs_writer_errmsg (w));
    }
  char cerr[512] = "";
  if (w != NULL && vs_writer_finish (w, cerr, sizeof cerr) != 0 && ok)
    {
      ok = false;
      snprintf (werr, sizeof werr, "%s", cerr);
    }
  if (!ok)
    snprintf (err, errlen, "cannot add to %s: %s", trace, werr);
  munmap (map, map_len);
  return ok ? appended : -1;
}

int
vs_torch_stream_append_tails (const char *spool, bool *keep)
{
  g_return_val_if_fail (spool != NULL && keep != NULL, 0);
  g_autoptr (GDir) d = g_dir_open (spool, 0, NULL);
  SpoolStream s = { 0 };
  int done = 0;
  while (next_stream (d, spool, &s))
    {
      /* At a normal exit nothing that matters follows the snapshot: what
       * Python frees while it shuts down would hide what was live at exit. */
      if (final_snapshot (spool, s.pid, NULL) != FINAL_AT_SIGNAL || stream_is_level (spool, s.pid))
        continue;
      if (!g_file_test (s.trace, G_FILE_TEST_IS_REGULAR))
        continue; /* the snapshot could not be imported: reported already */
      char err[1024] = "";
      if (append_tail (s.stream, s.trace, err, sizeof err) < 0)
        {
          fprintf (stderr,
                   "vramscope: the events of process %lld after its final PyTorch snapshot "
                   "could not be added (%s); they are kept in %s\n",
                   s.pid, err, spool);
          *keep = true;
          continue;
        }
      done++;
    }
  return done;
}

/* SPDX-License-Identifier: MIT */
/* vs-torch-stream.c — the PyTorch allocator stream a process left, as a
 * trace (see vs-torch-stream.h; the writer's side and the file format are
 * in collector/python/vs_torch_stream.cpp).
 *
 * Each record becomes one alloc_event of the device's `pytorch` allocator
 * (op = the record's action), an oom a failed_alloc, exactly as the
 * snapshot importer writes a history entry; a block's segment is found in
 * the segments the stream itself created (it starts before the first
 * allocation, so nothing is live before it).  A record's stack id names
 * a Python stack of the side file torch-PID.stacks (vs-torch-stacks.c),
 * written into the trace's stack tables the first time an event names
 * it.  The stream has no rounded block sizes: that column stays unknown.
 *
 * Workload: one record per allocator event, millions for a long run; the
 * file is mapped and walked once, rows go through the writer without a journal.
 * A stream that stopped at its size limit (the header's count) is read to
 * where it stopped and said so.
 *
 * The import is incremental (VsStreamImport): `record` follows each stream
 * while its process runs (vs-torch-follow.c), importing the records
 * complete so far in batches, so that only the tail is left once the
 * program exits; an import that goes on to the end writes exactly the
 * trace that one pass over the finished file writes.  Stopping at the last
 * snapshot marker, known only at the end, cuts the rows written after it
 * (they are numbered in writing order, so where the import stood at each
 * marker says what to keep).  Which stream of the spool is imported, and
 * how, is vs-torch-spool.c's.
 */
#include "vs-torch-stream.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <glib.h>
#include <sqlite3.h>

#include "vs-fin-given.h"
#include "vs-given-coder.h"
#include "vs-torch-stacks.h"
#include "vs-torch-stream-private.h"
#include "vs-trace-writer.h"

/* Reserved address ranges of one device: start → end, disjoint, adjacent
 * ranges joined (expandable segments map their pages one chunk at a
 * time). */
static gint
compare_addr (gconstpointer a, gconstpointer b, gpointer data)
{
  (void)data;
  guint64 x = GPOINTER_TO_SIZE (a), y = GPOINTER_TO_SIZE (b);
  return x < y ? -1 : x > y;
}

/* The range holding addr: its node, or NULL. */
static GTreeNode *
range_holding (GTree *t, guint64 addr)
{
  /* upper_bound: the first start > addr; the one before may hold addr. */
  GTreeNode *n = g_tree_upper_bound (t, GSIZE_TO_POINTER (addr));
  n = n ? g_tree_node_previous (n) : g_tree_node_last (t);
  if (n != NULL && GPOINTER_TO_SIZE (g_tree_node_value (n)) > addr)
    return n;
  return NULL;
}

static void
range_add (GTree *t, guint64 a, guint64 size)
{
  guint64 end = a + size;
  GTreeNode *prev = a > 0 ? range_holding (t, a - 1) : NULL;
  if (prev != NULL && GPOINTER_TO_SIZE (g_tree_node_value (prev)) == a)
    {
      a = GPOINTER_TO_SIZE (g_tree_node_key (prev));
      g_tree_remove (t, GSIZE_TO_POINTER (a));
    }
  GTreeNode *next = g_tree_lookup_node (t, GSIZE_TO_POINTER (end));
  if (next != NULL)
    {
      guint64 next_end = GPOINTER_TO_SIZE (g_tree_node_value (next));
      g_tree_remove (t, GSIZE_TO_POINTER (end));
      end = next_end;
    }
  g_tree_insert (t, GSIZE_TO_POINTER (a), GSIZE_TO_POINTER (end));
}

static void
range_sub (GTree *t, guint64 a, guint64 size)
{
  GTreeNode *n = range_holding (t, a);
  if (n == NULL)
    return;
  guint64 start = GPOINTER_TO_SIZE (g_tree_node_key (n));
  guint64 end = GPOINTER_TO_SIZE (g_tree_node_value (n));
  g_tree_remove (t, GSIZE_TO_POINTER (start));
  if (start < a)
    g_tree_insert (t, GSIZE_TO_POINTER (start), GSIZE_TO_POINTER (a));
  if (a + size < end)
    g_tree_insert (t, GSIZE_TO_POINTER (a + size), GSIZE_TO_POINTER (end));
}

static int64_t
range_find (GTree *t, guint64 addr)
{
  GTreeNode *n = range_holding (t, addr);
  return n ? (int64_t)GPOINTER_TO_SIZE (g_tree_node_key (n)) : VS_UNKNOWN;
}

typedef struct
{
  int64_t device_id, allocator_id;
  GTree *ranges;
} VsStreamDevice;

/* Where the import stood at the stream's last snapshot marker: what an
 * import up to that marker holds (the rows are numbered from 1 in the
 * order they were written, in a file of their own). */
typedef struct
{
  bool seen;
  int64_t read, last_ts, alloc_rows, failed_rows;
  int64_t max_device, max_allocator, max_frame, max_stack;
} VsStreamMark;

struct VsStreamImport
{
  char *path, *stacks_path, *out;
  int fd;
  unsigned char *map;
  size_t map_len;
  VsWriter *w;
  int64_t process_id, start_ns;
  VsTorchStacks *stacks;
  bool stacks_failed; /* said once: the events keep no stacks from there on */
  VsStreamDevice devs[MAX_DEVICES];
  size_t pos;                      /* records consumed */
  int64_t read, last_ts;           /* records read; the last event's time */
  int64_t alloc_rows, failed_rows; /* rows written */
  VsStreamMark mark;
  bool kept; /* vs_stream_import_keep(): its file outlives a failure */
  /* vs_stream_import_gather: the rows handed to the finalizer, coded. */
  VsFinGiven *given;
  VsGivenCoder *coder;
  size_t give_max; /* bytes the hand-over may hold; past them it is given up */
};

static const char *mark_sql
    = "SELECT (SELECT ifnull(max(id), 0) FROM device), (SELECT ifnull(max(id), 0) FROM allocator),"
      " (SELECT ifnull(max(id), 0) FROM frame), (SELECT ifnull(max(id), 0) FROM stack)";

/* Where the import stands now, with read records read, into *m.  0 or
 * -1. */
static int
read_mark (VsStreamImport *im, int64_t read, VsStreamMark *m)
{
  sqlite3_stmt *s = NULL;
  int rc = -1;
  if (sqlite3_prepare_v2 (vs_writer_db (im->w), mark_sql, -1, &s, NULL) == SQLITE_OK
      && sqlite3_step (s) == SQLITE_ROW)
    {
      *m = (VsStreamMark){ .seen = true,
                           .read = read,
                           .last_ts = im->last_ts,
                           .alloc_rows = im->alloc_rows,
                           .failed_rows = im->failed_rows,
                           .max_device = sqlite3_column_int64 (s, 0),
                           .max_allocator = sqlite3_column_int64 (s, 1),
                           .max_frame = sqlite3_column_int64 (s, 2),
                           .max_stack = sqlite3_column_int64 (s, 3) };
      rc = 0;
    }
  sqlite3_finalize (s);
  return rc;
}

/* Notes where the import stands at a snapshot marker: what came before
 * the marker, not the marker itself.  0 or -1. */
static int
take_mark (VsStreamImport *im)
{
  return read_mark (im, im->read - 1, &im->mark);
}

/* The trace's stack id for a record's stack id: VS_UNKNOWN without one or
 * when the stacks file does not hold it, -1 when the writer fails.  The
 * stacks file is read (again, from where it was left) when the id is not
 * known yet; the caller guarantees its record was complete before, so the
 * file holds the stack by then if it ever will. */
static int64_t
stack_id (VsStreamImport *im, uint32_t id, bool *reread)
{
  if (id == 0 || im->stacks_path == NULL || im->stacks_failed)
    return VS_UNKNOWN;
  if ((im->stacks == NULL || id > vs_torch_stacks_n_stacks (im->stacks)) && !*reread)
    {
      *reread = true;
      char why[1024] = "";
      if (im->stacks == NULL)
        im->stacks = vs_torch_stacks_new ();
      if (g_file_test (im->stacks_path, G_FILE_TEST_EXISTS)
          && !vs_torch_stacks_read_more (im->stacks, im->stacks_path, NULL, why, sizeof why))
        {
          im->stacks_failed = true;
          fprintf (stderr,
                   "vramscope: %s: PyTorch's allocator events are kept without their Python "
                   "stacks\n",
                   why);
          return VS_UNKNOWN;
        }
    }
  return vs_torch_stacks_trace_id (im->stacks, im->w, id);
}

/* Hands alloc_event row im->alloc_rows, written from ae, to the
 * finalizer (vs_stream_import_gather); what cannot be is given up. */
static void
give_row (VsStreamImport *im, const VsAllocEvent *ae)
{
  if (im->given == NULL || vs_fin_given_rows (im->given) < 0)
    return;
  int64_t v[VS_ALLOC_EVENT_COLUMNS];
  uint32_t nulls;
  vs_writer_alloc_event_row (ae, im->alloc_rows, v, &nulls);
  if (vs_fin_given_add_alloc (im->given, im->alloc_rows, ae) == 0)
    vs_given_coder_row (im->coder, im->given, v, nulls);
  /* A run too long to keep its events in memory: the finalizer reads
   * them back, as it did before. */
  if ((im->alloc_rows & 4095) == 0 && vs_fin_given_bytes (im->given) > im->give_max)
    vs_fin_given_drop (im->given);
}

/* The memory the rows handed to the finalizer may take:
 * $VRAMSCOPE_TORCH_FOLLOW_GIVE_MAX_MB, else a quarter of the machine's
 * memory (the finalizer needs as much again once the program is done). */
static size_t
give_max_bytes (void)
{
  const char *env = getenv ("VRAMSCOPE_TORCH_FOLLOW_GIVE_MAX_MB");
  if (env != NULL && env[0] != '\0')
    return (size_t)g_ascii_strtoull (env, NULL, 10) << 20;
  long pages = sysconf (_SC_PHYS_PAGES), page = sysconf (_SC_PAGESIZE);
  return pages > 0 && page > 0 ? (size_t)pages / 4 * (size_t)page : (size_t)4 << 30;
}

/* Writes record r as an event (see the file comment).  0 or -1. */
static int
import_record (VsStreamImport *im, const VsStreamRecord *r, bool *reread)
{
  if (r->action == STREAM_SNAPSHOT)
    return take_mark (im);
  if (r->action > STREAM_OOM || r->device < 0 || r->device >= MAX_DEVICES)
    return 0;
  VsWriter *w = im->w;
  VsStreamDevice *d = &im->devs[r->device];
  if (d->ranges == NULL)
    {
      VsDevice dv = { .idx = r->device, .total_bytes = VS_UNKNOWN };
      d->device_id = vs_writer_add_device (w, &dv);
      VsAllocator al = { .device_id = d->device_id,
                         .process_id = im->process_id,
                         .kind = "pytorch",
                         .name = "pytorch",
                         .handle = VS_UNKNOWN };
      d->allocator_id = d->device_id > 0 ? vs_writer_add_allocator (w, &al) : -1;
      d->ranges = g_tree_new_full (compare_addr, NULL, NULL, NULL);
      if (d->allocator_id <= 0)
        return -1;
    }
  im->last_ts = r->ts_ns;
  VsAllocEvent ae = vs_stream_event_row (r, im->process_id, d->device_id, d->allocator_id);

  ae.range_id = VS_UNKNOWN;
  if ((ae.stack_id = stack_id (im, r->reserved, reread)) == -1)
    return -1;
  if (r->action == STREAM_OOM)
    {
      VsFailedAlloc fa = vs_torch_oom_row (&ae, (int64_t)r->addr);

      im->failed_rows++;
      return vs_writer_failed_alloc (w, &fa);
    }
  switch (ae.op)
    {
    case VS_ALLOC_OP_SEGMENT_ALLOC:
    case VS_ALLOC_OP_SEGMENT_MAP:
      range_add (d->ranges, r->addr, r->size);
      ae.segment_address = (int64_t)r->addr;
      break;
    case VS_ALLOC_OP_SEGMENT_FREE:
    case VS_ALLOC_OP_SEGMENT_UNMAP:
      range_sub (d->ranges, r->addr, r->size);
      ae.segment_address = (int64_t)r->addr;
      break;
    default:
      ae.segment_address = range_find (d->ranges, r->addr);
      break;
    }
  im->alloc_rows++;
  if (vs_writer_alloc_event (w, &ae) != 0)
    return -1;
  give_row (im, &ae);
  return 0;
}

/* Maps the stream file as far as it is long now (it grows while its
 * process runs): shared, so records completed after this are seen.  0,
 * or -1 with err filled. */
static int
map_stream (VsStreamImport *im, char *err, size_t errlen)
{
  struct stat st;
  if (fstat (im->fd, &st) != 0)
    {
      snprintf (err, errlen, "cannot read %s: %s", im->path, strerror (errno));
      return -1;
    }
  if ((size_t)st.st_size < im->map_len)
    {
      /* Its process only ever grows it: another process of the same pid
       * made it again.  Read from its start, in one pass, once it ends. */
      snprintf (err, errlen, "%s was truncated while it was read", im->path);
      return -1;
    }
  if ((size_t)st.st_size == im->map_len)
    return 0;
  void *m = mmap (NULL, (size_t)st.st_size, PROT_READ, MAP_SHARED, im->fd, 0);
  if (m == MAP_FAILED)
    {
      snprintf (err, errlen, "cannot read %s: %s", im->path, strerror (errno));
      return -1;
    }
  if (im->map != NULL)
    munmap (im->map, im->map_len);
  im->map = m;
  im->map_len = (size_t)st.st_size;
  return 0;
}

/* A kept import (vs_stream_import_keep) carries its own state in its meta:
 * the checkpoint of its last step under "follow_" keys and its last
 * snapshot marker's under "follow_mark_" (the merge carries neither into
 * the run's trace). */
static const char *const mark_keys[]
    = { "seen",       "read",          "last_ts",   "alloc_rows", "failed_rows",
        "max_device", "max_allocator", "max_frame", "max_stack" };

static void
mark_fields (VsStreamMark *m, int64_t *v[9])
{
  int64_t *p[]
      = { NULL,           &m->read,          &m->last_ts,   &m->alloc_rows, &m->failed_rows,
          &m->max_device, &m->max_allocator, &m->max_frame, &m->max_stack };
  memcpy (v, p, sizeof p);
}

/* Writes m under prefix in the import's meta (in its open transaction).
 * 0 or -1. */
static int
write_mark (VsWriter *w, const char *prefix, VsStreamMark *m)
{
  int64_t *v[9];
  mark_fields (m, v);
  for (size_t k = 0; k < G_N_ELEMENTS (mark_keys); k++)
    {
      char key[64];
      snprintf (key, sizeof key, "%s%s", prefix, mark_keys[k]);
      if (vs_writer_set_meta_int (w, key, k == 0 ? (int64_t)m->seen : *v[k]) != 0)
        return -1;
    }
  return 0;
}

/* Reads the mark under prefix into *m: 1, 0 when the meta has none, -1
 * when it cannot be read. */
static int
read_mark_meta (sqlite3 *db, const char *prefix, VsStreamMark *m)
{
  static const char *sql = "SELECT CAST(value AS INTEGER) FROM meta WHERE key = ?1";
  sqlite3_stmt *s = NULL;
  if (sqlite3_prepare_v2 (db, sql, -1, &s, NULL) != SQLITE_OK)
    return -1;
  int64_t *v[9];
  mark_fields (m, v);
  int found = 0;
  for (size_t k = 0; k < G_N_ELEMENTS (mark_keys); k++)
    {
      char key[64];
      snprintf (key, sizeof key, "%s%s", prefix, mark_keys[k]);
      sqlite3_reset (s);
      sqlite3_bind_text (s, 1, key, -1, SQLITE_TRANSIENT);
      int step = sqlite3_step (s);
      if (step == SQLITE_DONE)
        continue;
      if (step != SQLITE_ROW)
        {
          found = -1;
          break;
        }
      found = 1;
      if (k == 0)
        m->seen = sqlite3_column_int64 (s, 0) != 0;
      else
        *v[k] = sqlite3_column_int64 (s, 0);
    }
  sqlite3_finalize (s);
  return found;
}

/* The checkpoint of a kept import's step: where it stands once the
 * records read so far are committed, and its last marker.  0 or -1. */
static int
write_checkpoint (VsStreamImport *im)
{
  VsStreamMark cp;
  if (read_mark (im, im->read, &cp) != 0 || write_mark (im->w, "follow_", &cp) != 0)
    return -1;
  return im->mark.seen ? write_mark (im->w, "follow_mark_", &im->mark) : 0;
}

/* The import of the stream at path into out, the file mapped and its
 * header read (*pid gets its process), no writer yet; NULL with err
 * filled when path is no stream this version reads. */
static VsStreamImport *
stream_open (const char *path, const char *stacks_path, const char *out, int64_t *pid, char *err,
             size_t errlen)
{
  VsStreamImport *im = g_new0 (VsStreamImport, 1);
  im->fd = open (path, O_RDONLY | O_CLOEXEC);
  im->path = g_strdup (path);
  im->stacks_path = g_strdup (stacks_path);
  im->out = g_strdup (out);
  if (im->fd < 0 || map_stream (im, err, errlen) != 0)
    {
      if (im->fd < 0)
        snprintf (err, errlen, "cannot read %s: %s", path, strerror (errno));
      vs_stream_import_abort (im);
      return NULL;
    }
  if (im->map_len < STREAM_HEADER)
    {
      snprintf (err, errlen, "%s is not a PyTorch allocator stream (too short)", path);
      vs_stream_import_abort (im);
      return NULL;
    }
  uint32_t version, rec_size;
  memcpy (&version, im->map + 8, 4);
  memcpy (&rec_size, im->map + 12, 4);
  memcpy (pid, im->map + 16, 8);
  memcpy (&im->start_ns, im->map + 24, 8);
  if (memcmp (im->map, STREAM_MAGIC, 8) != 0 || version != 1 || rec_size != sizeof (VsStreamRecord))
    {
      snprintf (err, errlen, "%s is not a PyTorch allocator stream this version reads", path);
      vs_stream_import_abort (im);
      return NULL;
    }
  im->last_ts = im->start_ns;
  return im;
}

/* The new raw trace out of stream im, process pid, its process row
 * written (vs_stream_import_open()); im, or NULL with err filled and im
 * freed. */
static VsStreamImport *
trace_create (VsStreamImport *im, int64_t pid, const char *out, char *err, size_t errlen)
{
  im->w = vs_writer_create (out, err, errlen);
  /* Someone reading the file while the program runs (it is in the spool
   * beside the process traces) delays a step, without failing it. */
  if (im->w != NULL)
    sqlite3_busy_timeout (vs_writer_db (im->w), 5000);
  /* Written once, by one process, and written again from the stream if
   * anything fails: no journal, no syncs.  Not the writer's bulk mode,
   * which keeps every event in memory for a finalizer this file never
   * sees (for the whole run, when record follows the stream). */
  if (im->w == NULL
      || sqlite3_exec (vs_writer_db (im->w), "PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF",
                       NULL, NULL, NULL)
             != SQLITE_OK)
    {
      if (im->w != NULL)
        snprintf (err, errlen, "cannot write %s: %s", out, sqlite3_errmsg (vs_writer_db (im->w)));
      vs_stream_import_abort (im);
      return NULL;
    }
  im->process_id = vs_writer_add_imported_process (im->w, pid, NULL, im->start_ns);
  /* Its start, known from the stream's header, from the first commit on:
   * the window applied while the program runs cuts the run on a grid
   * from the run's start (vs-window-rounds.h). */
  if (im->process_id <= 0 || vs_writer_set_meta_int (im->w, "start_ns", im->start_ns) != 0
      || vs_writer_commit (im->w) != 0)
    {
      snprintf (err, errlen, "cannot write %s: %s", out, vs_writer_errmsg (im->w));
      vs_stream_import_abort (im);
      return NULL;
    }
  return im;
}

int64_t
vs_stream_import_step (VsStreamImport *im, char *err, size_t errlen)
{
  g_return_val_if_fail (im != NULL && im->w != NULL, -1);
  if (map_stream (im, err, errlen) != 0)
    return -1;
  const VsStreamRecord *recs = (const VsStreamRecord *)(im->map + STREAM_HEADER);
  size_t n = (im->map_len - STREAM_HEADER) / sizeof (VsStreamRecord);
  /* The records complete now: up to the first whose action word, stored
   * last by its writer, is still 0 (the end, or one its process did not
   * finish).  Found first, so that the stacks file, read at most once
   * below, holds every stack they name. */
  size_t end = im->pos;
  while (end < n && __atomic_load_n (&recs[end].action, __ATOMIC_ACQUIRE) != 0)
    end++;
  bool reread = false;
  int rc = 0;
  for (size_t i = im->pos; i < end && rc == 0; i++)
    {
      VsStreamRecord r;
      memcpy (&r, &recs[i], sizeof r);
      im->read++;
      rc = import_record (im, &r, &reread);
    }
  if (rc == 0 && im->kept)
    rc = write_checkpoint (im);
  if (rc == 0)
    rc = vs_writer_commit (im->w);
  if (rc != 0)
    {
      snprintf (err, errlen, "cannot write %s: %s", im->out, vs_writer_errmsg (im->w));
      return -1;
    }
  int64_t got = (int64_t)(end - im->pos);
  im->pos = end;
  return got;
}

/* Removes what was written after mark m: what came at and after a
 * snapshot marker, or after a kept import's last checkpoint (rows are
 * numbered from 1 in writing order, in this file only).  0 or -1. */
static int
cut_to (VsStreamImport *im, const VsStreamMark *m)
{
  static const char *cut_sql[] = {
    "DELETE FROM alloc_event WHERE id > ?1", "DELETE FROM failed_alloc WHERE id > ?1",
    "DELETE FROM stack WHERE id > ?1",       "DELETE FROM frame WHERE id > ?1",
    "DELETE FROM allocator WHERE id > ?1",   "DELETE FROM device WHERE id > ?1",
  };
  const int64_t keep[] = { m->alloc_rows, m->failed_rows,   m->max_stack,
                           m->max_frame,  m->max_allocator, m->max_device };
  sqlite3 *db = vs_writer_db (im->w);
  if (vs_writer_commit (im->w) != 0 || sqlite3_exec (db, "BEGIN", NULL, NULL, NULL) != SQLITE_OK)
    return -1;
  for (size_t k = 0; k < G_N_ELEMENTS (cut_sql); k++)
    {
      sqlite3_stmt *s = NULL;
      bool ok = sqlite3_prepare_v2 (db, cut_sql[k], -1, &s, NULL) == SQLITE_OK
                && sqlite3_bind_int64 (s, 1, keep[k]) == SQLITE_OK
                && sqlite3_step (s) == SQLITE_DONE;
      sqlite3_finalize (s);
      if (!ok)
        return -1;
    }
  if (sqlite3_exec (db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK)
    return -1;
  im->read = m->read;
  im->last_ts = m->last_ts;
  im->alloc_rows = m->alloc_rows;
  im->failed_rows = m->failed_rows;
  if (im->given != NULL)
    vs_fin_given_cut (im->given, m->alloc_rows);
  return 0;
}

void
vs_stream_import_gather (VsStreamImport *im)
{
  g_return_if_fail (im != NULL && im->alloc_rows == 0);
  if (im->given != NULL)
    return;
  im->given = vs_fin_given_new ();
  im->coder = im->given != NULL ? vs_given_coder_new () : NULL;
  im->give_max = give_max_bytes ();
  if (im->coder == NULL)
    {
      vs_fin_given_free (im->given);
      im->given = NULL;
    }
}

int
vs_stream_import_close (VsStreamImport *im, bool upto_snapshot, int64_t *events, bool *stopped,
                        VsFinGiven **given, char *err, size_t errlen)
{
  g_return_val_if_fail (im != NULL && im->w != NULL, -1);
  if (given)
    *given = NULL;
  if (events)
    *events = 0;
  if (stopped)
    *stopped = false;
  int rc = 0;
  if (upto_snapshot && im->mark.seen)
    rc = cut_to (im, &im->mark);
  VsWriter *w = im->w;
  if (rc == 0
      && (vs_writer_set_meta (w, "source", "import") != 0
          || vs_writer_set_meta (w, "import_source", "pytorch-stream") != 0
          || vs_writer_set_meta (w, "clock", "CLOCK_REALTIME") != 0
          || vs_writer_set_meta_int (w, "start_ns", im->start_ns) != 0
          || vs_writer_set_meta_int (w, "end_ns", im->last_ts) != 0))
    rc = -1;
  if (rc != 0)
    {
      snprintf (err, errlen, "cannot write %s: %s", im->out,
                vs_writer_errmsg (w)[0] ? vs_writer_errmsg (w) : sqlite3_errmsg (vs_writer_db (w)));
      vs_stream_import_abort (im);
      return -1;
    }
  /* A kept import goes back to the journal every trace of the spool
   * has once its file is complete. */
  if (im->kept
      && (vs_writer_commit (w) != 0
          || sqlite3_exec (vs_writer_db (w), "PRAGMA journal_mode=DELETE", NULL, NULL, NULL)
                 != SQLITE_OK))
    {
      snprintf (err, errlen, "cannot write %s: %s", im->out, sqlite3_errmsg (vs_writer_db (w)));
      vs_stream_import_abort (im);
      return -1;
    }
  im->w = NULL;
  if (vs_writer_close (w, false, NULL, NULL, err, errlen) != 0)
    {
      if (!im->kept)
        unlink (im->out);
      vs_stream_import_abort (im);
      return -1;
    }
  uint64_t stopped_at = 0;
  memcpy (&stopped_at, im->map + 32, 8);
  if (events)
    *events = im->read;
  if (stopped)
    *stopped = stopped_at != 0;
  if (given != NULL && im->given != NULL && vs_fin_given_rows (im->given) >= 0)
    {
      *given = im->given;
      im->given = NULL;
    }
  vs_stream_import_abort (im);
  return 0;
}

int64_t
vs_stream_import_consumed (const VsStreamImport *im)
{
  g_return_val_if_fail (im != NULL, 0);
  return (int64_t)im->pos;
}

void
vs_stream_import_abort (VsStreamImport *im)
{
  if (im == NULL)
    return;
  /* A kept import's file stays: what a failed step left past its last
   * checkpoint is cut when it is resumed. */
  if (im->w != NULL)
    {
      vs_writer_close (im->w, false, NULL, NULL, NULL, 0);
      if (!im->kept)
        unlink (im->out);
    }
  if (im->map != NULL)
    munmap (im->map, im->map_len);
  if (im->fd >= 0)
    close (im->fd);
  vs_torch_stacks_free (im->stacks);
  vs_fin_given_free (im->given);
  vs_given_coder_free (im->coder);
  for (size_t k = 0; k < MAX_DEVICES; k++)
    if (im->devs[k].ranges)
      g_tree_destroy (im->devs[k].ranges);
  g_free (im->path);
  g_free (im->stacks_path);
  g_free (im->out);
  g_free (im);
}

int
vs_torch_stream_import (const char *path, const char *stacks_path, const char *out,
                        bool upto_snapshot, int64_t *events, bool *stopped, char *err,
                        size_t errlen)
{
  g_return_val_if_fail (path != NULL && out != NULL, -1);
  if (events)
    *events = 0;
  if (stopped)
    *stopped = false;
  /* A stream whose first records were imported and given back to the
   * disk while the program ran (record --window) goes on from its kept
   * import, which holds them. */
  int64_t punched = vs_torch_stream_punched (path);
  VsStreamImport *im = punched > 0 ? vs_stream_import_resume (path, stacks_path, out, err, errlen)
                                   : vs_stream_import_open (path, stacks_path, out, err, errlen);
  if (im == NULL)
    {
      if (punched > 0)
        {
          char why[1024];
          snprintf (why, sizeof why, "%s", err);
          snprintf (err, errlen,
                    "its first %lld records are only in %s, which cannot be read on: %s",
                    (long long)punched, out, why);
        }
      return -1;
    }
  if (vs_stream_import_step (im, err, errlen) < 0)
    {
      vs_stream_import_abort (im);
      return -1;
    }
  return vs_stream_import_close (im, upto_snapshot, events, stopped, NULL, err, errlen);
}

/* A kept import's journal: WAL, so that a commit is whole when record is
 * killed, without a sync (record's death or the program's is what is
 * guarded against, not the machine's); checkpointed every 4 MB and cut
 * back to that, so that the log does not grow with the run (the writer's
 * default lets it reach 256 MB). */
static const char *kept_sql = "PRAGMA journal_mode=WAL; PRAGMA synchronous=OFF;"
                              " PRAGMA wal_autocheckpoint=256; PRAGMA journal_size_limit=4194304";

int
vs_stream_import_keep (VsStreamImport *im, char *err, size_t errlen)
{
  g_return_val_if_fail (im != NULL && im->w != NULL, -1);
  sqlite3 *db = vs_writer_db (im->w);
  if (vs_writer_commit (im->w) != 0 || sqlite3_exec (db, kept_sql, NULL, NULL, NULL) != SQLITE_OK)
    {
      snprintf (err, errlen, "cannot write %s: %s", im->out, sqlite3_errmsg (db));
      return -1;
    }
  im->kept = true;
  if (write_checkpoint (im) != 0 || vs_writer_commit (im->w) != 0)
    {
      snprintf (err, errlen, "cannot write %s: %s", im->out, vs_writer_errmsg (im->w));
      return -1;
    }
  return 0;
}

/* A resumed import's devices, their allocators and the segments live at
 * its checkpoint, from what it wrote.  0 or -1. */
static int
restore_devices (VsStreamImport *im)
{
  static const char *devices_sql
      = "SELECT d.idx, d.id, a.id FROM device d JOIN allocator a ON a.device_id = d.id"
        " AND a.kind = 'pytorch' WHERE d.idx BETWEEN 0 AND ?1 ORDER BY d.id";
  static const char *segments_sql
      = "SELECT d.idx, e.op, e.address, e.requested_bytes FROM alloc_event e"
        " JOIN device d ON d.id = e.device_id WHERE e.op BETWEEN 4 AND 7 ORDER BY e.id";
  static const char *process_sql = "SELECT id FROM process ORDER BY id LIMIT 1";
  sqlite3 *db = vs_writer_db (im->w);
  sqlite3_stmt *s = NULL;
  if (sqlite3_prepare_v2 (db, process_sql, -1, &s, NULL) != SQLITE_OK
      || sqlite3_step (s) != SQLITE_ROW)
    {
      sqlite3_finalize (s);
      return -1;
    }
  im->process_id = sqlite3_column_int64 (s, 0);
  sqlite3_finalize (s);
  if (sqlite3_prepare_v2 (db, devices_sql, -1, &s, NULL) != SQLITE_OK)
    return -1;
  sqlite3_bind_int (s, 1, MAX_DEVICES - 1);
  while (sqlite3_step (s) == SQLITE_ROW)
    {
      VsStreamDevice *d = &im->devs[sqlite3_column_int (s, 0)];
      if (d->ranges != NULL)
        continue;
      d->device_id = sqlite3_column_int64 (s, 1);
      d->allocator_id = sqlite3_column_int64 (s, 2);
      d->ranges = g_tree_new_full (compare_addr, NULL, NULL, NULL);
    }
  if (sqlite3_finalize (s) != SQLITE_OK
      || sqlite3_prepare_v2 (db, segments_sql, -1, &s, NULL) != SQLITE_OK)
    return -1;
  int step;
  while ((step = sqlite3_step (s)) == SQLITE_ROW)
    {
      int idx = sqlite3_column_int (s, 0);
      if (idx < 0 || idx >= MAX_DEVICES || im->devs[idx].ranges == NULL)
        continue;
      int op = sqlite3_column_int (s, 1);
      guint64 addr = (guint64)sqlite3_column_int64 (s, 2);
      guint64 size = (guint64)sqlite3_column_int64 (s, 3);
      if (op == VS_ALLOC_OP_SEGMENT_ALLOC || op == VS_ALLOC_OP_SEGMENT_MAP)
        range_add (im->devs[idx].ranges, addr, size);
      else
        range_sub (im->devs[idx].ranges, addr, size);
    }
  sqlite3_finalize (s);
  return step == SQLITE_DONE ? 0 : -1;
}

/* The kept import out of stream im, where its last checkpoint stands
 * (vs_stream_import_resume()); im, or NULL with err filled and im freed. */
static VsStreamImport *
trace_resume (VsStreamImport *im, const char *path, const char *out, char *err, size_t errlen)
{
  char why[512] = "";
  im->w = vs_writer_open (out, why, sizeof why);
  if (im->w == NULL)
    {
      snprintf (err, errlen, "cannot read %s: %s", out, why);
      vs_stream_import_abort (im);
      return NULL;
    }
  /* From here on its file is never removed: it holds what the stream
   * gave back. */
  im->kept = true;
  sqlite3 *db = vs_writer_db (im->w);
  sqlite3_busy_timeout (db, 5000);
  VsStreamMark cp = { 0 };
  int found = -1;
  if (sqlite3_exec (db, kept_sql, NULL, NULL, NULL) == SQLITE_OK
      && (found = read_mark_meta (db, "follow_", &cp)) == 1
      && read_mark_meta (db, "follow_mark_", &im->mark) >= 0 && cut_to (im, &cp) == 0
      && restore_devices (im) == 0)
    {
      size_t n = (im->map_len - STREAM_HEADER) / sizeof (VsStreamRecord);
      if (cp.read >= 0 && (size_t)cp.read <= n)
        {
          im->pos = (size_t)cp.read;
          return im;
        }
      snprintf (err, errlen, "%s says %lld records of %s were imported, which has %zu", out,
                (long long)cp.read, path, n);
    }
  else if (found == 0)
    snprintf (err, errlen, "%s is no import of %s that can be resumed", out, path);
  else
    snprintf (err, errlen, "cannot read %s: %s", out, sqlite3_errmsg (db));
  vs_stream_import_abort (im);
  return NULL;
}

/* The stream at path opened, its header read, then its trace out
 * created, or resumed when resume is set. */
static VsStreamImport *
stream_start (const char *path, const char *stacks_path, const char *out, bool resume, char *err,
              size_t errlen)
{
  int64_t pid = 0;
  VsStreamImport *im = stream_open (path, stacks_path, out, &pid, err, errlen);
  if (im == NULL)
    return NULL;
  return resume ? trace_resume (im, path, out, err, errlen)
                : trace_create (im, pid, out, err, errlen);
}

VsStreamImport *
vs_stream_import_open (const char *path, const char *stacks_path, const char *out, char *err,
                       size_t errlen)
{
  g_return_val_if_fail (path != NULL && out != NULL, NULL);
  return stream_start (path, stacks_path, out, false, err, errlen);
}

VsStreamImport *
vs_stream_import_resume (const char *path, const char *stacks_path, const char *out, char *err,
                         size_t errlen)
{
  g_return_val_if_fail (path != NULL && out != NULL, NULL);
  return stream_start (path, stacks_path, out, true, err, errlen);
}

int64_t
vs_torch_stream_punched (const char *path)
{
  g_return_val_if_fail (path != NULL, 0);
  int fd = open (path, O_RDONLY | O_CLOEXEC);
  uint64_t punched = 0;
  if (fd >= 0 && pread (fd, &punched, sizeof punched, STREAM_PUNCHED_AT) != sizeof punched)
    punched = 0;
  if (fd >= 0)
    close (fd);
  return punched > INT64_MAX ? 0 : (int64_t)punched;
}

bool
vs_torch_stream_name_pid (const char *name, long long *pid)
{
  int end = 0;

  return sscanf (name, "torch-%lld.stream%n", pid, &end) == 1 && end > 0 && name[end] == '\0';
}

const char *
vs_torch_stream_next (GDir *dir, long long *pid)
{
  const char *name;

  while (dir != NULL && (name = g_dir_read_name (dir)) != NULL)
    if (vs_torch_stream_name_pid (name, pid))
      return name;
  return NULL;
}

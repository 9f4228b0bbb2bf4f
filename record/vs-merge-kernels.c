/* SPDX-License-Identifier: MIT */
/* vs-merge-kernels.c — a process trace's kernel executions coded straight
 * into the merged trace's kernel_exec chunks, on a thread of their own,
 * while the finalizer works on the allocator events.
 *
 * For a merged trace that is compacted right after (a row sink is
 * active, vs-row-sink.h) and whose kernels all come from one process
 * trace, copying 10^5 executions into kernel_exec and having compaction
 * read them back and code them is replaced by one pass over the input's
 * kernel_exec, in its order (start, then id): each execution gets the
 * merged id the copy would give it (the next kernel ids, in that order)
 * and its process, GPU and configuration ids mapped as vs_map() maps them,
 * and every VS_CHUNK_ROWS rows are coded into the chunk compaction would
 * code of them.  The finalizer writes the chunks into its transaction
 * before it commits (VsFinalizeOptions.beside), kernel_exec staying empty
 * (compaction keeps chunks whose table is empty), and raises meta end_ns
 * to the latest execution's end, which the finalizer would find in the
 * table.  The trace is the one the copy gives.
 */
#include "vs-merge-private.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vs-chunk.h"
#include "vs-coded-chunks.h"
#include "vs-row-sink.h"
#include "vs-trace-compact.h"

struct VsKernelsAside
{
  char *path;
  int64_t first_id; /* the merged id of its first execution */
  VsIdMap process, device, config;
  pthread_t thread;
  bool started, joined;
  VsCodedChunks chunks;
  int64_t max_end;
  bool has_end;
  int rc;
  char err[256];
};

/* The columns of kernel_exec (schemas/trace.sql). */
enum
{
  K_START,
  K_ID,
  K_DURATION,
  K_PROCESS,
  K_DEVICE,
  K_CONTEXT,
  K_STREAM,
  K_CORRELATION,
  K_CONFIG,
  K_COLS
};

static const char *select_sql
    = "SELECT start_ns, duration_ns, process_id, device_id, context, stream, correlation,"
      " config_id FROM kernel_exec ORDER BY start_ns, id";

/* vs_map()'s answer for column c of s: the mapped id, or NULL. */
static void
map_column (sqlite3_stmt *s, int c, const VsIdMap *m, int64_t *v, uint8_t *null)
{
  int64_t id = sqlite3_column_type (s, c) == SQLITE_INTEGER
                   ? vs_merge_idmap_get (m, sqlite3_column_int64 (s, c))
                   : VS_UNKNOWN;
  *null = id == VS_UNKNOWN;
  *v = id == VS_UNKNOWN ? 0 : id;
}

/* Codes the first n rows of ch (room for VS_CHUNK_ROWS) into a chunk. */
static int
code_chunk (VsKernelsAside *a, VsChunkCodec *codec, VsChunk *ch, int n)
{
  uint8_t *zone = NULL, *data = NULL;
  size_t zone_len, data_len;

  vs_chunk_pack (ch, n);
  int rc = vs_chunk_encode (codec, ch, &data, &data_len, &zone, &zone_len, a->err, sizeof a->err);
  ch->nrows = VS_CHUNK_ROWS;
  if (rc < 0)
    {
      free (zone);
      free (data);
      return -1;
    }
  if (vs_coded_chunks_take (&a->chunks, n, zone, zone_len, data, data_len) < 0)
    {
      snprintf (a->err, sizeof a->err, "out of memory");
      return -1;
    }
  return 0;
}

static void *
code_kernels (void *data)
{
  VsKernelsAside *a = data;
  sqlite3 *db = NULL;
  sqlite3_stmt *s = NULL;
  VsChunkCodec *codec = vs_chunk_codec_new ();
  VsChunk ch = { K_COLS, VS_CHUNK_ROWS, malloc ((size_t)K_COLS * VS_CHUNK_ROWS * sizeof (int64_t)),
                 malloc ((size_t)K_COLS * VS_CHUNK_ROWS) };
  int n = 0, rc;
  int64_t id = a->first_id;

  a->rc = -1;
  if (codec == NULL || ch.values == NULL || ch.nulls == NULL)
    {
      snprintf (a->err, sizeof a->err, "out of memory");
      goto out;
    }
  /* Read-write as the merge opens its inputs (vs-merge.c): a process
   * killed mid-run leaves a WAL, which the merge's connection holds open
   * meanwhile.  Only read here. */
  if (sqlite3_open_v2 (a->path, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, NULL) != SQLITE_OK
      || sqlite3_busy_timeout (db, 5000) != SQLITE_OK
      || sqlite3_prepare_v2 (db, select_sql, -1, &s, NULL) != SQLITE_OK)
    {
      snprintf (a->err, sizeof a->err, "cannot read the kernels of %s: %s", a->path,
                db ? sqlite3_errmsg (db) : "out of memory");
      goto out;
    }
  /* The input's columns, in kernel_exec's order but for id. */
  static const int plain[] = { K_START, K_DURATION, -1, -1, K_CONTEXT, K_STREAM, K_CORRELATION };
  while ((rc = sqlite3_step (s)) == SQLITE_ROW)
    {
      for (int c = 0; c < 7; c++)
        {
          if (plain[c] < 0)
            continue;
          size_t at = (size_t)plain[c] * VS_CHUNK_ROWS + n;
          int type = sqlite3_column_type (s, c);
          if (type != SQLITE_INTEGER && type != SQLITE_NULL)
            {
              snprintf (a->err, sizeof a->err, "%s: a kernel execution holds a %s", a->path,
                        type == SQLITE_FLOAT ? "real number" : "text or blob");
              goto out;
            }
          ch.nulls[at] = type == SQLITE_NULL;
          ch.values[at] = type == SQLITE_NULL ? 0 : sqlite3_column_int64 (s, c);
        }
      ch.values[(size_t)K_ID * VS_CHUNK_ROWS + n] = id++;
      ch.nulls[(size_t)K_ID * VS_CHUNK_ROWS + n] = 0;
      map_column (s, 2, &a->process, &ch.values[(size_t)K_PROCESS * VS_CHUNK_ROWS + n],
                  &ch.nulls[(size_t)K_PROCESS * VS_CHUNK_ROWS + n]);
      map_column (s, 3, &a->device, &ch.values[(size_t)K_DEVICE * VS_CHUNK_ROWS + n],
                  &ch.nulls[(size_t)K_DEVICE * VS_CHUNK_ROWS + n]);
      map_column (s, 7, &a->config, &ch.values[(size_t)K_CONFIG * VS_CHUNK_ROWS + n],
                  &ch.nulls[(size_t)K_CONFIG * VS_CHUNK_ROWS + n]);
      /* The view `kernel`'s end_ns, for the trace's end. */
      if (!ch.nulls[(size_t)K_START * VS_CHUNK_ROWS + n]
          && !ch.nulls[(size_t)K_DURATION * VS_CHUNK_ROWS + n])
        {
          int64_t end = ch.values[(size_t)K_START * VS_CHUNK_ROWS + n]
                        + ch.values[(size_t)K_DURATION * VS_CHUNK_ROWS + n];
          if (!a->has_end || end > a->max_end)
            a->max_end = end;
          a->has_end = true;
        }
      if (++n == VS_CHUNK_ROWS)
        {
          if (code_chunk (a, codec, &ch, n) < 0)
            goto out;
          n = 0;
        }
    }
  if (rc != SQLITE_DONE)
    {
      snprintf (a->err, sizeof a->err, "cannot read the kernels of %s: %s", a->path,
                sqlite3_errmsg (db));
      goto out;
    }
  if (n > 0 && code_chunk (a, codec, &ch, n) < 0)
    goto out;
  a->rc = 0;
out:
  sqlite3_finalize (s);
  sqlite3_close (db);
  vs_chunk_codec_free (codec);
  free (ch.values);
  free (ch.nulls);
  return NULL;
}

VsKernelsAside *
vs_merge_kernels_start (VsMerge *m, const char *path, int64_t count)
{
  VsKernelsAside *a = calloc (1, sizeof *a);
  if (a == NULL)
    return NULL;
  a->path = strdup (path);
  if (a->path == NULL || vs_merge_idmap_copy (&a->process, &m->process) < 0
      || vs_merge_idmap_copy (&a->device, &m->device) < 0
      || vs_merge_idmap_copy (&a->config, &m->kernel_config) < 0)
    {
      vs_merge_kernels_free (a);
      return NULL;
    }
  /* The ids the copy would give, in the same order. */
  for (int64_t k = 0; k < count; k++)
    {
      int64_t id = vs_writer_next_kernel_id (m->w);
      if (k == 0)
        a->first_id = id;
    }
  a->started = pthread_create (&a->thread, NULL, code_kernels, a) == 0;
  if (!a->started)
    {
      vs_merge_kernels_free (a);
      return NULL;
    }
  return a;
}

static void
join (VsKernelsAside *a)
{
  if (a->started && !a->joined)
    {
      pthread_join (a->thread, NULL);
      a->joined = true;
    }
}

int
vs_merge_kernels_write (sqlite3 *db, void *data, char *err, size_t errlen)
{
  static const char *end_sql
      = "INSERT INTO meta (key, value) VALUES ('end_ns', ?1) ON CONFLICT (key) DO UPDATE"
        " SET value = max(ifnull(CAST(value AS INTEGER), ?1), ?1)";
  VsKernelsAside *a = data;
  sqlite3_stmt *s = NULL;
  int rc;

  join (a);
  if (a->rc != 0)
    {
      snprintf (err, errlen, "%s", a->err);
      return -1;
    }
  rc = vs_chunk_table_reset (db, "kernel_exec", err, errlen);
  for (size_t k = 0; rc == 0 && k < a->chunks.n; k++)
    {
      const VsCodedChunk *c = &a->chunks.chunk[k];
      rc = vs_chunk_table_put (db, &s, "kernel_exec", (int64_t)k, c->nrows, c->zone, c->zone_len,
                               c->data, c->data_len, err, errlen);
    }
  sqlite3_finalize (s);
  s = NULL;
  if (rc == 0 && a->has_end
      && (sqlite3_prepare_v2 (db, end_sql, -1, &s, NULL) != SQLITE_OK
          || sqlite3_bind_int64 (s, 1, a->max_end) != SQLITE_OK || sqlite3_step (s) != SQLITE_DONE))
    {
      snprintf (err, errlen, "cannot write the kernels' end: %s", sqlite3_errmsg (db));
      rc = -1;
    }
  sqlite3_finalize (s);
  return rc;
}

void
vs_merge_kernels_free (VsKernelsAside *a)
{
  if (a == NULL)
    return;
  join (a);
  vs_coded_chunks_clear (&a->chunks);
  vs_merge_idmap_clear (&a->process);
  vs_merge_idmap_clear (&a->device);
  vs_merge_idmap_clear (&a->config);
  free (a->path);
  free (a);
}

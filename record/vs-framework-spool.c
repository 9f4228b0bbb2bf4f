/* SPDX-License-Identifier: MIT */
/* vs-framework-spool.c — the JAX/XLA and CuPy hook's files in the spool
 * (vsfw-PID.info, written by collector/python/vs_frameworks.py) into
 * process traces (vsfw-PID.db) for the merge.
 *
 * The file is text, one fact a line: "pid N", "device IDX UUID TOTAL
 * NAME", "meta KEY VALUE", "failed TS DEVICE BYTES FRAMEWORK MESSAGE"
 * followed by "frame LINE FILE<TAB>FUNCTION" lines, innermost first; the
 * allocator levels beside it, vsfw-PID.events (CuPy's) and
 * vsfw-PID.xla-events (XLA's), are vs-framework-events.c's.  The
 * names sort after the collector's process-*.db files, so the merge
 * already has the process and its GPUs when it meets these.
 */
#include "vs-framework-spool.h"

#include <stdio.h>
#include <string.h>

#include <glib.h>

#include "vs-framework-events.h"
#include "vs-trace-writer.h"

typedef struct
{
  VsWriter *w;
  int64_t process_id;
  GHashTable *devices; /* device index → trace device id (gint64 in a pointer) */
  /* The failure being read, written when its frames have all been seen. */
  gboolean pending;
  VsFailedAlloc failed;
  char api[16];
  char *message;
  VsFrameworkFrames frames;
} VsFrameworkFile;

/* Writes the pending failure, if any; 0 or -1. */
static int
flush_failure (VsFrameworkFile *ff)
{
  if (!ff->pending)
    return 0;
  ff->pending = FALSE;
  ff->failed.stack_id = vs_framework_frames_stack (ff->w, &ff->frames);
  ff->failed.api = ff->api;
  ff->failed.error_name = ff->message;
  int rc = ff->failed.stack_id < 0 ? -1 : vs_writer_failed_alloc (ff->w, &ff->failed);
  g_clear_pointer (&ff->message, g_free);
  return rc;
}

/* The trace's device for CUDA ordinal idx (VS_UNKNOWN: not described). */
static int64_t
device_id (VsFrameworkFile *ff, long long idx)
{
  gpointer v;
  if (g_hash_table_lookup_extended (ff->devices, GINT_TO_POINTER ((int)idx + 1), NULL, &v))
    return (int64_t)GPOINTER_TO_SIZE (v);
  return VS_UNKNOWN;
}

/* One line of the file into the trace; 0, or -1 when the writer failed. */
static int
read_line (VsFrameworkFile *ff, char *line)
{
  long long idx, total, ts, nbytes;
  char uuid[64], key[128], api[16];
  int used = 0;

  int rc = vs_framework_frame_line (ff->w, line, ff->pending, &ff->frames);
  if (rc <= 0)
    return rc;
  if (flush_failure (ff) < 0)
    return -1;
  if (sscanf (line, "meta %127s %n", key, &used) == 1 && used > 0)
    return vs_writer_set_meta (ff->w, key, line + used);
  if (sscanf (line, "device %lld %63s %lld %n", &idx, uuid, &total, &used) == 3 && used > 0)
    {
      VsDevice d = { .idx = idx, .uuid = uuid, .name = line + used, .total_bytes = total };
      int64_t id = vs_writer_add_device (ff->w, &d);
      if (id < 0)
        return -1;
      g_hash_table_insert (ff->devices, GINT_TO_POINTER ((int)idx + 1),
                           GSIZE_TO_POINTER ((gsize)id));
      return 0;
    }
  if (sscanf (line, "failed %lld %lld %lld %15s %n", &ts, &idx, &nbytes, api, &used) == 4
      && used > 0)
    {
      memset (&ff->failed, 0, sizeof ff->failed);
      ff->failed.ts = ts;
      ff->failed.process_id = ff->process_id;
      ff->failed.tid = VS_UNKNOWN;
      ff->failed.device_id = device_id (ff, idx);
      ff->failed.allocator_id = VS_UNKNOWN;
      /* The request as the error names it: 0 where it names none. */
      ff->failed.requested_bytes = nbytes >= 0 ? nbytes : 0;
      ff->failed.error = VS_UNKNOWN;
      ff->failed.device_free_bytes = VS_UNKNOWN;
      ff->failed.device_total_bytes = VS_UNKNOWN;
      ff->failed.correlation = VS_UNKNOWN;
      ff->failed.range_id = VS_UNKNOWN;
      g_strlcpy (ff->api, api, sizeof ff->api);
      ff->message = g_strdup (line + used);
      ff->pending = TRUE;
    }
  return 0;
}

/* The pid a vsfw-PID.info file names, or -1. */
static long long
file_pid (const char *name)
{
  long long pid;
  int end = 0;
  if (sscanf (name, "vsfw-%lld.info%n", &pid, &end) != 1 || name[end] != '\0')
    return -1;
  return pid;
}

/* Writes the trace out from the file info of process pid; FALSE (err
 * set) when it cannot. */
static gboolean
write_trace (const char *info, const char *out, long long pid, const char *host, char *err,
             size_t errlen)
{
  FILE *f = fopen (info, "r");
  if (f == NULL)
    {
      snprintf (err, errlen, "cannot read %s", info);
      return FALSE;
    }
  VsFrameworkFile ff = { 0 };
  ff.w = vs_writer_create (out, err, errlen);
  if (ff.w == NULL)
    {
      fclose (f);
      return FALSE;
    }
  ff.devices = g_hash_table_new (NULL, NULL);
  /* Like a snapshot's import: the merge ties its process and GPUs to the
   * collector's by pid and host, and by uuid. */
  int rc = vs_writer_set_meta (ff.w, "source", "import");
  ff.process_id = rc < 0 ? -1 : vs_writer_add_imported_process (ff.w, pid, host, VS_UNKNOWN);
  if (ff.process_id < 0)
    rc = -1;
  char line[8192];
  while (rc == 0 && fgets (line, sizeof line, f) != NULL)
    {
      line[strcspn (line, "\n")] = '\0';
      rc = read_line (&ff, line);
    }
  if (rc == 0)
    rc = flush_failure (&ff);
  fclose (f);
  if (rc == 0)
    {
      /* The allocator levels, beside the .info: CuPy's (vsfw-PID.events)
       * and XLA's (vsfw-PID.xla-events). */
      static const char *const suffixes[] = { "events", "xla-events" };
      g_autofree char *dir = g_path_get_dirname (info);
      for (size_t i = 0; rc == 0 && i < G_N_ELEMENTS (suffixes); i++)
        {
          g_autofree char *name = g_strdup_printf ("vsfw-%lld.%s", pid, suffixes[i]);
          g_autofree char *events = g_build_filename (dir, name, NULL);
          rc = vs_framework_events_import (ff.w, events, ff.process_id, ff.devices);
        }
    }
  if (rc < 0)
    snprintf (err, errlen, "%s", vs_writer_errmsg (ff.w));
  g_free (ff.message);
  g_hash_table_unref (ff.devices);
  char cerr[256];
  if (vs_writer_close (ff.w, false, NULL, NULL, cerr, sizeof cerr) < 0 && rc == 0)
    {
      snprintf (err, errlen, "%s", cerr);
      rc = -1;
    }
  if (rc < 0)
    remove (out);
  return rc == 0;
}

int
vs_framework_spool_import (const char *spool, const char *host, bool *keep)
{
  g_autoptr (GDir) d = g_dir_open (spool, 0, NULL);
  const char *name;
  int written = 0;
  while (d != NULL && (name = g_dir_read_name (d)) != NULL)
    {
      long long pid = file_pid (name);
      if (pid < 0)
        continue;
      g_autofree char *info = g_build_filename (spool, name, NULL);
      g_autofree char *out = g_strdup_printf ("%s/vsfw-%lld.db", spool, pid);
      char err[512];
      if (write_trace (info, out, pid, host, err, sizeof err))
        written++;
      else
        {
          fprintf (stderr,
                   "vramscope record: the JAX/CuPy allocator figures of process %lld "
                   "are not in the trace: %s\n",
                   pid, err);
          *keep = true;
        }
    }
  return written;
}

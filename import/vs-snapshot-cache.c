/* SPDX-License-Identifier: MIT */
/* vs-snapshot-cache.c — snapshots imported into the user's cache, keyed by
 * their content (see vs-snapshot-cache.h).
 */
#include "vs-snapshot-cache.h"
#include "vs-config.h"
#include "vs-trace-build.h"

#include <errno.h>
#include <fcntl.h>
#include <glib/gstdio.h>
#include <string.h>
#include <unistd.h>

gboolean
vs_snapshot_cache_is_snapshot (const char *path)
{
  guint8 head[2];
  int fd;

  g_return_val_if_fail (path != NULL, FALSE);
  fd = g_open (path, O_RDONLY, 0);
  if (fd >= 0)
    {
      ssize_t n = read (fd, head, sizeof head);

      close (fd);
      if (n == 2)
        return head[0] == 0x80 && head[1] >= 2 && head[1] <= 5;
    }
  return g_str_has_suffix (path, ".pickle") || g_str_has_suffix (path, ".pkl");
}

/* The SHA-256 of the file's content, or NULL with error set. */
static char *
content_sum (const char *path, GError **error)
{
  g_autoptr (GChecksum) sum = g_checksum_new (G_CHECKSUM_SHA256);
  g_autofree guchar *buf = g_malloc (1 << 20);
  int fd = g_open (path, O_RDONLY, 0);
  ssize_t n;

  if (fd < 0)
    {
      int e = errno;

      g_set_error (error, G_FILE_ERROR, g_file_error_from_errno (e), "%s: %s", path,
                   e == ENOENT ? "no such file" : g_strerror (e));
      return NULL;
    }
  while ((n = read (fd, buf, 1 << 20)) > 0)
    g_checksum_update (sum, buf, n);
  if (n < 0)
    {
      int e = errno;

      close (fd);
      g_set_error (error, G_FILE_ERROR, g_file_error_from_errno (e), "%s: cannot read it: %s", path,
                   g_strerror (e));
      return NULL;
    }
  close (fd);
  return g_strdup (g_checksum_get_string (sum));
}

char *
vs_snapshot_cache_path (const char *path, GError **error)
{
  g_autofree char *sum = NULL;
  g_autofree char *name = NULL;

  g_return_val_if_fail (path != NULL, NULL);
  if (g_file_test (path, G_FILE_TEST_IS_DIR))
    {
      g_set_error (error, G_FILE_ERROR, G_FILE_ERROR_ISDIR, "%s: a folder, not a snapshot", path);
      return NULL;
    }
  sum = content_sum (path, error);
  if (sum == NULL)
    return NULL;
  name = g_strdup_printf ("%s-%s.db", sum, VS_VERSION);
  return g_build_filename (g_get_user_cache_dir (), "vramscope", "snapshots", name, NULL);
}

typedef struct
{
  const char *path;
  VsImportProgress progress;
  gpointer progress_data;
  GError *error; /* the import's failure */
} CacheFill;

/* Imports the snapshot into the trace at tmp, finalized with fo
 * (VsTraceFill). */
static int
cache_fill (const char *tmp, const VsFinalizeOptions *fo, void *data, char *err, size_t errlen)
{
  CacheFill *f = data;
  if (vs_import_snapshot_full (f->path, tmp, fo != NULL, fo != NULL ? fo->sink : NULL, NULL,
                               f->progress, f->progress_data, NULL, &f->error))
    return 0;
  g_strlcpy (err, f->error->message, errlen);
  return -1;
}

char *
vs_snapshot_cache_import (const char *path, VsImportProgress progress, gpointer progress_data,
                          GError **error)
{
  g_autofree char *cache = vs_snapshot_cache_path (path, error);
  g_autofree char *dir = NULL;

  if (cache == NULL)
    return NULL;
  if (g_file_test (cache, G_FILE_TEST_IS_REGULAR))
    return g_steal_pointer (&cache);
  dir = g_path_get_dirname (cache);
  if (g_mkdir_with_parents (dir, 0700) != 0)
    {
      int e = errno;

      g_set_error (error, G_FILE_ERROR, g_file_error_from_errno (e),
                   "%s: cannot make the cache folder %s for its trace: %s", path, dir,
                   g_strerror (e));
      return NULL;
    }
  CacheFill fill = { .path = path, .progress = progress, .progress_data = progress_data };
  VsTraceBuildOptions bo = { .output = cache, .force = TRUE, .force_flag = "", .finalize = TRUE };
  char err[1024] = "";
  if (vs_trace_build (&bo, cache_fill, &fill, NULL, 0, err, sizeof err) < 0)
    {
      if (fill.error != NULL)
        g_set_error (error, fill.error->domain, fill.error->code, "%s: %s", path,
                     fill.error->message);
      else
        g_set_error (error, G_FILE_ERROR, G_FILE_ERROR_FAILED, "%s: cannot write %s: %s", path,
                     cache, err);
      g_clear_error (&fill.error);
      return NULL;
    }
  return g_steal_pointer (&cache);
}

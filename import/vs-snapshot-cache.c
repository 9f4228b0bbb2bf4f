/* vs-snapshot-cache.c — snapshots imported into the user's cache, keyed by
 * their content (see vs-snapshot-cache.h).
 */
#include "vs-snapshot-cache.h"
#include "vs-config.h"

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

char *
vs_snapshot_cache_import (const char *path, VsImportProgress progress, gpointer progress_data,
                          GError **error)
{
  g_autofree char *cache = vs_snapshot_cache_path (path, error);
  g_autofree char *dir = NULL;
  g_autofree char *tmp = NULL;
  g_autoptr (GError) local = NULL;

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
  tmp = g_strdup_printf ("%s.tmp-%d", cache, (int)getpid ());
  if (!vs_import_snapshot (path, tmp, TRUE, progress, progress_data, NULL, &local))
    {
      g_unlink (tmp);
      g_set_error (error, local->domain, local->code, "%s: %s", path, local->message);
      return NULL;
    }
  if (g_rename (tmp, cache) != 0)
    {
      int e = errno;

      g_unlink (tmp);
      g_set_error (error, G_FILE_ERROR, g_file_error_from_errno (e), "%s: cannot write %s: %s",
                   path, cache, g_strerror (e));
      return NULL;
    }
  return g_steal_pointer (&cache);
}

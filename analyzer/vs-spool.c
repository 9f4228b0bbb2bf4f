/* SPDX-License-Identifier: MIT */
/* vs-spool.c — recognising the spool directories recordings leave.
 *
 * A spool is found by its name (VS_SPOOL_PREFIX, then record's pid) and
 * described by its run.info, a text file of `key value` lines written by
 * record once the program has started:
 *
 *   host gpu-node-3
 *   record_pid 4242
 *   program_pid 4243
 *   start_ns 1763900000000000000
 *   output /data/run.db
 *
 * A spool is left over when its record process is gone; on a shared
 * filesystem a spool of another host is never called left over, since its
 * recording may still run there.
 */
#include "vs-spool.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void
vs_spool_info_clear (VsSpoolInfo *info)
{
  g_clear_pointer (&info->host, g_free);
  g_clear_pointer (&info->output, g_free);
  info->record_pid = info->program_pid = info->start_ns = 0;
}

/* Reads dir/run.info (see the file comment). */
gboolean
vs_spool_read_info (const char *dir, VsSpoolInfo *info)
{
  g_return_val_if_fail (dir != NULL && info != NULL, FALSE);
  memset (info, 0, sizeof *info);
  g_autofree char *path = g_build_filename (dir, VS_SPOOL_RUN_INFO, NULL);
  g_autofree char *text = NULL;
  if (!g_file_get_contents (path, &text, NULL, NULL))
    return FALSE;
  g_auto (GStrv) lines = g_strsplit (text, "\n", -1);
  for (char **l = lines; *l != NULL; l++)
    {
      char *sp = strchr (*l, ' ');
      if (sp == NULL)
        continue;
      *sp = '\0';
      const char *key = *l, *value = sp + 1;
      if (strcmp (key, "host") == 0)
        {
          g_free (info->host);
          info->host = g_strdup (value);
        }
      else if (strcmp (key, "output") == 0)
        {
          g_free (info->output);
          info->output = g_strdup (value);
        }
      else if (strcmp (key, "record_pid") == 0)
        info->record_pid = g_ascii_strtoll (value, NULL, 10);
      else if (strcmp (key, "program_pid") == 0)
        info->program_pid = g_ascii_strtoll (value, NULL, 10);
      else if (strcmp (key, "start_ns") == 0)
        info->start_ns = g_ascii_strtoll (value, NULL, 10);
    }
  return TRUE;
}

/* The record pid in a spool directory's name, 0 when it has none. */
static gint64
pid_from_name (const char *dir)
{
  g_autofree char *base = g_path_get_basename (dir);
  if (!g_str_has_prefix (base, VS_SPOOL_PREFIX))
    return 0;
  return g_ascii_strtoll (base + strlen (VS_SPOOL_PREFIX), NULL, 10);
}

/* TRUE when path is a directory that holds a file matching pattern. */
static gboolean
holds (const char *path, const char *pattern)
{
  g_autoptr (GDir) d = g_dir_open (path, 0, NULL);
  if (d == NULL)
    return FALSE;
  g_autoptr (GPatternSpec) spec = g_pattern_spec_new (pattern);
  const char *name;
  while ((name = g_dir_read_name (d)) != NULL)
    if (g_pattern_spec_match_string (spec, name))
      return TRUE;
  return FALSE;
}

gboolean
vs_spool_looks_like_spool (const char *path)
{
  g_return_val_if_fail (path != NULL, FALSE);
  if (!g_file_test (path, G_FILE_TEST_IS_DIR))
    return FALSE;
  return pid_from_name (path) > 0 || holds (path, "process-*.db") || holds (path, "torch-*.pickle")
         || holds (path, "torch-*.stream") || holds (path, VS_SPOOL_RUN_INFO);
}

gboolean
vs_spool_pid_alive (gint64 pid)
{
  if (pid <= 0 || pid > G_MAXINT)
    return FALSE;
  if (kill ((pid_t)pid, 0) != 0 && errno != EPERM)
    return FALSE;
  /* A zombie (killed, not yet reaped) writes nothing any more. */
  g_autofree char *stat_path = g_strdup_printf ("/proc/%d/stat", (int)pid);
  g_autofree char *stat = NULL;
  if (g_file_get_contents (stat_path, &stat, NULL, NULL))
    {
      const char *paren = strrchr (stat, ')');
      if (paren != NULL && paren[1] == ' ' && (paren[2] == 'Z' || paren[2] == 'X'))
        return FALSE;
    }
  return TRUE;
}

gint64
vs_spool_record_pid (const char *dir)
{
  g_return_val_if_fail (dir != NULL, 0);
  g_auto (VsSpoolInfo) info = { 0 };
  if (vs_spool_read_info (dir, &info) && info.record_pid > 0)
    return info.record_pid;
  return pid_from_name (dir);
}

/* Whether the file name (a path, or argv[0]) is the vramscope command's. */
static gboolean
names_vramscope (const char *path)
{
  g_autofree char *base = g_path_get_basename (path);
  return g_str_has_prefix (base, "vramscope");
}

gboolean
vs_spool_pid_is_vramscope (gint64 pid)
{
  if (pid <= 0 || pid > G_MAXINT)
    return FALSE;
  g_autofree char *exe_link = g_strdup_printf ("/proc/%d/exe", (int)pid);
  g_autofree char *exe = g_file_read_link (exe_link, NULL);
  if (exe != NULL)
    return names_vramscope (exe);
  /* Another user's process: its command line is still readable. */
  g_autofree char *cmd_path = g_strdup_printf ("/proc/%d/cmdline", (int)pid);
  g_autofree char *cmd = NULL;
  gsize len = 0;
  if (g_file_get_contents (cmd_path, &cmd, &len, NULL) && len > 0)
    return names_vramscope (cmd);
  /* Nothing tells: it may be. */
  return TRUE;
}

gint64
vs_spool_pid_start_ns (gint64 pid)
{
  if (pid <= 0 || pid > G_MAXINT)
    return 0;
  g_autofree char *stat_path = g_strdup_printf ("/proc/%d/stat", (int)pid);
  g_autofree char *stat = NULL, *boot = NULL;
  if (!g_file_get_contents (stat_path, &stat, NULL, NULL)
      || !g_file_get_contents ("/proc/stat", &boot, NULL, NULL))
    return 0;
  /* Field 22, starttime, in clock ticks since boot; the fields after the
   * command's closing parenthesis start at the third. */
  const char *p = strrchr (stat, ')');
  g_auto (GStrv) fields = p ? g_strsplit (p + 2, " ", 21) : NULL;
  const char *btime = strstr (boot, "\nbtime ");
  long ticks = sysconf (_SC_CLK_TCK);
  if (fields == NULL || g_strv_length (fields) < 20 || btime == NULL || ticks <= 0)
    return 0;
  gint64 since_boot = g_ascii_strtoll (fields[19], NULL, 10);
  gint64 boot_s = g_ascii_strtoll (btime + 7, NULL, 10);
  if (since_boot < 0 || boot_s <= 0 || since_boot / ticks > G_MAXINT64 / 1000000000 - boot_s)
    return 0;
  return boot_s * 1000000000 + since_boot / ticks * 1000000000
         + since_boot % ticks * (1000000000 / ticks);
}

gboolean
vs_spool_is_active (const char *dir)
{
  g_return_val_if_fail (dir != NULL, FALSE);
  g_auto (VsSpoolInfo) info = { 0 };
  gint64 pid = pid_from_name (dir);
  if (vs_spool_read_info (dir, &info))
    {
      char host[256] = "localhost";
      gethostname (host, sizeof host - 1);
      host[sizeof host - 1] = '\0';
      if (info.host != NULL && strcmp (info.host, host) != 0)
        return TRUE;
      if (info.record_pid > 0)
        pid = info.record_pid;
    }
  return vs_spool_pid_alive (pid);
}

static int
compare_paths (gconstpointer a, gconstpointer b)
{
  return strcmp (*(char *const *)a, *(char *const *)b);
}

GPtrArray *
vs_spool_find_leftovers (const char *dir)
{
  g_return_val_if_fail (dir != NULL, NULL);
  GPtrArray *out = g_ptr_array_new_with_free_func (g_free);
  g_autoptr (GDir) d = g_dir_open (dir, 0, NULL);
  if (d == NULL)
    return out;
  const char *name;
  while ((name = g_dir_read_name (d)) != NULL)
    {
      if (!g_str_has_prefix (name, VS_SPOOL_PREFIX))
        continue;
      g_autofree char *path = g_build_filename (dir, name, NULL);
      if (g_file_test (path, G_FILE_TEST_IS_DIR) && !vs_spool_is_active (path))
        g_ptr_array_add (out, g_steal_pointer (&path));
    }
  g_ptr_array_sort (out, compare_paths);
  return out;
}

char *
vs_spool_leftover_hint (const char *dir)
{
  g_return_val_if_fail (dir != NULL, NULL);
  g_autoptr (GPtrArray) left = vs_spool_find_leftovers (dir);
  if (left->len == 0)
    return NULL;
  const char *spool = g_ptr_array_index (left, 0);
  g_auto (VsSpoolInfo) info = { 0 };
  g_autofree char *target = NULL;
  if (vs_spool_read_info (spool, &info) && info.output != NULL
      && !g_file_test (info.output, G_FILE_TEST_EXISTS))
    target = g_strdup (info.output);
  else
    target = g_strdup ("FILE.db");
  g_autofree char *quoted_spool = g_shell_quote (spool);
  g_autofree char *quoted_target = g_shell_quote (target);
  if (left->len == 1)
    return g_strdup_printf ("a recording that was killed left %s; recover it with: "
                            "vramscope recover %s -o %s",
                            spool, quoted_spool, quoted_target);
  return g_strdup_printf ("%u recordings that were killed left spool directories in %s; "
                          "recover each with: vramscope recover %s -o %s",
                          left->len, dir, quoted_spool, quoted_target);
}

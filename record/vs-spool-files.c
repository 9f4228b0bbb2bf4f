/* SPDX-License-Identifier: MIT */
/* vs-spool-files.c — the files of a spool that are the recording's own
 * (see vs-spool-files.h): their names, whether one is a plain file, and
 * removing them.
 *
 * The names are matched by one regular expression, the list of what the
 * collector (vs-collector.c), the PyTorch hook (sitecustomize.py), the
 * JAX/CuPy hook (vs_frameworks.py, vs-framework-spool.c) and
 * record itself (vs-record.c, vs-torch-spool.c, vs-window-rounds.h) write
 * in a spool.  A change there is a change here.
 */
#include "vs-spool-files.h"

#include <dirent.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <glib.h>

/* Every name the recording writes in its spool. */
static const char *ours_re
    = "^(?:run\\.info"
      "|(?:process-\\d+-\\d+\\.db|torch-\\d+\\.db|vsfw-\\d+\\.db|live\\.trace)"
      "(?:-wal|-shm|-journal)?"
      "|torch-\\d+-\\d+\\.(?:pickle|info)(?:\\.tmp)?"
      "|vsfw-\\d+\\.(?:info(?:\\.tmp)?|events|xla-events(?:\\.\\d+)?)"
      "|torch-\\d+\\.(?:stream|stream\\.info|stream\\.info\\.tmp|stacks)"
      "|vs_torch_stream-[0-9a-f]+\\.(?:so|log|so\\.tmp-\\d+))$";

bool
vs_spool_name_is_ours (const char *name)
{
  static GRegex *re;
  if (g_once_init_enter (&re))
    g_once_init_leave (&re, g_regex_new (ours_re, G_REGEX_OPTIMIZE, 0, NULL));
  return name != NULL && g_regex_match (re, name, 0, NULL);
}

/* Whether the file at path is regular with one name; *why when not. */
static bool
plain (const char *path, bool missing_ok, const char **why)
{
  struct stat st;
  const char *w = NULL;
  if (lstat (path, &st) != 0)
    w = missing_ok ? NULL : "missing";
  else if (S_ISLNK (st.st_mode))
    w = "a symbolic link";
  else if (!S_ISREG (st.st_mode))
    w = "not a regular file";
  else if (st.st_nlink != 1)
    w = "a second name of another file";
  if (why != NULL && w != NULL)
    *why = w;
  return w == NULL;
}

bool
vs_spool_file_is_plain (const char *path, const char **why)
{
  static const char *const sides[] = { "-wal", "-shm", "-journal" };
  if (!plain (path, false, why))
    return false;
  for (size_t k = 0; k < G_N_ELEMENTS (sides); k++)
    {
      g_autofree char *side = g_strconcat (path, sides[k], NULL);
      if (!plain (side, true, why))
        return false;
    }
  return true;
}

long
vs_spool_remove (const char *dir)
{
  DIR *d = opendir (dir);
  if (d == NULL)
    return -1;
  long left = 0;
  struct dirent *e;
  while ((e = readdir (d)) != NULL)
    {
      if (strcmp (e->d_name, ".") == 0 || strcmp (e->d_name, "..") == 0)
        continue;
      g_autofree char *p = g_build_filename (dir, e->d_name, NULL);
      /* A link named as ours is not ours: it stays, and the folder too. */
      if (!vs_spool_name_is_ours (e->d_name) || !plain (p, false, NULL) || unlink (p) != 0)
        left++;
    }
  closedir (d);
  if (left == 0 && rmdir (dir) != 0)
    left = 1;
  return left;
}

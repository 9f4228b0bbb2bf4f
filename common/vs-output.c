/* SPDX-License-Identifier: MIT */
/* vs-output.c — writing an output file safely: checks before writing, a
 * temporary name beside the destination, and a rename that does not
 * replace what it must not.  See vs-output.h for the rules.
 */
#include "vs-output.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int
vs_output_check (const char *path, bool force, const char *force_flag, const char *const *inputs,
                 size_t n, char *err, size_t errlen)
{
  struct stat st;

  if (stat (path, &st) != 0)
    {
      if (errno == ENOENT)
        return 0;
      snprintf (err, errlen, "cannot write %s: %s", path, strerror (errno));
      return -1;
    }
  if (!S_ISREG (st.st_mode))
    {
      snprintf (err, errlen, "%s exists and is not a regular file; it is never replaced", path);
      return -1;
    }
  for (size_t i = 0; i < n; i++)
    {
      struct stat in;
      if (inputs[i] != NULL && stat (inputs[i], &in) == 0 && in.st_dev == st.st_dev
          && in.st_ino == st.st_ino)
        {
          snprintf (err, errlen, "%s is also an input; write the output to another file", path);
          return -1;
        }
    }
  if (!force)
    {
      snprintf (err, errlen, "%s exists; use %s to replace it", path, force_flag);
      return -1;
    }
  return 0;
}

/* Appends suffix to path into buf; false when it does not fit. */
static bool
with_suffix (char *buf, size_t len, const char *path, const char *suffix)
{
  int n = snprintf (buf, len, "%s%s", path, suffix);
  return n >= 0 && (size_t)n < len;
}

void
vs_output_remove (const char *path)
{
  static const char *const sides[] = { "-wal", "-shm", "-journal" };
  char side[4096];

  unlink (path);
  for (size_t i = 0; i < sizeof sides / sizeof *sides; i++)
    {
      size_t n = strlen (path), m = strlen (sides[i]);
      if (n + m + 1 > sizeof side)
        continue;
      memcpy (side, path, n);
      memcpy (side + n, sides[i], m + 1);
      unlink (side);
    }
}

/* This host's name, for temporary names: a process of another host
 * sharing the folder is never taken for a dead one. */
static void
host_name (char *buf, size_t len)
{
  if (gethostname (buf, len) != 0 || buf[0] == '\0')
    snprintf (buf, len, "localhost");
  buf[len - 1] = '\0';
  for (char *p = buf; *p; p++)
    if (*p == '/')
      *p = '_';
}

/* Removes "BASE.tmp-HOST-PID-XXXXXX" files of this host in dir whose PID no
 * longer runs. */
static void
remove_stale (const char *dir, const char *base, const char *host)
{
  DIR *d = opendir (dir);
  struct dirent *de;
  char prefix[PATH_MAX];
  size_t plen;

  if (d == NULL)
    return;
  snprintf (prefix, sizeof prefix, "%s.tmp-%s-", base, host);
  plen = strlen (prefix);
  while ((de = readdir (d)) != NULL)
    {
      const char *name = de->d_name, *p;
      char *end;
      long pid;
      char full[PATH_MAX];

      if (strncmp (name, prefix, plen) != 0)
        continue;
      p = name + plen;
      errno = 0;
      pid = strtol (p, &end, 10);
      /* Only our own pattern, and only the main file: its side files go
       * with it. */
      if (errno != 0 || end == p || pid <= 0 || *end != '-' || strlen (end + 1) != 6)
        continue;
      if (pid == (long)getpid () || kill ((pid_t)pid, 0) == 0 || errno != ESRCH)
        continue;
      if (snprintf (full, sizeof full, "%s/%s", dir, name) < (int)sizeof full)
        vs_output_remove (full);
    }
  closedir (d);
}

int
vs_output_temp (const char *path, char *tmp, size_t tmplen, char *err, size_t errlen)
{
  char suffix[128], dir[PATH_MAX], host[64];
  const char *slash = strrchr (path, '/');
  int fd;

  host_name (host, sizeof host);
  if (slash == NULL)
    snprintf (dir, sizeof dir, ".");
  else if (slash == path)
    snprintf (dir, sizeof dir, "/");
  else
    snprintf (dir, sizeof dir, "%.*s", (int)(slash - path), path);
  remove_stale (dir, slash != NULL ? slash + 1 : path, host);
  snprintf (suffix, sizeof suffix, ".tmp-%s-%ld-XXXXXX", host, (long)getpid ());
  if (!with_suffix (tmp, tmplen, path, suffix))
    {
      snprintf (err, errlen, "cannot write %s: name too long", path);
      return -1;
    }
  fd = mkstemp (tmp);
  if (fd < 0)
    {
      snprintf (err, errlen, "cannot write in the folder of %s: %s", path, strerror (errno));
      return -1;
    }
  close (fd);
  return 0;
}

/* 0666 less the process's umask: the mode open() gives a new file.  Read
 * from /proc (umask() would change it for a moment, under other threads'
 * feet); where there is no /proc, from umask() itself. */
static mode_t
output_mode (void)
{
  FILE *f = fopen ("/proc/self/status", "re");
  char line[256];
  unsigned int mask = 0;
  bool found = false;

  while (f != NULL && !found && fgets (line, sizeof line, f) != NULL)
    found = sscanf (line, "Umask: %o", &mask) == 1;
  if (f != NULL)
    fclose (f);
  if (!found)
    {
      mode_t old = umask (022);
      umask (old);
      mask = old;
    }
  return 0666 & ~(mode_t)mask;
}

int
vs_output_commit (const char *tmp, const char *path, bool force, const char *force_flag, char *err,
                  size_t errlen)
{
  struct stat st;
  char side[PATH_MAX];

  /* One rule for every output, whatever created the temporary (mkstemp's
   * 0600, SQLite's 0644).  A file system that keeps no modes (some FUSE
   * or network mounts refuse chmod) still gets the output. */
  (void)chmod (tmp, output_mode ());

  if (!force)
    {
      /* link() fails when path exists: nothing that appeared meanwhile
       * is replaced. */
      if (link (tmp, path) == 0)
        unlink (tmp);
      else if (errno == EEXIST || lstat (path, &st) == 0)
        {
          snprintf (err, errlen, "%s exists; use %s to replace it", path, force_flag);
          return -1;
        }
      else if (rename (tmp, path) != 0)
        {
          /* A file system without hard links: checked just above. */
          snprintf (err, errlen, "cannot write %s: %s", path, strerror (errno));
          return -1;
        }
    }
  else
    {
      if (lstat (path, &st) == 0 && !S_ISREG (st.st_mode) && !S_ISLNK (st.st_mode))
        {
          snprintf (err, errlen, "%s exists and is not a regular file; it is never replaced", path);
          return -1;
        }
      if (rename (tmp, path) != 0)
        {
          snprintf (err, errlen, "cannot write %s: %s", path, strerror (errno));
          return -1;
        }
    }
  /* An earlier trace's log and index would be taken for this one's. */
  if (with_suffix (side, sizeof side, path, "-wal"))
    unlink (side);
  if (with_suffix (side, sizeof side, path, "-shm"))
    unlink (side);
  if (with_suffix (side, sizeof side, path, "-journal"))
    unlink (side);
  return 0;
}

/* The guarded temporary (vs_output_guard): its name, the cancel flag, the
 * handlers replaced. */
static char guard_path[4001];
static volatile sig_atomic_t *guard_cancel;
static const int guard_signals[] = { SIGINT, SIGTERM, SIGHUP };
static struct sigaction guard_old[3];
static bool guarding;

static void
on_guard_signal (int sig)
{
  if (guard_cancel != NULL && !*guard_cancel)
    {
      *guard_cancel = 1;
      return;
    }
  vs_output_remove (guard_path);
  signal (sig, SIG_DFL);
  raise (sig);
}

int
vs_output_guard (const char *tmp, volatile sig_atomic_t *cancel)
{
  struct sigaction sa;

  if (guarding || strlen (tmp) >= sizeof guard_path)
    return -1;
  memcpy (guard_path, tmp, strlen (tmp) + 1);
  guard_cancel = cancel;
  memset (&sa, 0, sizeof sa);
  sa.sa_handler = on_guard_signal;
  sigemptyset (&sa.sa_mask);
  for (int k = 0; k < 3; k++)
    {
      sigaction (guard_signals[k], &sa, &guard_old[k]);
      /* a signal ignored from the start (nohup, a background job of a
       * shell without job control) stays ignored */
      if (guard_old[k].sa_handler == SIG_IGN && !(guard_old[k].sa_flags & SA_SIGINFO))
        sigaction (guard_signals[k], &guard_old[k], NULL);
    }
  guarding = true;
  return 0;
}

void
vs_output_guard_end (void)
{
  if (!guarding)
    return;
  for (int k = 0; k < 3; k++)
    sigaction (guard_signals[k], &guard_old[k], NULL);
  guarding = false;
  guard_cancel = NULL;
}

/* SPDX-License-Identifier: MIT */
/* vs-window-live.c — `record --window`: the streams' imported records
 * given back to the disk while the program runs (see vs-window-live.h).
 *
 * Order matters, for a recording killed at any instant: a step commits the
 * records and the import's checkpoint first; then the stream's header
 * says how many records may be gone; only then is the hole punched.  A
 * reader finding the header's count non-zero resumes the kept import at
 * its checkpoint, which is at or past that count, so no record is read
 * twice or lost.  The hole ends at the block boundary at or below the
 * first record not imported: the tracker only ever writes past that record
 * (its chunk maps are shared, and a page it maps reads zeros where the
 * hole is), so punching never races its appends.
 *
 * Workload: one open, one pwrite and one fallocate per stream and pass
 * (every 250 ms), whatever the rate of events.
 */
#include "vs-window-live.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <sys/stat.h>
#include <unistd.h>

#include <glib.h>

#include "vs-torch-stream-private.h"

typedef struct
{
  int64_t punched_to; /* file offset the hole reaches */
  bool unsupported;   /* its file system punches no holes */
} VsLiveStream;

struct VsWindowLive
{
  GHashTable *streams; /* pid (gint64 *) → VsLiveStream */
  long long given_back;
};

VsWindowLive *
vs_window_live_new (void)
{
  VsWindowLive *live = g_new0 (VsWindowLive, 1);
  live->streams = g_hash_table_new_full (g_int64_hash, g_int64_equal, g_free, g_free);
  return live;
}

void
vs_window_live_free (VsWindowLive *live)
{
  if (live == NULL)
    return;
  g_hash_table_unref (live->streams);
  g_free (live);
}

bool
vs_window_live_can_give_back (const char *dir)
{
  g_return_val_if_fail (dir != NULL, false);
  g_autofree char *path = g_build_filename (dir, ".punch-probe", NULL);
  int fd = open (path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0)
    return false;
  static const char block[4096] = { 1 };
  bool ok = true;
  for (int k = 0; k < 3 && ok; k++)
    ok = write (fd, block, sizeof block) == (ssize_t)sizeof block;
  ok = ok
       && fallocate (fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, sizeof block, sizeof block)
              == 0;
  close (fd);
  unlink (path);
  return ok;
}

bool
vs_window_live_opened (VsWindowLive *live, VsStreamImport *im, char *err, size_t errlen)
{
  g_return_val_if_fail (live != NULL && im != NULL, false);
  return vs_stream_import_keep (im, err, errlen) == 0;
}

void
vs_window_live_stepped (VsWindowLive *live, VsStreamImport *im, long long pid, const char *path)
{
  g_return_if_fail (live != NULL && im != NULL && path != NULL);
  gint64 key = pid;
  VsLiveStream *ls = g_hash_table_lookup (live->streams, &key);
  if (ls == NULL)
    {
      ls = g_new0 (VsLiveStream, 1);
      ls->punched_to = STREAM_HEADER;
      g_hash_table_insert (live->streams, g_memdup2 (&key, sizeof key), ls);
    }
  if (ls->unsupported)
    return;
  uint64_t done = (uint64_t)vs_stream_import_consumed (im);
  int fd = open (path, O_RDWR | O_CLOEXEC);
  struct stat st;
  if (fd < 0 || fstat (fd, &st) != 0)
    {
      if (fd >= 0)
        close (fd);
      return;
    }
  int64_t block = st.st_blksize > 0 ? (int64_t)st.st_blksize : 4096;
  int64_t end = (STREAM_HEADER + (int64_t)done * (int64_t)sizeof (VsStreamRecord)) / block * block;
  if (end > ls->punched_to)
    {
      /* The header first: a reader that finds the hole knows of it. */
      if (pwrite (fd, &done, sizeof done, STREAM_PUNCHED_AT) != (ssize_t)sizeof done)
        {
          close (fd);
          return;
        }
      if (fallocate (fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, ls->punched_to,
                     end - ls->punched_to)
          == 0)
        {
          live->given_back += end - ls->punched_to;
          ls->punched_to = end;
        }
      else if (errno == EOPNOTSUPP || errno == ENOSYS)
        ls->unsupported = true;
    }
  close (fd);
}

long long
vs_window_live_given_back (const VsWindowLive *live)
{
  return live ? live->given_back : 0;
}

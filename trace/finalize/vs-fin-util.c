/* SPDX-License-Identifier: MIT */
/* vs-fin-util.c — the small helpers every pass of the finalizer shares:
 * filling its error message, running one statement, and counting progress
 * (declared in vs-trace-finalize-private.h).
 */
#include "vs-trace-finalize-private.h"

#include <stdarg.h>
#include <stdio.h>

#include <sqlite3.h>

int
vs_fin_fail (VsFinErr *e, const char *fmt, ...)
{
  if (e->len)
    {
      va_list ap;
      va_start (ap, fmt);
      vsnprintf (e->msg, e->len, fmt, ap);
      va_end (ap);
    }
  return -1;
}

int
vs_fin_exec (sqlite3 *db, VsFinErr *e, const char *sql)
{
  char *m = NULL;
  if (sqlite3_exec (db, sql, NULL, NULL, &m) != SQLITE_OK)
    {
      vs_fin_fail (e, "%s", m ? m : sqlite3_errmsg (db));
      sqlite3_free (m);
      return -1;
    }
  return 0;
}

int
vs_fin_tick (VsFinProgress *p, uint64_t n)
{
  p->done += n;
  if (p->progress && !p->progress (p->done, p->total, p->progress_data))
    return -1;
  return 0;
}

/* SPDX-License-Identifier: MIT */
/* vs-merge-util.c — the small helpers every part of the merge shares
 * (declared in vs-merge-private.h): filling its error message, asking a
 * count query whether anything is there, and freeing its id maps.
 */
#include "vs-merge-private.h"

#include <stdio.h>

int
vs_merge_fail (VsMerge *m, const char *what, const char *why)
{
  if (m->errlen)
    snprintf (m->err, m->errlen, "%s: %s", what, why);
  return -1;
}

/* Whether the count query sql gives more than 0 on db. */
bool
vs_merge_count_is_positive (sqlite3 *db, const char *sql)
{
  sqlite3_stmt *s = NULL;
  bool yes = sqlite3_prepare_v2 (db, sql, -1, &s, NULL) == SQLITE_OK
             && sqlite3_step (s) == SQLITE_ROW && sqlite3_column_int64 (s, 0) > 0;
  sqlite3_finalize (s);
  return yes;
}

void
vs_merge_free_maps (VsMerge *m)
{
  VsIdMap *maps[] = { &m->process, &m->range, &m->device, &m->allocator,
                      &m->module,  &m->frame, &m->stack,  &m->kernel_config };
  for (size_t k = 0; k < sizeof maps / sizeof maps[0]; k++)
    vs_merge_idmap_clear (maps[k]);
}

/* SPDX-License-Identifier: MIT */
/* vs-sqlite-alloc.h — zeroed objects from SQLite's allocator, as virtual
 * tables, their cursors and what they cache are made (sqlite3_free()
 * frees them).  Header only.
 */
#pragma once

#include <sqlite3.h>
#include <string.h>

/* A zeroed object of size bytes from sqlite3_malloc64(); NULL when out
 * of memory. */
static inline void *
vs_sqlite_zalloc (size_t size)
{
  void *p = sqlite3_malloc64 (size);

  if (p != NULL)
    memset (p, 0, size);
  return p;
}

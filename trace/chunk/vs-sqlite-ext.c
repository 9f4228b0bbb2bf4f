/* SPDX-License-Identifier: MIT */
/* vs-sqlite-ext.c — the loadable SQLite extension vramscope-sqlite: a
 * compacted trace's tables for any SQLite client.
 *
 *   sqlite3 trace.db -cmd '.load /path/to/vramscope-sqlite'
 *
 * Loading it on a connection to a compacted trace (schema version 5)
 * creates the temporary virtual tables and the view `kernel` of
 * vs-chunk-vtab.h, so the trace reads as a plain one: `SELECT … FROM
 * alloc_event` works as on a version-4 trace.  On other databases it only
 * registers the module vs_chunk.
 */
#include <sqlite3ext.h>
SQLITE_EXTENSION_INIT1

#include "vs-chunk-vtab.h"

/* The entry point SQLite derives from the file name vramscope-sqlite: the
 * one symbol the module exports. */
__attribute__ ((visibility ("default"))) int
sqlite3_vramscopesqlite_init (sqlite3 *db, char **errmsg, const sqlite3_api_routines *api);

int
sqlite3_vramscopesqlite_init (sqlite3 *db, char **errmsg, const sqlite3_api_routines *api)
{
  SQLITE_EXTENSION_INIT2 (api);
  int rc = vs_chunk_register (db);
  if (rc != SQLITE_OK)
    return rc;
  return vs_chunk_attach (db, errmsg);
}

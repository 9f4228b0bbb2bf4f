/* SPDX-License-Identifier: MIT */
/* vs-chunk-store.c — a chunked table held open (vs-chunk-vtab-private.h):
 * its zone maps and runs, read and checked when the table is connected,
 * and its decoded chunks, only the columns statements asked for decoded,
 * cached within the connection's budget (VsChunkBudget, CACHE_BYTES for
 * all its tables): when full, the chunk least recently asked for, of any
 * table, is dropped.  A chunk that does not decode, or whose rows disagree
 * with its zone map, is an error naming the table and chunk; nothing is
 * read past a blob's end.
 */
#ifdef VS_SQLITE_EXTENSION
#include <sqlite3ext.h>
SQLITE_EXTENSION_INIT3
#endif

#include "vs-chunk-vtab-private.h"
#include "vs-sqlite-alloc.h"

#include <assert.h>
#include <string.h>

void
vs_chunk_cached_unref (VsChunkCached *c)
{
  if (c != NULL && --c->refs == 0)
    {
      vs_chunk_clear (&c->chunk);
      sqlite3_free (c);
    }
}

VsChunkBudget *
vs_chunk_budget_new (size_t limit)
{
  VsChunkBudget *b = vs_sqlite_zalloc (sizeof *b);

  if (b != NULL)
    {
      b->limit = limit;
      b->refs = 1;
    }
  return b;
}

void
vs_chunk_budget_unref (void *budget)
{
  VsChunkBudget *b = budget;

  if (b != NULL && --b->refs == 0)
    {
      assert (b->tables == NULL && b->bytes == 0);
      sqlite3_free (b);
    }
}

void
vs_chunk_vtab_join (VsChunkVtab *vt, VsChunkBudget *budget)
{
  assert (vt->budget == NULL);
  budget->refs++;
  vt->budget = budget;
  vt->next = budget->tables;
  budget->tables = vt;
  budget->bytes += vt->cache_bytes;
}

void
vs_chunk_vtab_free (VsChunkVtab *vt)
{
  for (int i = 0; vt->cache != NULL && i < vt->nchunks; i++)
    vs_chunk_cached_unref (vt->cache[i]);
  if (vt->budget != NULL)
    {
      VsChunkVtab **p = &vt->budget->tables;
      while (*p != vt)
        p = &(*p)->next;
      *p = vt->next;
      vt->budget->bytes -= vt->cache_bytes;
      vs_chunk_budget_unref (vt->budget);
    }
  sqlite3_free (vt->cache);
  sqlite3_free (vt->cached);
  sqlite3_finalize (vt->read);
  vs_chunk_codec_free (vt->codec);
  sqlite3_free (vt->seqs);
  sqlite3_free (vt->rows);
  sqlite3_free (vt->first_row);
  sqlite3_free (vt->zones);
  sqlite3_free (vt);
}

static int
grow (VsChunkVtab *vt, int cap)
{
  int64_t *seqs = sqlite3_realloc64 (vt->seqs, (sqlite3_uint64)cap * sizeof *seqs);
  if (seqs)
    vt->seqs = seqs;
  int *rows = sqlite3_realloc64 (vt->rows, (sqlite3_uint64)cap * sizeof *rows);
  if (rows)
    vt->rows = rows;
  int64_t *first = sqlite3_realloc64 (vt->first_row, (sqlite3_uint64)cap * sizeof *first);
  if (first)
    vt->first_row = first;
  VsChunkZone *zones = sqlite3_realloc64 (
      vt->zones, (sqlite3_uint64)cap * (sqlite3_uint64)vt->t->ncols * sizeof *zones);
  if (zones)
    vt->zones = zones;
  return seqs && rows && first && zones ? SQLITE_OK : SQLITE_NOMEM;
}

/* Whether main."<name>_chunk" is a table keyed by seq alone (INTEGER
 * PRIMARY KEY: each chunk once).  A view there could list a chunk twice,
 * and every row in it would count twice. */
static bool
chunk_table_keyed (sqlite3 *db, const char *name)
{
  static const char *sql
      = "SELECT (SELECT count(*) FROM main.sqlite_master WHERE type = 'table'"
        "  AND name = ?1 || '_chunk')"
        " AND (SELECT group_concat (name) || ':' || upper (group_concat (type))"
        "  FROM pragma_table_info (?1 || '_chunk', 'main') WHERE pk > 0) = 'seq:INTEGER'";
  sqlite3_stmt *s;
  bool keyed = false;

  if (sqlite3_prepare_v2 (db, sql, -1, &s, NULL) != SQLITE_OK)
    return false;
  sqlite3_bind_text (s, 1, name, -1, SQLITE_STATIC);
  if (sqlite3_step (s) == SQLITE_ROW)
    keyed = sqlite3_column_int (s, 0) != 0;
  sqlite3_finalize (s);
  return keyed;
}

/* Reads every chunk's row count and zone map of vt's table. */
int
vs_chunk_vtab_load_zones (VsChunkVtab *vt, char **pzErr)
{
  const VsChunkTable *t = vt->t;
  if (!chunk_table_keyed (vt->db, t->name))
    {
      *pzErr = sqlite3_mprintf ("the trace is damaged: its %s_chunk table is missing, is a view or"
                                " is not keyed by seq",
                                t->name);
      return SQLITE_CORRUPT;
    }
  char *sql = sqlite3_mprintf ("SELECT seq, row_count, zone FROM main.\"%w_chunk\" ORDER BY seq",
                               t->name);
  sqlite3_stmt *s = NULL;
  int rc, cap = 0, k0 = t->key[0];

  if (sql == NULL)
    return SQLITE_NOMEM;
  rc = sqlite3_prepare_v2 (vt->db, sql, -1, &s, NULL);
  sqlite3_free (sql);
  if (rc != SQLITE_OK)
    {
      *pzErr = sqlite3_mprintf ("the trace's %s chunks cannot be read: %s", t->name,
                                sqlite3_errmsg (vt->db));
      return rc;
    }
  while ((rc = sqlite3_step (s)) == SQLITE_ROW)
    {
      int i = vt->nchunks;
      int64_t n = sqlite3_column_int64 (s, 1);
      const void *zone = sqlite3_column_blob (s, 2);
      int zone_len = sqlite3_column_bytes (s, 2);

      if (i == cap && grow (vt, cap = cap ? cap * 2 : 64) != SQLITE_OK)
        {
          rc = SQLITE_NOMEM;
          break;
        }
      VsChunkZone *z = vt->zones + (size_t)i * t->ncols;
      if (n < 1 || n > VS_CHUNK_ROWS || zone == NULL
          || (i > 0 && sqlite3_column_int64 (s, 0) <= vt->seqs[i - 1])
          || vs_chunk_zone_decode (zone, (size_t)zone_len, t->ncols, z) < 0 || z[k0].has_null
          || !z[k0].has_value)
        {
          rc = SQLITE_CORRUPT;
        }
      else if (i == 0 || vt->zones[(size_t)(i - 1) * t->ncols + k0].max > z[k0].min)
        {
          /* A run in key order begins (block's next lifetime class). */
          if (vt->nruns == VS_CHUNK_MAX_RUNS)
            rc = SQLITE_CORRUPT;
          else
            vt->run_start[vt->nruns++] = i;
        }
      if (rc == SQLITE_CORRUPT)
        {
          *pzErr = sqlite3_mprintf ("the trace is damaged: %s chunk %lld has a bad row count or"
                                    " zone map",
                                    t->name, (long long)sqlite3_column_int64 (s, 0));
          break;
        }
      vt->seqs[i] = sqlite3_column_int64 (s, 0);
      vt->rows[i] = (int)n;
      vt->first_row[i] = vt->total_rows;
      vt->total_rows += n;
      vt->nchunks++;
    }
  vt->run_start[vt->nruns] = vt->nchunks;
  if (rc == SQLITE_DONE)
    {
      vt->sorted = 1u << k0;
      for (int c = 0; c < t->ncols && vt->nchunks > 0; c++)
        {
          bool in_order = true;
          for (int r = 0; r < vt->nruns && in_order; r++)
            for (int i = vt->run_start[r]; i < vt->run_start[r + 1] && in_order; i++)
              {
                const VsChunkZone *z = vt->zones + (size_t)i * t->ncols + c;
                in_order = z->sorted
                           && (i == vt->run_start[r]
                               || vt->zones[(size_t)(i - 1) * t->ncols + c].max <= z->min);
              }
          if (in_order)
            vt->sorted |= 1u << c;
        }
    }
  if (rc != SQLITE_DONE && rc != SQLITE_CORRUPT && rc != SQLITE_NOMEM)
    *pzErr = sqlite3_mprintf ("the trace's %s chunks cannot be read: %s", t->name,
                              sqlite3_errmsg (vt->db));
  sqlite3_finalize (s);
  return rc == SQLITE_DONE ? SQLITE_OK : rc;
}

/* The bytes a cached chunk holds. */
static size_t
cached_size (const VsChunkCached *c)
{
  size_t n = (size_t)__builtin_popcount (c->chunk.decoded);
  size_t payload = 0;

  for (int i = 0; i < c->chunk.ncols; i++)
    payload += c->chunk.len[i];
  return payload + n * (size_t)c->chunk.nrows * (sizeof (int64_t) + 1);
}

/* Drops chunks from the caches of vt's connection until they hold at most
 * its budget less room (cursors keep their own reference): each time the
 * one least recently asked for, of any table. */
static void
cache_trim (VsChunkVtab *vt, size_t room)
{
  VsChunkBudget *b = vt->budget;

  while (b->bytes + room > b->limit)
    {
      VsChunkVtab *owner = NULL;
      int slot = -1;
      for (VsChunkVtab *t = b->tables; t != NULL; t = t->next)
        for (int i = 0; i < t->ncached; i++)
          if (owner == NULL
              || t->cache[t->cached[i]]->used < owner->cache[owner->cached[slot]]->used)
            {
              owner = t;
              slot = i;
            }
      if (owner == NULL)
        break;
      int victim = owner->cached[slot];
      /* The last of the list takes the victim's place. */
      owner->cached[slot] = owner->cached[--owner->ncached];
      owner->cache[owner->cached[slot]]->slot = slot;
      owner->cache_bytes -= owner->cache[victim]->bytes;
      b->bytes -= owner->cache[victim]->bytes;
      vs_chunk_cached_unref (owner->cache[victim]);
      owner->cache[victim] = NULL;
    }
}

/* Decodes the columns of need in c not decoded yet and checks each
 * against the chunk's zone map (and the first key column's order). */
int
vs_chunk_vtab_ensure (VsChunkVtab *vt, VsChunkCached *c, uint32_t need)
{
  VsChunk *ch = &c->chunk;
  const VsChunkZone *z = vt->zones + (size_t)c->ci * vt->t->ncols;
  int k0 = vt->t->key[0];
  char err[256];

  need &= ch->ncols >= 32 ? UINT32_MAX : (1u << ch->ncols) - 1;
  if ((need & ~c->checked) == 0)
    return SQLITE_OK;
  if (vs_chunk_columns (ch, need, err, sizeof err) < 0)
    goto bad;
  for (int col = 0; col < ch->ncols; col++)
    {
      const int64_t *v = ch->values + (size_t)col * ch->nrows;
      const uint8_t *nl = ch->nulls + (size_t)col * ch->nrows;
      int64_t lo = INT64_MAX, hi = INT64_MIN;
      int nulls = 0, disorder = 0;

      if (!(ch->decoded & (1u << col)) || (c->checked & (1u << col)))
        continue;
      for (int i = 0; i < ch->nrows; i++)
        {
          nulls += nl[i];
          lo = nl[i] || v[i] >= lo ? lo : v[i];
          hi = nl[i] || v[i] <= hi ? hi : v[i];
        }
      if (col == k0 || z[col].sorted)
        for (int i = 1; i < ch->nrows; i++)
          disorder |= v[i - 1] > v[i];
      bool has_null = nulls > 0, has_value = nulls < ch->nrows;
      if (has_null != z[col].has_null || has_value != z[col].has_value || disorder
          || (z[col].sorted && has_null) || (has_value && (lo < z[col].min || hi > z[col].max)))
        goto bad;
      c->checked |= 1u << col;
    }
  if (vt->cache[c->ci] == c)
    {
      vt->cache_bytes -= c->bytes;
      vt->budget->bytes -= c->bytes;
      c->bytes = cached_size (c);
      vt->cache_bytes += c->bytes;
      vt->budget->bytes += c->bytes;
    }
  return SQLITE_OK;

bad:
  sqlite3_free (vt->base.zErrMsg);
  vt->base.zErrMsg = sqlite3_mprintf ("the trace is damaged: %s chunk %lld does not decode",
                                      vt->t->name, (long long)c->seq);
  return SQLITE_ERROR;
}

int
vs_chunk_vtab_get (VsChunkVtab *vt, int ci, uint32_t need, VsChunkCached **out)
{
  int64_t seq = vt->seqs[ci];
  char err[256];
  int rc;

  *out = NULL;
  if (vt->cache[ci] != NULL)
    {
      vt->cache[ci]->used = ++vt->budget->clock;
      vt->cache[ci]->refs++;
      *out = vt->cache[ci];
      return vs_chunk_vtab_ensure (vt, *out, need);
    }

  VsChunkCached *c = vs_sqlite_zalloc (sizeof *c);
  if (c == NULL)
    return SQLITE_NOMEM;
  c->seq = seq;
  c->ci = ci;
  sqlite3_bind_int64 (vt->read, 1, seq);
  rc = sqlite3_step (vt->read);
  if (rc == SQLITE_ROW)
    {
      const void *data = sqlite3_column_blob (vt->read, 1);
      int len = sqlite3_column_bytes (vt->read, 1);
      if (sqlite3_column_int64 (vt->read, 0) != vt->rows[ci] || data == NULL
          || vs_chunk_open (vt->codec, data, (size_t)len, vt->t->ncols, vt->rows[ci], &c->chunk,
                            err, sizeof err)
                 < 0)
        rc = SQLITE_CORRUPT;
      else
        rc = SQLITE_OK;
    }
  else if (rc == SQLITE_DONE)
    rc = SQLITE_CORRUPT;
  sqlite3_reset (vt->read);
  if (rc != SQLITE_OK)
    {
      vs_chunk_clear (&c->chunk);
      sqlite3_free (c);
      sqlite3_free (vt->base.zErrMsg);
      if (rc == SQLITE_CORRUPT)
        vt->base.zErrMsg = sqlite3_mprintf ("the trace is damaged: %s chunk %lld does not decode",
                                            vt->t->name, (long long)seq);
      else
        vt->base.zErrMsg = sqlite3_mprintf ("%s", sqlite3_errmsg (vt->db));
      return SQLITE_ERROR;
    }
  c->refs = 2; /* the cache's and the caller's */
  c->bytes = cached_size (c);
  c->used = ++vt->budget->clock;
  cache_trim (vt, c->bytes + (size_t)__builtin_popcount (need) * c->chunk.nrows * 9);
  vt->cache[ci] = c;
  c->slot = vt->ncached;
  vt->cached[vt->ncached++] = ci;
  vt->cache_bytes += c->bytes;
  vt->budget->bytes += c->bytes;
  *out = c;
  return vs_chunk_vtab_ensure (vt, c, need);
}

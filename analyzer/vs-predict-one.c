/* SPDX-License-Identifier: MIT */
/* vs-predict-one.c — which allocations of one run scale with the batch
 * (see vs-predict-private.h).
 *
 * The role of each block (vs-roles.c) says which pass allocated it; the
 * activations are the candidates.  Two kinds of them do not depend on the
 * batch, and their sizes say so:
 *
 *   kept    an activation never freed while a later allocation from the
 *           same stack was, and the run went on through a backward pass
 *           into another forward pass: a library's workspace or cache
 *           that its first call allocated (cuBLAS's workspace, 32 MiB on
 *           Hopper, comes from the first Linear's forward pass), not a
 *           tensor of one step.  The tensors of the step a run stopped in
 *           (an out-of-memory error) are never freed either, but no
 *           forward pass followed them, so they still scale.
 *   weight  a temporary of the backward pass (an allocation without
 *           stack) whose size is a parameter's and no forward activation's:
 *           the gradient of a weight, summed into the gradient already
 *           there (tied weights, accumulation) — a weight's size, not the
 *           batch's.  A size that a forward activation also has is
 *           ambiguous (the gradient of that activation) and scales.
 *
 * Every other activation scales as size · batch / B1; parameters,
 * gradients, optimizer state and the rest keep their size.
 *
 * The roles are read while the history is (vs_predict_roles_start): on a
 * thread and a connection of their own, the block table of a large trace
 * in parts on several more.
 */
#include "vs-predict-private.h"

#include "vs-blocks.h"
#include "vs-roles.h"

/* In the table's own order, which costs no sort: allocations are found by
 * their event id whatever the order.  The ranged one reads a part of the
 * table on a connection of its own. */
static const char *blocks_sql
    = "SELECT alloc_event_id, device_id, alloc_seq, free_seq, ifnull(stack_id, 0) FROM block"
      " WHERE allocator_id = ?1 AND level = 2 AND alloc_event_id IS NOT NULL ORDER BY id";
static const char *blocks_range_sql
    = "SELECT alloc_event_id, device_id, alloc_seq, free_seq, ifnull(stack_id, 0) FROM block"
      " WHERE allocator_id = ?1 AND level = 2 AND alloc_event_id IS NOT NULL"
      " AND id BETWEEN ?2 AND ?3 ORDER BY id";
static const char *block_span_sql = "SELECT min(id), max(id) FROM block";

/* Block ids per reader at least, and the most readers, of the blocks read
 * in parts at once. */
#define BLOCKS_PER_READER 262144
#define MAX_READERS 8

/* The index in h of the allocation of alloc_event id, -1 if none (the
 * allocations are in event id order). */
static gint64
find_event (const VsPredictHistory *h, gint64 id)
{
  gint64 lo = 0, hi = (gint64)h->allocs->len - 1;
  while (lo <= hi)
    {
      gint64 mid = lo + (hi - lo) / 2;
      gint64 v = g_array_index (h->allocs, VsPredictAlloc, mid).event_id;
      if (v == id)
        return mid;
      if (v < id)
        lo = mid + 1;
      else
        hi = mid - 1;
    }
  return -1;
}

/* Appends the rows of stmt (blocks_sql or blocks_range_sql, bound) to
 * blocks and event_ids; returns sqlite3_step's last code. */
static int
step_blocks (sqlite3_stmt *stmt, gint64 allocator_id, GArray *blocks, GArray *event_ids)
{
  int rc;

  while ((rc = sqlite3_step (stmt)) == SQLITE_ROW)
    {
      VsBlock b = { 0 };
      gint64 id = sqlite3_column_int64 (stmt, 0);
      b.level = 2;
      b.allocator_id = allocator_id;
      b.device_id = sqlite3_column_int64 (stmt, 1);
      b.alloc_seq = vs_column_int (stmt, 2);
      b.free_seq = vs_column_int (stmt, 3);
      b.stack_id = sqlite3_column_int64 (stmt, 4);
      g_array_append_val (blocks, b);
      g_array_append_val (event_ids, id);
    }
  return rc;
}

/* One part of the block table, read on a read-only connection of its own
 * to file. */
typedef struct
{
  const char *file;
  gint64 allocator_id, lo, hi;
  GArray *blocks, *event_ids;
  gboolean ok;
} Part;

static gpointer
read_part (gpointer data)
{
  Part *p = data;
  sqlite3 *db = NULL;
  sqlite3_stmt *stmt = NULL;

  if (vs_trace_sqlite_open (p->file, &db, SQLITE_OPEN_READONLY) == SQLITE_OK
      && sqlite3_prepare_v2 (db, blocks_range_sql, -1, &stmt, NULL) == SQLITE_OK)
    {
      sqlite3_bind_int64 (stmt, 1, p->allocator_id);
      sqlite3_bind_int64 (stmt, 2, p->lo);
      sqlite3_bind_int64 (stmt, 3, p->hi);
      p->ok = step_blocks (stmt, p->allocator_id, p->blocks, p->event_ids) == SQLITE_DONE;
    }
  sqlite3_finalize (stmt);
  sqlite3_close_v2 (db);
  return NULL;
}

/* The blocks of a large table read in parts on several threads, appended
 * in the table's order; FALSE (nothing appended) when the table is small,
 * or a part could not be read: the caller then reads it at once. */
static gboolean
read_blocks_in_parts (VsTrace *trace, gint64 allocator_id, GArray *blocks, GArray *event_ids)
{
  const char *file = sqlite3_db_filename (trace->db, "main");
  sqlite3_stmt *stmt = vs_trace_statement (trace, block_span_sql, NULL);
  Part parts[MAX_READERS] = { { 0 } };
  GThread *threads[MAX_READERS] = { 0 };
  gint64 lo = 0, hi = -1;
  guint n;
  gboolean ok = TRUE;

  if (stmt == NULL || file == NULL || *file == '\0')
    return FALSE;
  if (sqlite3_step (stmt) == SQLITE_ROW)
    {
      lo = sqlite3_column_int64 (stmt, 0);
      hi = sqlite3_column_int64 (stmt, 1);
    }
  sqlite3_reset (stmt);
  n = (guint)CLAMP ((hi - lo + 1) / BLOCKS_PER_READER, 0,
                    MIN (MAX_READERS, (gint64)g_get_num_processors ()));
  if (n < 2)
    return FALSE;
  for (guint i = 0; i < n; i++)
    {
      parts[i] = (Part){
        file, allocator_id, lo + (hi - lo + 1) * i / n, lo + (hi - lo + 1) * (i + 1) / n - 1, NULL,
        NULL, FALSE
      };
      parts[i].blocks = g_array_new (FALSE, TRUE, sizeof (VsBlock));
      parts[i].event_ids = g_array_new (FALSE, FALSE, sizeof (gint64));
      threads[i] = g_thread_try_new ("vs-predict-blocks", read_part, &parts[i], NULL);
      if (threads[i] == NULL)
        read_part (&parts[i]);
    }
  for (guint i = 0; i < n; i++)
    {
      if (threads[i] != NULL)
        g_thread_join (threads[i]);
      ok = ok && parts[i].ok;
    }
  for (guint i = 0; i < n; i++)
    {
      if (ok)
        {
          g_array_append_vals (blocks, parts[i].blocks->data, parts[i].blocks->len);
          g_array_append_vals (event_ids, parts[i].event_ids->data, parts[i].event_ids->len);
        }
      g_array_unref (parts[i].blocks);
      g_array_unref (parts[i].event_ids);
    }
  return ok;
}

/* The blocks of allocator_id of trace, in the table's order, with their
 * alloc_event ids (event_ids) and their roles; in_parts: a large table is
 * read in parts on several threads. */
static gboolean
read_block_roles (VsTrace *trace, gint64 allocator_id, gboolean in_parts, GArray *blocks,
                  GArray *event_ids, GArray *roles, GError **error)
{
  if (!in_parts || !read_blocks_in_parts (trace, allocator_id, blocks, event_ids))
    {
      sqlite3_stmt *stmt = vs_trace_statement (trace, blocks_sql, error);
      int rc;

      if (stmt == NULL)
        return FALSE;
      sqlite3_bind_int64 (stmt, 1, allocator_id);
      rc = step_blocks (stmt, allocator_id, blocks, event_ids);
      if (!vs_trace_step_done (trace, stmt, rc, error))
        return FALSE;
    }
  g_array_set_size (roles, blocks->len);
  return vs_blocks_roles (trace, (const VsBlock *)blocks->data, blocks->len, (VsRole *)roles->data,
                          error);
}

struct _VsPredictRoles
{
  VsTrace *trace; /* a connection of its own to the trace's file */
  gint64 allocator_id;
  GThread *thread;
  GArray *blocks, *event_ids, *roles;
  gboolean ok;
};

static gpointer
roles_thread (gpointer data)
{
  VsPredictRoles *r = data;
  r->ok
      = read_block_roles (r->trace, r->allocator_id, TRUE, r->blocks, r->event_ids, r->roles, NULL);
  return NULL;
}

VsPredictRoles *
vs_predict_roles_start (VsTrace *trace, gint64 allocator_id)
{
  const char *file = sqlite3_db_filename (trace->db, "main");
  VsPredictRoles *r;
  VsTrace *own;

  if (file == NULL || *file == '\0' || vs_trace_is_recording (trace))
    return NULL;
  own = vs_trace_open (file, NULL);
  if (own == NULL)
    return NULL;
  r = g_new0 (VsPredictRoles, 1);
  r->trace = own;
  r->allocator_id = allocator_id;
  r->blocks = g_array_new (FALSE, TRUE, sizeof (VsBlock));
  r->event_ids = g_array_new (FALSE, FALSE, sizeof (gint64));
  r->roles = g_array_new (FALSE, FALSE, sizeof (VsRole));
  r->thread = g_thread_try_new ("vs-predict-roles", roles_thread, r, NULL);
  if (r->thread == NULL)
    {
      vs_predict_roles_free (r);
      return NULL;
    }
  return r;
}

void
vs_predict_roles_free (VsPredictRoles *r)
{
  if (r == NULL)
    return;
  if (r->thread != NULL)
    g_thread_join (r->thread);
  vs_trace_free (r->trace);
  g_array_unref (r->blocks);
  g_array_unref (r->event_ids);
  g_array_unref (r->roles);
  g_free (r);
}

/* The roles that pending read into roles (indexed by allocation of h):
 * FALSE when it failed or read a block whose allocation h lacks (the roles
 * of such a set of blocks are not those of h's blocks alone). */
static gboolean
take_pending (const VsPredictHistory *h, VsPredictRoles *pending, VsRole *roles)
{
  g_thread_join (pending->thread);
  pending->thread = NULL;
  if (!pending->ok)
    return FALSE;
  for (guint i = 0; i < h->allocs->len; i++)
    roles[i] = VS_ROLE_OTHER;
  for (guint k = 0; k < pending->blocks->len; k++)
    {
      gint64 i = find_event (h, g_array_index (pending->event_ids, gint64, k));
      if (i < 0)
        return FALSE;
      roles[i] = g_array_index (pending->roles, VsRole, k);
    }
  return TRUE;
}

/* The role of each allocation of h into roles (VS_ROLE_OTHER for those the
 * block table does not hold): pending's, read while h was, when it has
 * them, else read here. */
static gboolean
read_roles (const VsPredictHistory *h, VsPredictRoles *pending, VsRole *roles, GError **error)
{
  g_autoptr (GArray) all = g_array_new (FALSE, TRUE, sizeof (VsBlock));
  g_autoptr (GArray) ids = g_array_new (FALSE, FALSE, sizeof (gint64));
  g_autoptr (GArray) all_roles = g_array_new (FALSE, FALSE, sizeof (VsRole));
  g_autoptr (GArray) blocks = g_array_new (FALSE, TRUE, sizeof (VsBlock));
  g_autoptr (GArray) index = g_array_new (FALSE, FALSE, sizeof (gint64));
  g_autofree VsRole *block_roles = NULL;

  if (pending != NULL && take_pending (h, pending, roles))
    return TRUE;
  /* the blocks whose allocation h holds, and their roles among them */
  if (!read_block_roles (h->trace, h->allocator_id, FALSE, all, ids, all_roles, error))
    return FALSE;
  for (guint k = 0; k < all->len; k++)
    {
      gint64 i = find_event (h, g_array_index (ids, gint64, k));
      if (i < 0)
        continue;
      g_array_append_val (blocks, g_array_index (all, VsBlock, k));
      g_array_append_val (index, i);
    }
  for (guint i = 0; i < h->allocs->len; i++)
    roles[i] = VS_ROLE_OTHER;
  if (blocks->len == all->len)
    {
      for (guint k = 0; k < all->len; k++)
        roles[g_array_index (index, gint64, k)] = g_array_index (all_roles, VsRole, k);
      return TRUE;
    }
  block_roles = g_new (VsRole, MAX (blocks->len, 1));
  if (!vs_blocks_roles (h->trace, (const VsBlock *)blocks->data, blocks->len, block_roles, error))
    return FALSE;
  for (guint k = 0; k < blocks->len; k++)
    roles[g_array_index (index, gint64, k)] = block_roles[k];
  return TRUE;
}

/* kept[i]: allocation i was never freed while a later one from its stack
 * was, and a backward pass (an allocation without stack, or a gradient)
 * followed by a forward pass (an activation with stack) came after it. */
static void
find_kept (const VsPredictHistory *h, guint32 empty_key, const VsRole *roles, gboolean *kept)
{
  const VsPredictAlloc *a = (const VsPredictAlloc *)h->allocs->data;
  const gint32 *events = (const gint32 *)h->events->data;
  guint n = h->allocs->len;
  g_autofree gboolean *freed = g_new0 (gboolean, n);
  g_autoptr (GHashTable) freed_later = g_hash_table_new (NULL, NULL); /* key + 1 */
  gboolean forward_later = FALSE, next_step_later = FALSE;

  for (guint k = 0; k < h->events->len; k++)
    if (events[k] < 0)
      freed[-events[k] - 1] = TRUE;
  for (guint i = n; i-- > 0;)
    {
      gpointer key = GUINT_TO_POINTER (a[i].key + 1);
      kept[i] = !freed[i] && next_step_later && g_hash_table_contains (freed_later, key);
      if (freed[i])
        g_hash_table_add (freed_later, key);
      if ((a[i].key == empty_key || roles[i] == VS_ROLE_GRADIENTS) && forward_later)
        next_step_later = TRUE;
      if (roles[i] == VS_ROLE_ACTIVATIONS && a[i].key != empty_key)
        forward_later = TRUE;
    }
}

gboolean
vs_predict_one_run_slopes (const VsPredictHistory *h, VsPredictRoles *pending, guint32 empty_key,
                           gint64 batch, double *slope, gint64 *n_varying, GError **error)
{
  const VsPredictAlloc *a = (const VsPredictAlloc *)h->allocs->data;
  guint n = h->allocs->len;
  g_autofree VsRole *roles = g_new (VsRole, MAX (n, 1));
  g_autofree gboolean *kept = g_new0 (gboolean, MAX (n, 1));
  g_autoptr (GHashTable) weights = g_hash_table_new (g_int64_hash, g_int64_equal);
  g_autoptr (GHashTable) forward = g_hash_table_new (g_int64_hash, g_int64_equal);

  if (!read_roles (h, pending, roles, error))
    return FALSE;
  find_kept (h, empty_key, roles, kept);
  for (guint i = 0; i < n; i++)
    if (roles[i] == VS_ROLE_PARAMETERS)
      g_hash_table_add (weights, (gpointer)&a[i].size);
    else if (roles[i] == VS_ROLE_ACTIVATIONS && a[i].key != empty_key)
      g_hash_table_add (forward, (gpointer)&a[i].size);
  *n_varying = 0;
  for (guint i = 0; i < n; i++)
    {
      slope[i] = 0.0;
      if (roles[i] != VS_ROLE_ACTIVATIONS || kept[i])
        continue;
      if (a[i].key == empty_key && g_hash_table_contains (weights, &a[i].size)
          && !g_hash_table_contains (forward, &a[i].size))
        continue;
      slope[i] = (double)a[i].size / (double)batch;
      (*n_varying)++;
    }
  return TRUE;
}

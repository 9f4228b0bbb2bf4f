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
 */
#include "vs-predict-private.h"

#include "vs-blocks.h"
#include "vs-roles.h"

/* In the table's own order, which costs no sort: allocations are found by
 * their event id whatever the order. */
static const char *blocks_sql
    = "SELECT alloc_event_id, device_id, alloc_seq, free_seq, ifnull(stack_id, 0) FROM block"
      " WHERE allocator_id = ?1 AND level = 2 AND alloc_event_id IS NOT NULL ORDER BY id";

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

/* The blocks of allocator_id of trace, in the table's order, with their
 * alloc_event ids (event_ids) and their roles. */
static gboolean
read_block_roles (VsTrace *trace, gint64 allocator_id, GArray *blocks, GArray *event_ids,
                  GArray *roles, GError **error)
{
  sqlite3_stmt *stmt = vs_trace_statement (trace, blocks_sql, error);
  int rc;

  if (stmt == NULL)
    return FALSE;
  sqlite3_bind_int64 (stmt, 1, allocator_id);
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
  sqlite3_reset (stmt);
  if (rc != SQLITE_DONE)
    return vs_trace_sql_error (trace, error);
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
  r->ok = read_block_roles (r->trace, r->allocator_id, r->blocks, r->event_ids, r->roles, NULL);
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
  if (!read_block_roles (h->trace, h->allocator_id, all, ids, all_roles, error))
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

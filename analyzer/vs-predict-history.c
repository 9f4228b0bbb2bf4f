/* SPDX-License-Identifier: MIT */
/* vs-predict-history.c — a run's PyTorch allocator history in memory, and
 * the matching of two runs' histories by stack (see vs-predict-private.h).
 *
 * Histories are read once (alloc_event by id, the allocator's own order)
 * into flat arrays: a prediction replays them many times.  Stacks are
 * compared by their text, so that two traces' different stack ids of the
 * same code match.  Matching walks both histories while they agree;
 * where they differ it aligns the next window of each by their longest
 * common subsequence and goes on from the middle of the window: linear in
 * the history's length for histories that differ here and there (GPT-2's
 * backward pass makes a few more requests per layer at batch 4 than at 2,
 * cuDNN's choice of algorithm changes its workspace requests).
 */
#include "vs-predict-private.h"

#include "vs-address-map-private.h"
#include "vs-stack.h"

#include <string.h>

/* Stack ids' keys (common/vs-hash-table.h). */
typedef struct
{
  gint64 stack_id;
  guint32 key;
  gboolean used;
} KeyEntry;

#define VS_HT_TYPE KeyMap
#define VS_HT_FN(n) key_map_##n
#define VS_HT_ENTRY KeyEntry
#define VS_HT_KEY_TYPE gint64
#define VS_HTI_KEY stack_id
#define VS_HTI_USED used
#include "vs-hash-table-int.h"

G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (KeyMap, key_map_clear)

/* How many allocations of each run a resynchronisation aligns at once. */
#define MATCH_WINDOW 512

static const char *device_sql = "SELECT device_id FROM allocator WHERE id = ?1";

void
vs_predict_keys_init (VsPredictKeys *keys)
{
  keys->index = g_hash_table_new (g_str_hash, g_str_equal);
  keys->texts = g_ptr_array_new_with_free_func (g_free);
  g_mutex_init (&keys->lock);
}

void
vs_predict_keys_clear (VsPredictKeys *keys)
{
  g_clear_pointer (&keys->index, g_hash_table_unref);
  g_clear_pointer (&keys->texts, g_ptr_array_unref);
  g_mutex_clear (&keys->lock);
}

/* The key of stack_id of trace (ids seen before are in by_id). */
static gboolean
stack_key (VsTrace *trace, gint64 stack_id, KeyMap *by_id, VsPredictKeys *keys, guint32 *key,
           GError **error)
{
  KeyEntry *e = key_map_find (by_id, stack_id);
  gpointer found;

  if (e != NULL)
    {
      *key = e->key;
      return TRUE;
    }
  const VsStackInfo *info = vs_stack_get (trace, stack_id, error);
  if (info == NULL)
    return FALSE;
  g_autofree char *stack_text = vs_stack_dup_text (info);
  g_mutex_lock (&keys->lock);
  found = g_hash_table_lookup (keys->index, stack_text);
  if (found == NULL)
    {
      char *text = g_steal_pointer (&stack_text);
      g_ptr_array_add (keys->texts, text);
      found = GUINT_TO_POINTER (keys->texts->len);
      g_hash_table_insert (keys->index, text, found);
    }
  g_mutex_unlock (&keys->lock);
  *key = GPOINTER_TO_UINT (found) - 1;
  e = key_map_insert (by_id, stack_id, NULL);
  if (e == NULL)
    g_error ("out of memory");
  e->key = *key;
  return TRUE;
}

static gboolean
read_device (VsPredictHistory *h, GError **error)
{
  sqlite3_stmt *stmt = vs_trace_statement (h->trace, device_sql, error);
  int rc;

  if (stmt == NULL)
    return FALSE;
  sqlite3_bind_int64 (stmt, 1, h->allocator_id);
  rc = sqlite3_step (stmt);
  if (rc == SQLITE_ROW)
    h->device_id = sqlite3_column_int64 (stmt, 0);
  sqlite3_reset (stmt);
  if (rc == SQLITE_DONE)
    {
      g_set_error (error, VS_TRACE_ERROR, VS_TRACE_ERROR_INVALID_ARGUMENT,
                   "the trace has no allocator %" G_GINT64_FORMAT, h->allocator_id);
      return FALSE;
    }
  return rc == SQLITE_ROW || vs_trace_sql_error (h->trace, error);
}

/* What vs_predict_history_read keeps while the rows go by. */
typedef struct
{
  VsPredictHistory *h;
  VsPredictKeys *keys;
  VsAddressMap live; /* the allocation's index + 1 */
  KeyMap by_id;
} Reading;

static gboolean
take_row (const VsPredictRow *r, gpointer data, GError **error)
{
  Reading *rd = data;
  VsPredictHistory *h = rd->h;
  gint32 ev;

  if (r->op == VS_ALLOC_OP_ALLOC)
    {
      VsPredictAlloc a;
      a.size = CLAMP (r->size, 0, (gint64)1 << 50);
      a.stream = r->stream == VS_UNKNOWN ? 0 : r->stream;
      a.event_id = r->id;
      if (!stack_key (h->trace, r->stack_id, &rd->by_id, rd->keys, &a.key, error))
        return FALSE;
      if (h->allocs->len >= G_MAXINT32)
        {
          g_set_error (error, VS_TRACE_ERROR, VS_TRACE_ERROR_INVALID_ARGUMENT,
                       "its history has more than %d allocations", G_MAXINT32);
          return FALSE;
        }
      ev = (gint32)h->allocs->len;
      g_array_append_val (h->allocs, a);
      vs_address_map_put (&rd->live, r->address, GINT_TO_POINTER (ev + 1));
    }
  else
    {
      gpointer index = vs_address_map_take (&rd->live, r->address);
      if (index == NULL)
        return TRUE; /* freed before the history began */
      ev = -GPOINTER_TO_INT (index);
    }
  gint64 rel = vs_trace_rel (h->trace, r->ts);
  g_array_append_val (h->events, ev);
  g_array_append_val (h->times, rel);
  return TRUE;
}

gboolean
vs_predict_history_read (VsPredictHistory *h, VsTrace *trace, gint64 allocator_id,
                         VsPredictKeys *keys, GError **error)
{
  Reading rd = { h, keys, { 0 }, { 0 } };
  gboolean ok;

  h->trace = trace;
  h->allocator_id = allocator_id;
  h->allocs = g_array_new (FALSE, FALSE, sizeof (VsPredictAlloc));
  h->events = g_array_new (FALSE, FALSE, sizeof (gint32));
  h->times = g_array_new (FALSE, FALSE, sizeof (gint64));
  if (!read_device (h, error))
    return FALSE;
  ok = vs_predict_rows_read (trace, allocator_id, take_row, &rd, error);
  vs_address_map_clear (&rd.live);
  key_map_clear (&rd.by_id);
  if (!ok)
    return FALSE;
  if (h->allocs->len == 0)
    {
      g_set_error (error, VS_TRACE_ERROR, VS_TRACE_ERROR_INVALID_ARGUMENT,
                   "its PyTorch allocator made no allocation");
      return FALSE;
    }
  return TRUE;
}

void
vs_predict_history_clear (VsPredictHistory *h)
{
  g_clear_pointer (&h->allocs, g_array_unref);
  g_clear_pointer (&h->events, g_array_unref);
  g_clear_pointer (&h->times, g_array_unref);
}

/* Whether allocation x of the larger run (batch ratio r to the smaller)
 * and y of the smaller can be the same request: the same stack and, for
 * an allocation without stack (PyTorch's autograd threads record none),
 * a size that is the same or grew by at most r² (a quadratic term, with
 * a margin) — sizes tell such allocations apart where stacks cannot. */
static inline gboolean
same_request (const VsPredictAlloc *x, const VsPredictAlloc *y, guint32 empty, double r)
{
  if (x->key != y->key)
    return FALSE;
  if (x->key != empty || x->size == y->size)
    return TRUE;
  return x->size >= y->size && (double)x->size <= (double)y->size * r * r * 1.25 + 4096.0;
}

/* The text of stack key for a message: from the frame where it differs
 * from the stack other, at most 120 characters. */
static char *
stack_brief (const VsPredictKeys *keys, guint32 key, guint32 other)
{
  const char *text = g_ptr_array_index (keys->texts, key);
  const char *cmp = g_ptr_array_index (keys->texts, other);
  const char *from = text;
  gsize n = 0;

  if (*text == '\0')
    return g_strdup ("no stack");
  while (text[n] != '\0' && text[n] == cmp[n])
    n++;
  for (gsize k = 0; k + strlen (VS_STACK_SEPARATOR) <= n; k++)
    if (strncmp (text + k, VS_STACK_SEPARATOR, strlen (VS_STACK_SEPARATOR)) == 0)
      from = text + k + strlen (VS_STACK_SEPARATOR);
  return g_strdup_printf ("%s%.120s%s", from != text ? "… " : "", from,
                          strlen (from) > 120 ? "…" : "");
}

static gint64
no_alignment (const VsPredictKeys *keys, const VsPredictAlloc *a, guint i, const VsPredictAlloc *b,
              guint j, GError **error)
{
  g_autofree char *sa = stack_brief (keys, a[i].key, b[j].key);
  g_autofree char *sb = stack_brief (keys, b[j].key, a[i].key);
  g_set_error (
      error, VS_TRACE_ERROR, VS_TRACE_ERROR_INVALID_ARGUMENT,
      "their allocation histories differ from allocation %u of the run at the larger batch (%s) "
      "and %u of the other (%s)",
      i + 1, sa, j + 1, sb);
  return -1;
}

/* Aligns a[i..] and b[j..] over a window of MATCH_WINDOW allocations each
 * by their longest common subsequence of same requests, and commits the
 * alignment of its first half (all of it where the window reaches both
 * ends): fills match for the a allocations passed, advances *i and *j,
 * and returns the allocations left without partner, or -1 when nothing in
 * the window matches. */
static gint64
align_window (const VsPredictAlloc *a, guint na, guint *pi, const VsPredictAlloc *b, guint nb,
              guint *pj, guint32 empty, double r, gint64 *match)
{
  guint i = *pi, j = *pj;
  guint n1 = MIN (MATCH_WINDOW, na - i), n2 = MIN (MATCH_WINDOW, nb - j);
  guint w = n2 + 1;
  g_autofree guint16 *L = g_new0 (guint16, (gsize)(n1 + 1) * w);
  gboolean to_end = i + n1 == na && j + n2 == nb;
  guint x = 0, y = 0, stop1 = to_end ? n1 : n1 / 2, stop2 = to_end ? n2 : n2 / 2;
  gint64 unmatched = 0;

  /* L[x][y]: the longest common subsequence of a[i + x ..] and b[j + y ..] */
  for (guint xx = n1; xx-- > 0;)
    for (guint yy = n2; yy-- > 0;)
      L[xx * w + yy] = same_request (&a[i + xx], &b[j + yy], empty, r)
                           ? L[(xx + 1) * w + yy + 1] + 1
                           : MAX (L[(xx + 1) * w + yy], L[xx * w + yy + 1]);
  if (L[0] == 0)
    return -1;
  while (x < n1 && y < n2 && (x < stop1 || y < stop2))
    {
      if (same_request (&a[i + x], &b[j + y], empty, r)
          && L[x * w + y] == L[(x + 1) * w + y + 1] + 1)
        {
          match[i + x] = j + y;
          x++, y++;
        }
      else if (L[(x + 1) * w + y] >= L[x * w + y + 1])
        {
          match[i + x] = -1;
          x++, unmatched++;
        }
      else
        y++, unmatched++;
    }
  *pi = i + x;
  *pj = j + y;
  return unmatched;
}

gint64
vs_predict_match (const VsPredictHistory *ha, const VsPredictHistory *hb, double ratio,
                  const VsPredictKeys *keys, gint64 *match, GError **error)
{
  gpointer found = g_hash_table_lookup (keys->index, "");
  guint32 empty = found != NULL ? GPOINTER_TO_UINT (found) - 1 : G_MAXUINT32;
  const VsPredictAlloc *a = (const VsPredictAlloc *)ha->allocs->data;
  const VsPredictAlloc *b = (const VsPredictAlloc *)hb->allocs->data;
  guint na = ha->allocs->len, nb = hb->allocs->len;
  guint i = 0, j = 0;
  gint64 unmatched = 0;
  /* "a few": 8, or one in ten of the longer history (GPT-2's backward
   * pass makes 8 more requests per layer at batch 4 than at batch 2) */
  gint64 allowed = MAX (8, (gint64)MAX (na, nb) / 10);

  while (i < na && j < nb)
    {
      if (same_request (&a[i], &b[j], empty, ratio))
        {
          match[i++] = j++;
          continue;
        }
      guint i0 = i, j0 = j;
      gint64 skipped = align_window (a, na, &i, b, nb, &j, empty, ratio, match);
      if (skipped < 0)
        return no_alignment (keys, a, i0, b, j0, error);
      unmatched += skipped;
      if (unmatched > allowed)
        return no_alignment (keys, a, i0, b, j0, error);
    }
  unmatched += (na - i) + (nb - j);
  while (i < na)
    match[i++] = -1;
  if (unmatched > allowed)
    {
      g_set_error (error, VS_TRACE_ERROR, VS_TRACE_ERROR_INVALID_ARGUMENT,
                   "their allocation histories differ: %u allocations at the larger batch, %u at "
                   "the smaller, %" G_GINT64_FORMAT " without partner (at most %" G_GINT64_FORMAT
                   " allowed)",
                   na, nb, unmatched, allowed);
      return -1;
    }
  return unmatched;
}

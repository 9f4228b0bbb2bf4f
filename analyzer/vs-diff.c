/* SPDX-License-Identifier: MIT */
/* vs-diff.c — comparing two traces (see vs-diff.h).  Each trace is
 * reduced to the same facts — summary, roles, sites at the peak,
 * diagnosis — and the facts are paired by device index and name.
 */
#include "vs-diff.h"
#include "vs-blocks.h"
#include "vs-diagnose.h"
#include "vs-format.h"
#include "vs-roles.h"
#include "vs-summary.h"

#include <string.h>

static void
row_clear (gpointer data)
{
  g_free (((VsDiffRow *)data)->name);
}

/* The facts of one trace: "section/device/name" -> value (gint64*), and
 * the keys in first-seen order. */
typedef struct
{
  GHashTable *values;
  GPtrArray *order;
} Facts;

static void
facts_put (Facts *f, const char *section, gint64 device, const char *name, gint64 value)
{
  char *key = g_strdup_printf ("%s\x1f%" G_GINT64_FORMAT "\x1f%s", section, device, name);
  gint64 *old = g_hash_table_lookup (f->values, key);

  if (old != NULL)
    {
      *old += value;
      g_free (key);
      return;
    }
  g_ptr_array_add (f->order, g_strdup (key));
  g_hash_table_insert (f->values, key, g_memdup2 (&value, sizeof value));
}

static gboolean
collect (VsTrace *trace, Facts *f, guint max_sites, GError **error)
{
  const GPtrArray *devices = vs_trace_get_devices (trace);
  g_autoptr (VsDiagnosis) dx = vs_diagnose (trace, 0, error);

  if (dx == NULL)
    return FALSE;
  for (guint i = 0; i < dx->devices->len; i++)
    {
      const VsDeviceDiagnosis *dd = g_ptr_array_index (dx->devices, i);
      gint64 idx = dd->device->idx;

      facts_put (f, "peak", idx, "peak_allocated_bytes", dd->all.peak_allocated_bytes);
      facts_put (f, "peak", idx, "peak_reserved_bytes", dd->all.peak_reserved_bytes);
      if (dd->all.peak_device_bytes != VS_UNKNOWN)
        facts_put (f, "peak", idx, "peak_device_bytes", dd->all.peak_device_bytes);
      for (VsRole r = 0; r < VS_N_ROLES; r++)
        facts_put (f, "role", idx, vs_role_name (r), dd->roles.bytes[r]);
      for (guint s = 0; dd->sites != NULL && s < dd->sites->len; s++)
        {
          const VsGroup *g = &g_array_index (dd->sites, VsGroup, s);

          if (max_sites > 0 && s >= max_sites)
            break;
          facts_put (f, "site", idx, g->site[0] != '\0' ? g->site : "(no stack)", g->bytes);
        }
      facts_put (f, "fragmentation", idx, "peak_reserved_minus_allocated_bytes",
                 MAX (dd->allocator.peak_reserved_bytes - dd->allocator.peak_allocated_bytes, 0));
      facts_put (f, "failures", idx, "failed_alloc_count", dd->all.failed_alloc_count);
    }
  for (guint i = 0; i < dx->findings->len; i++)
    {
      const VsFinding *x = g_ptr_array_index (dx->findings, i);
      const VsDeviceInfo *d = vs_trace_lookup_device (trace, x->device_id);

      facts_put (f, "finding", d != NULL ? d->idx : -1, vs_finding_name (x->kind), 1);
    }
  (void)devices;
  return TRUE;
}

static void
facts_init (Facts *f)
{
  f->values = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  f->order = g_ptr_array_new_with_free_func (g_free);
}

static void
facts_clear (Facts *f)
{
  g_hash_table_unref (f->values);
  g_ptr_array_unref (f->order);
}

static const char *const sections[]
    = { "peak", "role", "site", "fragmentation", "failures", "finding" };

GArray *
vs_diff (VsTrace *a, VsTrace *b, guint max_sites, GError **error)
{
  GArray *rows;
  Facts fa, fb;
  g_autoptr (GPtrArray) keys = g_ptr_array_new ();
  g_autoptr (GHashTable) seen = g_hash_table_new (g_str_hash, g_str_equal);

  g_return_val_if_fail (a != NULL && b != NULL, NULL);
  facts_init (&fa);
  facts_init (&fb);
  if (!collect (a, &fa, max_sites, error) || !collect (b, &fb, max_sites, error))
    {
      facts_clear (&fa);
      facts_clear (&fb);
      return NULL;
    }
  for (guint i = 0; i < fa.order->len; i++)
    if (g_hash_table_add (seen, g_ptr_array_index (fa.order, i)))
      g_ptr_array_add (keys, g_ptr_array_index (fa.order, i));
  for (guint i = 0; i < fb.order->len; i++)
    if (g_hash_table_add (seen, g_ptr_array_index (fb.order, i)))
      g_ptr_array_add (keys, g_ptr_array_index (fb.order, i));

  rows = g_array_new (FALSE, TRUE, sizeof (VsDiffRow));
  g_array_set_clear_func (rows, row_clear);
  /* Section by section, then device, keeping each trace's order. */
  for (guint s = 0; s < G_N_ELEMENTS (sections); s++)
    for (guint i = 0; i < keys->len; i++)
      {
        const char *key = g_ptr_array_index (keys, i);
        g_auto (GStrv) parts = g_strsplit (key, "\x1f", 3);
        const gint64 *va = g_hash_table_lookup (fa.values, key);
        const gint64 *vb = g_hash_table_lookup (fb.values, key);
        gboolean absent_is_zero;
        VsDiffRow r = { 0 };

        if (strcmp (parts[0], sections[s]) != 0)
          continue;
        /* A site or finding missing from one trace holds nothing there. */
        absent_is_zero = strcmp (parts[0], "site") == 0 || strcmp (parts[0], "finding") == 0
                         || strcmp (parts[0], "role") == 0;
        r.section = sections[s];
        r.device = g_ascii_strtoll (parts[1], NULL, 10);
        r.name = g_strdup (parts[2]);
        r.is_bytes = strcmp (r.section, "failures") != 0 && strcmp (r.section, "finding") != 0;
        r.a = va != NULL ? *va : absent_is_zero ? 0 : VS_UNKNOWN;
        r.b = vb != NULL ? *vb : absent_is_zero ? 0 : VS_UNKNOWN;
        r.delta = r.a != VS_UNKNOWN && r.b != VS_UNKNOWN ? r.b - r.a : VS_UNKNOWN;
        g_array_append_val (rows, r);
      }
  facts_clear (&fa);
  facts_clear (&fb);
  return rows;
}

VsTable *
vs_diff_table (GArray *rows)
{
  static const VsColumnSpec cols[] = {
    { "section", VS_COLUMN_TEXT }, { "device", VS_COLUMN_INT }, { "name", VS_COLUMN_TEXT },
    { "unit", VS_COLUMN_TEXT },    { "a", VS_COLUMN_INT },      { "b", VS_COLUMN_INT },
    { "delta", VS_COLUMN_INT },
  };
  VsTable *t = vs_table_new ("Two traces side by side: A, B and the delta B - A.");

  g_return_val_if_fail (rows != NULL, NULL);
  vs_table_add_columns (t, cols, G_N_ELEMENTS (cols));
  for (guint i = 0; i < rows->len; i++)
    {
      const VsDiffRow *r = &g_array_index (rows, VsDiffRow, i);
      guint c = 0;

      vs_table_add_row (t);
      vs_table_set_text (t, c++, r->section);
      vs_table_set_int (t, c++, r->device);
      vs_table_set_text (t, c++, r->name);
      vs_table_set_text (t, c++, r->is_bytes ? "bytes" : "count");
      vs_table_set_int (t, c++, r->a);
      vs_table_set_int (t, c++, r->b);
      vs_table_set_int (t, c++, r->delta);
    }
  return t;
}

static char *
value_text (const VsDiffRow *r, gint64 v, gboolean signed_)
{
  if (v == VS_UNKNOWN)
    return g_strdup ("-");
  if (!r->is_bytes)
    return g_strdup_printf (signed_ && v > 0 ? "+%" G_GINT64_FORMAT : "%" G_GINT64_FORMAT, v);
  if (signed_ && v != 0)
    {
      g_autofree char *b = vs_format_bytes (v < 0 ? -v : v);

      return g_strdup_printf ("%s%s", v < 0 ? "-" : "+", b);
    }
  return vs_format_bytes (v);
}

void
vs_diff_write_text (GArray *rows, const char *name_a, const char *name_b, guint width, GString *out)
{
  /* The values are text: a numeric kind, to right-align them, would
   * format them again. */
  static const VsColumnSpec text_cols[] = {
    { "device", VS_COLUMN_INT }, { "section", VS_COLUMN_TEXT }, { "name", VS_COLUMN_TEXT },
    { "A", VS_COLUMN_TEXT },     { "B", VS_COLUMN_TEXT },       { "B - A", VS_COLUMN_TEXT },
  };
  g_autoptr (VsTable) t = vs_table_new (NULL);

  g_return_if_fail (rows != NULL && out != NULL);
  g_string_append_printf (out, "A: %s\nB: %s\n\n", name_a, name_b);
  vs_table_add_columns (t, text_cols, G_N_ELEMENTS (text_cols));
  for (guint i = 0; i < rows->len; i++)
    {
      const VsDiffRow *r = &g_array_index (rows, VsDiffRow, i);
      g_autofree char *a = value_text (r, r->a, FALSE);
      g_autofree char *b = value_text (r, r->b, FALSE);
      g_autofree char *d = value_text (r, r->delta, TRUE);

      /* Unchanged zeros say nothing. */
      if (r->a == 0 && r->b == 0)
        continue;
      vs_table_add_row (t);
      vs_table_set_int (t, 0, r->device);
      vs_table_set_text (t, 1, r->section);
      vs_table_set_text (t, 2, r->name);
      vs_table_set_text (t, 3, a);
      vs_table_set_text (t, 4, b);
      vs_table_set_text (t, 5, d);
    }
  vs_table_write_text_fitted (t, out, 0, width);
}

/* SPDX-License-Identifier: MIT */
/* vs-compare.c — whether two runs are comparable, and their alignment by
 * iteration (see vs-compare.h).  Facts come from the trace's device rows,
 * the allocator settings (vs-settings.h) and meta 'command_line'.
 */
#include "vs-compare.h"
#include "vs-format.h"
#include "vs-growth.h"
#include "vs-settings.h"

#include <math.h>
#include <string.h>

static void
difference_free (gpointer p)
{
  VsCompareDifference *d = p;

  g_free (d->text);
  g_free (d);
}

static void
add (GPtrArray *out, VsCompareDifferenceKind kind, char *text)
{
  VsCompareDifference *d = g_new0 (VsCompareDifference, 1);

  d->kind = kind;
  d->text = text;
  g_ptr_array_add (out, d);
}

/* A device's name and capacity as one phrase ("NVIDIA H200 (139.81 GiB)"). */
static char *
device_phrase (const VsDeviceInfo *d)
{
  g_autofree char *cap = d->total_bytes != VS_UNKNOWN ? vs_format_bytes (d->total_bytes) : NULL;

  if (cap == NULL)
    return g_strdup (d->name != NULL ? d->name : "an unknown GPU");
  return g_strdup_printf ("%s (%s)", d->name != NULL ? d->name : "an unknown GPU", cap);
}

static void
compare_devices (VsTrace *a, VsTrace *b, GPtrArray *out)
{
  const GPtrArray *da = vs_trace_get_devices (a);
  const GPtrArray *db = vs_trace_get_devices (b);

  if (da->len != db->len)
    add (out, VS_COMPARE_DIFFERS_GPU,
         g_strdup_printf ("A used %u GPU%s, B %u", da->len, da->len == 1 ? "" : "s", db->len));
  for (guint i = 0; i < da->len; i++)
    {
      const VsDeviceInfo *x = g_ptr_array_index (da, i);
      const VsDeviceInfo *y = vs_trace_find_device_by_idx (b, x->idx);
      gboolean names_differ, sizes_differ;

      if (y == NULL)
        continue;
      names_differ = x->name != NULL && y->name != NULL && strcmp (x->name, y->name) != 0;
      sizes_differ = x->total_bytes != VS_UNKNOWN && y->total_bytes != VS_UNKNOWN
                     && x->total_bytes != y->total_bytes;
      if (names_differ || sizes_differ)
        {
          g_autofree char *pa = device_phrase (x);
          g_autofree char *pb = device_phrase (y);

          add (out, VS_COMPARE_DIFFERS_GPU,
               g_strdup_printf ("GPU %" G_GINT64_FORMAT ": %s in A, %s in B", x->idx, pa, pb));
        }
    }
}

/* What differs between two devices' allocator settings, as "name: A's
 * value in A, B's in B" parts joined by "; " (NULL when nothing known
 * differs). */
static char *
settings_differ (const VsAllocatorSettings *x, const VsAllocatorSettings *y)
{
  g_autoptr (GString) out = g_string_new (NULL);

  if (x->expandable_segments >= 0 && y->expandable_segments >= 0
      && x->expandable_segments != y->expandable_segments)
    g_string_append_printf (out, "expandable segments %s in A, %s in B",
                            x->expandable_segments ? "on" : "off",
                            y->expandable_segments ? "on" : "off");
  if (x->memory_fraction > 0 && y->memory_fraction > 0
      && fabs (x->memory_fraction - y->memory_fraction) > 1e-9)
    g_string_append_printf (out, "%smemory fraction %.3g in A, %.3g in B", out->len > 0 ? "; " : "",
                            x->memory_fraction, y->memory_fraction);
  if (x->alloc_conf != NULL && y->alloc_conf != NULL && strcmp (x->alloc_conf, y->alloc_conf) != 0)
    g_string_append_printf (out, "%sPYTORCH_CUDA_ALLOC_CONF “%s” in A, “%s” in B",
                            out->len > 0 ? "; " : "", x->alloc_conf, y->alloc_conf);
  return out->len > 0 ? g_string_free (g_steal_pointer (&out), FALSE) : NULL;
}

static void
compare_settings (VsTrace *a, VsTrace *b, GPtrArray *out)
{
  const GPtrArray *da = vs_trace_get_devices (a);

  for (guint i = 0; i < da->len; i++)
    {
      const VsDeviceInfo *x = g_ptr_array_index (da, i);
      const VsDeviceInfo *y = vs_trace_find_device_by_idx (b, x->idx);
      VsAllocatorSettings sa, sb;
      g_autofree char *text = NULL;

      if (y == NULL)
        continue;
      vs_allocator_settings_read (a, x->id, &sa);
      vs_allocator_settings_read (b, y->id, &sb);
      text = settings_differ (&sa, &sb);
      if (text != NULL)
        add (out, VS_COMPARE_DIFFERS_SETTINGS,
             g_strdup_printf ("GPU %" G_GINT64_FORMAT ": %s", x->idx, text));
      vs_allocator_settings_clear (&sa);
      vs_allocator_settings_clear (&sb);
    }
}

/* See vs-compare.h. */
GPtrArray *
vs_compare_differences (VsTrace *a, VsTrace *b)
{
  GPtrArray *out = g_ptr_array_new_with_free_func (difference_free);
  g_autofree char *ca = NULL;
  g_autofree char *cb = NULL;

  g_return_val_if_fail (a != NULL && b != NULL, out);
  compare_devices (a, b, out);
  compare_settings (a, b, out);
  ca = vs_trace_dup_meta (a, "command_line");
  cb = vs_trace_dup_meta (b, "command_line");
  if (ca != NULL && cb != NULL && ca[0] != '\0' && cb[0] != '\0' && strcmp (ca, cb) != 0)
    add (out, VS_COMPARE_DIFFERS_PROGRAM, g_strdup_printf ("A ran “%s”, B ran “%s”", ca, cb));
  return out;
}

/* See vs-compare.h. */
const char *
vs_compare_difference_title (VsCompareDifferenceKind kind)
{
  switch (kind)
    {
    case VS_COMPARE_DIFFERS_GPU:
      return "The GPUs differ";
    case VS_COMPARE_DIFFERS_SETTINGS:
      return "The allocator settings differ";
    case VS_COMPARE_DIFFERS_PROGRAM:
    default:
      return "The programs differ";
    }
}

/* Appends text wrapped at width columns (counted in characters), the
 * first line after first_indent characters already written, the next
 * ones indented by indent spaces. */
static void
append_wrapped (GString *out, const char *text, guint width, guint first_indent, guint indent)
{
  g_auto (GStrv) words = g_strsplit (text, " ", -1);
  guint col = first_indent;

  for (guint i = 0; words[i] != NULL; i++)
    {
      guint len = (guint)g_utf8_strlen (words[i], -1);

      if (i > 0 && width > 0 && col + 1 + len > width)
        {
          g_string_append_c (out, '\n');
          for (guint k = 0; k < indent; k++)
            g_string_append_c (out, ' ');
          col = indent;
        }
      else if (i > 0)
        {
          g_string_append_c (out, ' ');
          col++;
        }
      g_string_append (out, words[i]);
      col += len;
    }
  g_string_append_c (out, '\n');
}

/* See vs-compare.h. */
void
vs_compare_write_differences (GPtrArray *differences, guint width, GString *out)
{
  g_return_if_fail (differences != NULL && out != NULL);
  if (differences->len == 0)
    return;
  g_string_append (out, "\nThe runs are not alike:\n");
  for (guint i = 0; i < differences->len; i++)
    {
      const VsCompareDifference *d = g_ptr_array_index (differences, i);
      g_autofree char *item
          = g_strdup_printf ("- %s: %s", vs_compare_difference_title (d->kind), d->text);

      append_wrapped (out, item, width, 0, 2);
    }
}

/* The start of the first iteration of device idx in trace; FALSE when
 * it has none (error set only when a query failed). */
static gboolean
first_iteration (VsTrace *trace, gint64 idx, gint64 *start_ns, GError **error)
{
  const VsDeviceInfo *d = vs_trace_find_device_by_idx (trace, idx);
  g_autoptr (VsIterations) it = NULL;

  if (d == NULL)
    return FALSE;
  it = vs_iterations_find (trace, d->id, 0, error);
  if (it == NULL || it->iterations->len == 0)
    return FALSE;
  *start_ns = g_array_index (it->iterations, VsIteration, 0).time_ns;
  return TRUE;
}

/* See vs-compare.h. */
gboolean
vs_compare_iteration_offset (VsTrace *a, VsTrace *b, gint64 device_idx, gint64 *offset_ns,
                             GError **error)
{
  gint64 ta = 0, tb = 0;

  g_return_val_if_fail (a != NULL && b != NULL && offset_ns != NULL, FALSE);
  if (!first_iteration (a, device_idx, &ta, error) || !first_iteration (b, device_idx, &tb, error))
    return FALSE;
  *offset_ns = tb - ta;
  return TRUE;
}

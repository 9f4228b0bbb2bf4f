/* SPDX-License-Identifier: MIT */
/* vs-diagnose-text.c — a diagnosis as one screen of text: at most
 * MAX_LINES lines of at most `width` columns (see
 * vs_diagnosis_write_text()).  Lines are built in a list first so the
 * findings that do not fit can be counted and named instead.
 */
#include "vs-diagnose.h"
#include "vs-format.h"
#include "vs-stack.h"

#include <string.h>

#define MAX_LINES 40

/* Appends text to lines, wrapped at width: the first line starts with
 * first, the others with as many spaces as indent. */
static void
wrap (GPtrArray *lines, const char *first, guint indent, const char *text, guint width)
{
  g_auto (GStrv) words = g_strsplit (text, " ", -1);
  GString *line = g_string_new (first);
  guint len = g_utf8_strlen (first, -1);

  for (guint i = 0; words[i] != NULL; i++)
    {
      guint w = g_utf8_strlen (words[i], -1);

      if (words[i][0] == '\0')
        continue;
      if (len > indent && len + 1 + w > width)
        {
          g_ptr_array_add (lines, g_string_free (line, FALSE));
          line = g_string_new (NULL);
          for (guint k = 0; k < indent; k++)
            g_string_append_c (line, ' ');
          len = indent;
        }
      if (len > indent && line->str[line->len - 1] != ' ')
        {
          g_string_append_c (line, ' ');
          len++;
        }
      /* A word longer than a line (a long path) is cut with an ellipsis. */
      if (len + w > width && width > len + 1)
        {
          const char *end = g_utf8_offset_to_pointer (words[i], width - len - 1);

          g_string_append_len (line, words[i], end - words[i]);
          g_string_append (line, "…");
          len = width;
        }
      else
        {
          g_string_append (line, words[i]);
          len += w;
        }
    }
  g_ptr_array_add (lines, g_string_free (line, FALSE));
}

static char *
fmt_bytes (gint64 n)
{
  return vs_format_bytes (MAX (n, 0));
}

/* An instant for people: its time, or its event number when the trace's
 * times are only event order (meta time_axis 'order'). */
static char *
fmt_instant (VsTrace *trace, gint64 time_ns, gint64 seq)
{
  g_autofree char *axis = vs_trace_dup_meta (trace, "time_axis");

  if (g_strcmp0 (axis, "order") == 0 && seq != VS_UNKNOWN)
    return g_strdup_printf ("event %" G_GINT64_FORMAT, seq);
  if (time_ns == VS_UNKNOWN)
    return g_strdup ("?");
  return vs_format_duration (time_ns);
}

static void
device_lines (VsTrace *trace, const VsDeviceDiagnosis *dd, guint n_devices, GPtrArray *lines,
              guint width)
{
  const VsDeviceInfo *d = dd->device;
  g_autofree char *cap = d->total_bytes != VS_UNKNOWN ? fmt_bytes (d->total_bytes) : NULL;
  g_autofree char *settings = vs_allocator_settings_describe (&dd->settings);
  g_autoptr (GString) head = g_string_new (NULL);
  g_autoptr (GString) roles = g_string_new (NULL);
  g_autofree char *alloc = fmt_bytes (dd->all.peak_allocated_bytes);
  g_autofree char *reserved = fmt_bytes (dd->all.peak_reserved_bytes);
  g_autofree char *when
      = fmt_instant (trace, dd->all.peak_allocated_time_ns, dd->all.peak_allocated_seq);
  g_autofree char *peak = NULL;
  guint max_sites = n_devices > 1 ? 2 : 3;

  g_string_append_printf (head, "Device %" G_GINT64_FORMAT, d->idx);
  if (d->name != NULL)
    g_string_append_printf (head, ", %s", d->name);
  if (cap != NULL)
    g_string_append_printf (head, ", %s", cap);
  if (dd->settings.pytorch)
    g_string_append_printf (head, "; PyTorch allocator: %s",
                            settings != NULL ? settings : "settings unknown");
  wrap (lines, "", 4, head->str, width);

  if (dd->all.peak_allocated_seq == VS_UNKNOWN)
    {
      wrap (lines, "  ", 4, "Nothing was allocated.", width);
      return;
    }
  if (dd->allocator_id != 0 && dd->allocator_at_peak_bytes != VS_UNKNOWN)
    {
      /* Both parts at the same instant as the whole, and outside as the
       * outside-allocator finding counts it. */
      const VsAllocatorInfo *a = vs_trace_lookup_allocator (trace, dd->allocator_id);
      g_autofree char *mine = fmt_bytes (dd->allocator_at_peak_bytes);
      g_autofree char *at
          = fmt_instant (trace, dd->all.peak_reserved_time_ns, dd->all.peak_reserved_seq);

      if (dd->outside_at_peak_bytes != VS_UNKNOWN)
        {
          g_autofree char *outside = fmt_bytes (dd->outside_at_peak_bytes);

          peak = g_strdup_printf ("Peak: %s allocated at %s; %s reserved at most, at %s (%s by "
                                  "%s, %s outside every allocator)",
                                  alloc, when, reserved, at, mine,
                                  a != NULL ? a->name : "its allocator", outside);
        }
      else
        peak = g_strdup_printf ("Peak: %s allocated at %s; %s reserved at most, at %s (%s by %s)",
                                alloc, when, reserved, at, mine,
                                a != NULL ? a->name : "its allocator");
    }
  else
    peak = g_strdup_printf ("Peak: %s allocated at %s; %s reserved at most", alloc, when, reserved);
  wrap (lines, "  ", 4, peak, width);

  /* Roles largest first (a stable selection: ties keep VsRole order). */
  {
    VsRole order[VS_N_ROLES];

    for (VsRole r = 0; r < VS_N_ROLES; r++)
      order[r] = r;
    for (guint i = 1; i < VS_N_ROLES; i++)
      for (guint j = i; j > 0 && dd->roles.bytes[order[j]] > dd->roles.bytes[order[j - 1]]; j--)
        {
          VsRole tmp = order[j];

          order[j] = order[j - 1];
          order[j - 1] = tmp;
        }
    for (guint i = 0; i < VS_N_ROLES; i++)
      {
        VsRole r = order[i];
        g_autofree char *b = fmt_bytes (dd->roles.bytes[r]);
        int pct = (int)(100 * dd->roles.bytes[r] / MAX (dd->roles.total_bytes, 1));

        if (dd->roles.bytes[r] <= 0)
          continue;
        if (pct > 0)
          g_string_append_printf (roles, "%s%s %s (%d%%)", roles->len > 0 ? ", " : "",
                                  vs_role_name (r), b, pct);
        else
          g_string_append_printf (roles, "%s%s %s (<1%%)", roles->len > 0 ? ", " : "",
                                  vs_role_name (r), b);
      }
  }
  if (roles->len > 0)
    wrap (lines, "  By role: ", 4, roles->str, width);
  for (guint i = 0; dd->sites != NULL && i < dd->sites->len && i < max_sites; i++)
    {
      const VsGroup *g = &g_array_index (dd->sites, VsGroup, i);
      g_autofree char *b = fmt_bytes (g->bytes);
      g_autofree char *text = g_strdup_printf ("%s%10s  %s", i == 0 ? "  By site: " : "           ",
                                               b, g->site[0] != '\0' ? g->site : "(no stack)");
      glong n = g_utf8_strlen (text, -1);

      /* One line each: a long site is cut at the end of the line. */
      if (n > (glong)width)
        {
          char *cut = g_strndup (text, g_utf8_offset_to_pointer (text, width - 1) - text);

          g_ptr_array_add (lines, g_strconcat (cut, "…", NULL));
          g_free (cut);
        }
      else
        g_ptr_array_add (lines, g_steal_pointer (&text));
    }
  if (dd->iterations != NULL && dd->iterations->iterations->len > 0)
    {
      g_autofree char *text = NULL;

      if (dd->growth.bytes_per_iteration > 0)
        {
          g_autofree char *per = fmt_bytes (dd->growth.bytes_per_iteration);

          text = dd->growth.stepped
                     ? g_strdup_printf ("%u from %s; allocated memory grows %s per %s on "
                                        "average, in %" G_GINT64_FORMAT " steps",
                                        dd->iterations->iterations->len, dd->iterations->what, per,
                                        dd->iterations->unit, dd->growth.growing)
                     : g_strdup_printf ("%u from %s; allocated memory grows %s per %s",
                                        dd->iterations->iterations->len, dd->iterations->what, per,
                                        dd->iterations->unit);
        }
      else
        text = g_strdup_printf ("%u from %s; no growth from one to the next",
                                dd->iterations->iterations->len, dd->iterations->what);
      wrap (lines, "  Iterations: ", 4, text, width);
    }
}

void
vs_diagnosis_write_text (VsTrace *trace, const VsDiagnosis *dx, guint width, GString *out)
{
  g_autoptr (GPtrArray) lines = g_ptr_array_new_with_free_func (g_free);
  g_autofree char *command = vs_trace_dup_meta (trace, "command_line");
  g_autofree char *status = vs_trace_dup_meta (trace, "exit_status");
  g_autofree char *base = g_path_get_basename (vs_trace_get_path (trace));
  g_autoptr (GString) title = g_string_new (NULL);
  guint shown = 0;

  g_return_if_fail (trace != NULL && dx != NULL && out != NULL);
  width = MAX (width, 40);
  g_string_append_printf (title, "Diagnosis of %s", base);
  if (command != NULL)
    g_string_append_printf (title, ": %s", command);
  if (status != NULL)
    g_string_append_printf (title, " (exit status %s)", status);
  wrap (lines, "", 4, title->str, width);
  for (guint i = 0; i < dx->devices->len; i++)
    {
      g_ptr_array_add (lines, g_strdup (""));
      device_lines (trace, g_ptr_array_index (dx->devices, i), dx->devices->len, lines, width);
    }
  g_ptr_array_add (lines, g_strdup (""));

  if (dx->findings->len == 0)
    {
      const VsDeviceDiagnosis *dd
          = dx->devices->len > 0 ? g_ptr_array_index (dx->devices, 0) : NULL;

      wrap (lines, "", 0,
            "No problem found: no failed allocation, no growth per iteration, no leak at exit; "
            "fragmentation and memory outside the allocators are below the thresholds.",
            width);
      if (dd != NULL && dd->lower_peak != NULL)
        {
          g_autofree char *text = g_strdup_printf ("%s.", dd->lower_peak);

          wrap (lines, "To lower the peak: ", 4, text, width);
        }
    }
  else
    {
      g_autofree char *head = g_strdup_printf ("Findings (%u):", dx->findings->len);

      g_ptr_array_add (lines, g_steal_pointer (&head));
    }

  for (guint i = 0; i < dx->findings->len; i++)
    {
      const VsFinding *f = g_ptr_array_index (dx->findings, i);
      const VsDeviceInfo *d = vs_trace_lookup_device (trace, f->device_id);
      g_autoptr (GPtrArray) block = g_ptr_array_new_with_free_func (g_free);
      g_autoptr (GString) head = g_string_new (NULL);
      g_autofree char *b = fmt_bytes (f->bytes);
      g_autofree char *first = g_strdup_printf ("%u. ", i + 1);
      guint reserve = i + 1 < dx->findings->len ? 1 : 0;

      g_string_append_printf (head, "%s: %s on device %" G_GINT64_FORMAT " (%s)",
                              vs_finding_name (f->kind), b, d != NULL ? d->idx : -1,
                              vs_trace_allocator_name (trace, f->allocator_id));
      if (f->count != VS_UNKNOWN && f->kind <= VS_FINDING_OOM_FRAGMENTATION)
        {
          g_string_append_printf (head, ", %" G_GINT64_FORMAT " failure%s", f->count,
                                  f->count == 1 ? "" : "s");
          if (f->run_count != VS_UNKNOWN)
            g_string_append_printf (head, " kept of %" G_GINT64_FORMAT " in the run", f->run_count);
        }
      else if (f->count != VS_UNKNOWN && f->kind == VS_FINDING_GROWTH_PER_ITERATION)
        g_string_append_printf (head, " per %s over %" G_GINT64_FORMAT,
                                f->unit ? f->unit : "iteration", f->count);
      else if (f->count != VS_UNKNOWN)
        g_string_append_printf (head, " in %" G_GINT64_FORMAT " blocks", f->count);
      if (f->time_ns != VS_UNKNOWN)
        {
          g_autofree char *t = fmt_instant (trace, f->time_ns, f->seq);

          g_string_append_printf (head, ", at %s", t);
        }
      if (f->site != NULL)
        g_string_append_printf (head, ", site %s", f->site);
      wrap (block, first, 3, head->str, width);
      wrap (block, "   Evidence: ", 5, f->evidence, width);
      if (f->remedy != NULL)
        {
          g_autofree char *text = NULL;

          if (f->saving_bytes != VS_UNKNOWN && f->saving_bytes > 0)
            {
              g_autofree char *s = fmt_bytes (f->saving_bytes);

              text = g_strdup_printf ("%s (expected saving ~%s).", f->remedy, s);
            }
          else
            text = g_strdup_printf ("%s.", f->remedy);
          wrap (block, "   Remedy: ", 5, text, width);
        }
      if (lines->len + block->len + reserve > MAX_LINES)
        break;
      for (guint k = 0; k < block->len; k++)
        g_ptr_array_add (lines, g_strdup (g_ptr_array_index (block, k)));
      shown++;
    }
  if (shown < dx->findings->len)
    {
      g_autofree char *more = g_strdup_printf (
          "… %u more finding%s: vramscope report %s --format csv diagnose",
          dx->findings->len - shown, dx->findings->len - shown == 1 ? "" : "s", base);

      while (lines->len >= MAX_LINES)
        g_ptr_array_remove_index (lines, lines->len - 1);
      wrap (lines, "", 4, more, width);
    }
  for (guint i = 0; i < lines->len && i < MAX_LINES; i++)
    {
      const char *l = g_ptr_array_index (lines, i);
      gsize n = strlen (l);

      while (n > 0 && l[n - 1] == ' ')
        n--;
      g_string_append_len (out, l, n);
      g_string_append_c (out, '\n');
    }
}

/* SPDX-License-Identifier: MIT */
/* vs-cell-format.c — the closures the panes' column templates call. */
#include "vs-cell-format.h"

#include <glib/gi18n.h>

#include "vs-analyzer.h"
#include "vs-time-format.h"

/* See vs-cell-format.h. */
char *
vs_cell_format_bytes (gpointer unused, gint64 bytes)
{
  return vs_format_bytes (bytes);
}

/* See vs-cell-format.h. */
char *
vs_cell_format_known_bytes (gpointer unused, gint64 bytes)
{
  return bytes == VS_UNKNOWN ? NULL : vs_format_bytes (bytes);
}

/* See vs-cell-format.h. */
char *
vs_cell_format_positive_bytes (gpointer unused, gint64 bytes)
{
  return bytes > 0 ? vs_format_bytes (bytes) : NULL;
}

/* See vs-cell-format.h. */
char *
vs_cell_format_time (gpointer unused, gint64 t)
{
  return t == VS_UNKNOWN ? g_strdup (_("before the trace")) : vs_format_time (t);
}

/* See vs-cell-format.h. */
char *
vs_cell_format_address (gpointer unused, guint64 address)
{
  return g_strdup_printf ("0x%" G_GINT64_MODIFIER "x", address);
}

/* See vs-cell-format.h. */
char *
vs_cell_format_count (gpointer unused, gint64 n)
{
  return g_strdup_printf ("%" G_GINT64_FORMAT, n);
}

/* See vs-cell-format.h. */
char *
vs_cell_format_percent (gpointer unused, double percent)
{
  return g_strdup_printf ("%.1f %%", percent);
}

/* See vs-cell-format.h. */
char *
vs_cell_format_site (gpointer unused, const char *site)
{
  return g_strdup (site != NULL && *site != '\0' ? site : _("(no stack)"));
}

/* See vs-cell-format.h. */
void
vs_cell_format_add_callbacks (GtkWidgetClass *klass)
{
  g_return_if_fail (GTK_IS_WIDGET_CLASS (klass));
#define ADD(name, fn) gtk_widget_class_bind_template_callback_full (klass, name, G_CALLBACK (fn))
  ADD ("format_bytes", vs_cell_format_bytes);
  ADD ("format_known_bytes", vs_cell_format_known_bytes);
  ADD ("format_positive_bytes", vs_cell_format_positive_bytes);
  ADD ("format_time", vs_cell_format_time);
  ADD ("format_address", vs_cell_format_address);
  ADD ("format_count", vs_cell_format_count);
  ADD ("format_percent", vs_cell_format_percent);
  ADD ("format_site", vs_cell_format_site);
#undef ADD
}

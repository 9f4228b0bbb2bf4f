/* SPDX-License-Identifier: MIT */
/* vs-table-json.c — a report table as one JSON document (RFC 8259).
 *
 * Typed values: integers for counts, bytes and ns, strings for text and
 * stacks, null for what the trace does not know.  Strings are made valid
 * UTF-8 (a bad byte becomes U+FFFD) and escaped; no JSON library is needed
 * for this one shape, and the CLI links GLib statically.
 */
#include "vs-table.h"
#include "vs-trace.h"

static const char *
kind_name (VsColumnKind kind)
{
  switch (kind)
    {
    case VS_COLUMN_TEXT:
      return "text";
    case VS_COLUMN_INT:
      return "int";
    case VS_COLUMN_BYTES:
      return "bytes";
    case VS_COLUMN_TIME:
      return "time_ns";
    case VS_COLUMN_DURATION:
      return "duration_ns";
    case VS_COLUMN_STACK:
      return "stack";
    }
  g_assert_not_reached ();
}

/* Appends s as a JSON string. */
static void
append_string (GString *out, const char *s)
{
  g_autofree char *valid = g_utf8_make_valid (s, -1);

  g_string_append_c (out, '"');
  for (const char *p = valid; *p != '\0'; p++)
    {
      guchar c = (guchar)*p;

      if (c == '"' || c == '\\')
        {
          g_string_append_c (out, '\\');
          g_string_append_c (out, (char)c);
        }
      else if (c == '\n')
        g_string_append (out, "\\n");
      else if (c == '\t')
        g_string_append (out, "\\t");
      else if (c == '\r')
        g_string_append (out, "\\r");
      else if (c < 0x20 || c == 0x7f)
        g_string_append_printf (out, "\\u%04x", c);
      else
        g_string_append_c (out, (char)c);
    }
  g_string_append_c (out, '"');
}

void
vs_table_write_json (VsTable *table, const char *report, GString *out)
{
  guint n_columns, n_rows;

  g_return_if_fail (table != NULL && report != NULL && out != NULL);
  n_columns = vs_table_get_n_columns (table);
  n_rows = vs_table_get_n_rows (table);
  g_string_append (out, "{\n  \"report\": ");
  append_string (out, report);
  g_string_append (out, ",\n  \"title\": ");
  append_string (out, vs_table_get_title (table));
  g_string_append (out, ",\n  \"columns\": [");
  for (guint c = 0; c < n_columns; c++)
    {
      g_string_append (out, c == 0 ? "\n    {\"name\": " : ",\n    {\"name\": ");
      append_string (out, vs_table_get_column_name (table, c));
      g_string_append_printf (out, ", \"kind\": \"%s\"}",
                              kind_name (vs_table_get_column_kind (table, c)));
    }
  g_string_append (out, n_columns > 0 ? "\n  ],\n  \"rows\": [" : "],\n  \"rows\": [");
  for (guint r = 0; r < n_rows; r++)
    {
      g_string_append (out, r == 0 ? "\n    {" : ",\n    {");
      for (guint c = 0; c < n_columns; c++)
        {
          VsColumnKind kind = vs_table_get_column_kind (table, c);

          if (c > 0)
            g_string_append (out, ", ");
          append_string (out, vs_table_get_column_name (table, c));
          g_string_append (out, ": ");
          if (!vs_table_cell_is_known (table, r, c))
            g_string_append (out, "null");
          else if (kind == VS_COLUMN_TEXT || kind == VS_COLUMN_STACK)
            append_string (out, vs_table_get_text (table, r, c));
          else
            g_string_append_printf (out, "%" G_GINT64_FORMAT, vs_table_get_int (table, r, c));
        }
      g_string_append_c (out, '}');
    }
  g_string_append (out, n_rows > 0 ? "\n  ]\n}\n" : "]\n}\n");
}

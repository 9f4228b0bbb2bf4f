/* SPDX-License-Identifier: MIT */
/* vs-table.c — typed tables and their CSV form (text: vs-table-text.c).
 *
 * Cells are stored as integers or strings with an explicit "known" flag,
 * so "unknown" is never confused with 0: CSV writes an empty field, text a
 * dash.
 */
#include "vs-table.h"
#include "vs-format.h"
#include "vs-trace-format.h"

#include <string.h>

typedef struct
{
  gboolean known;
  gint64 value;
  char *text;
} Cell;

typedef struct
{
  char *name;
  VsColumnKind kind;
} Column;

struct _VsTable
{
  char *title;
  gboolean event_order; /* times are event numbers */
  char **text_order;    /* columns text output shows first, or NULL */
  gboolean text_blocks; /* text output: a block per row */
  GArray *columns;      /* Column */
  GPtrArray *rows;      /* Cell[n_columns] */
};

static void
column_clear (gpointer data)
{
  g_free (((Column *)data)->name);
}

VsTable *
vs_table_new (const char *title)
{
  VsTable *t = g_new0 (VsTable, 1);

  t->title = g_strdup (title != NULL ? title : "");
  t->columns = g_array_new (FALSE, TRUE, sizeof (Column));
  g_array_set_clear_func (t->columns, column_clear);
  t->rows = g_ptr_array_new ();
  return t;
}

void
vs_table_free (VsTable *table)
{
  if (table == NULL)
    return;
  for (guint r = 0; r < table->rows->len; r++)
    {
      Cell *cells = g_ptr_array_index (table->rows, r);

      for (guint c = 0; c < table->columns->len; c++)
        g_free (cells[c].text);
      g_free (cells);
    }
  g_ptr_array_unref (table->rows);
  g_array_unref (table->columns);
  g_strfreev (table->text_order);
  g_free (table->title);
  g_free (table);
}

void
vs_table_add_column (VsTable *table, const char *name, VsColumnKind kind)
{
  Column col = { g_strdup (name), kind };

  g_return_if_fail (table != NULL && name != NULL);
  g_return_if_fail (table->rows->len == 0);
  g_array_append_val (table->columns, col);
}

void
vs_table_add_columns (VsTable *table, const VsColumnSpec *specs, guint n)
{
  for (guint c = 0; c < n; c++)
    vs_table_add_column (table, specs[c].name, specs[c].kind);
}

void
vs_table_add_row (VsTable *table)
{
  g_return_if_fail (table != NULL);
  g_ptr_array_add (table->rows, g_new0 (Cell, table->columns->len));
}

static Cell *
last_cell (VsTable *table, guint column)
{
  g_return_val_if_fail (table != NULL && table->rows->len > 0, NULL);
  g_return_val_if_fail (column < table->columns->len, NULL);
  return &((Cell *)g_ptr_array_index (table->rows, table->rows->len - 1))[column];
}

void
vs_table_set_int (VsTable *table, guint column, gint64 value)
{
  Cell *cell = last_cell (table, column);

  if (cell == NULL)
    return;
  cell->known = value != VS_UNKNOWN;
  cell->value = value;
}

void
vs_table_set_text (VsTable *table, guint column, const char *value)
{
  Cell *cell = last_cell (table, column);

  if (cell == NULL)
    return;
  g_free (cell->text);
  cell->text = g_strdup (value);
  cell->known = value != NULL;
}

void
vs_table_truncate (VsTable *table, guint n_rows)
{
  g_return_if_fail (table != NULL);
  for (guint r = n_rows; r < table->rows->len; r++)
    {
      Cell *cells = g_ptr_array_index (table->rows, r);

      for (guint c = 0; c < table->columns->len; c++)
        g_free (cells[c].text);
      g_free (cells);
    }
  if (table->rows->len > n_rows)
    g_ptr_array_set_size (table->rows, n_rows);
}

VsTable *
vs_table_concat (VsTable *const *tables, const char *const *labels, guint n,
                 const char *label_column)
{
  VsTable *t;
  guint n_columns;

  g_return_val_if_fail (tables != NULL && labels != NULL && n > 0, NULL);
  g_return_val_if_fail (label_column != NULL, NULL);
  n_columns = tables[0]->columns->len;
  t = vs_table_new (tables[0]->title);
  t->event_order = tables[0]->event_order;
  t->text_order = g_strdupv (tables[0]->text_order);
  t->text_blocks = tables[0]->text_blocks;
  vs_table_add_column (t, label_column, VS_COLUMN_TEXT);
  for (guint c = 0; c < n_columns; c++)
    vs_table_add_column (t, vs_table_get_column_name (tables[0], c),
                         vs_table_get_column_kind (tables[0], c));
  for (guint i = 0; i < n; i++)
    {
      VsTable *from = tables[i];

      g_return_val_if_fail (from->columns->len == n_columns, t);
      for (guint r = 0; r < from->rows->len; r++)
        {
          const Cell *cells = g_ptr_array_index (from->rows, r);

          vs_table_add_row (t);
          vs_table_set_text (t, 0, labels[i]);
          for (guint c = 0; c < n_columns; c++)
            {
              Cell *to = last_cell (t, c + 1);

              to->known = cells[c].known;
              to->value = cells[c].value;
              to->text = g_strdup (cells[c].text);
            }
        }
    }
  return t;
}

guint
vs_table_get_n_columns (VsTable *table)
{
  return table->columns->len;
}

guint
vs_table_get_n_rows (VsTable *table)
{
  return table->rows->len;
}

const char *
vs_table_get_title (VsTable *table)
{
  return table->title;
}

const char *
vs_table_get_column_name (VsTable *table, guint column)
{
  g_return_val_if_fail (column < table->columns->len, NULL);
  return g_array_index (table->columns, Column, column).name;
}

VsColumnKind
vs_table_get_column_kind (VsTable *table, guint column)
{
  g_return_val_if_fail (column < table->columns->len, VS_COLUMN_TEXT);
  return g_array_index (table->columns, Column, column).kind;
}

static const Cell *
get_cell (VsTable *table, guint row, guint column)
{
  g_return_val_if_fail (row < table->rows->len && column < table->columns->len, NULL);
  return &((Cell *)g_ptr_array_index (table->rows, row))[column];
}

gboolean
vs_table_cell_is_known (VsTable *table, guint row, guint column)
{
  const Cell *c = get_cell (table, row, column);

  return c != NULL && c->known;
}

gint64
vs_table_get_int (VsTable *table, guint row, guint column)
{
  const Cell *c = get_cell (table, row, column);

  return c != NULL && c->known && c->text == NULL ? c->value : VS_UNKNOWN;
}

const char *
vs_table_get_text (VsTable *table, guint row, guint column)
{
  const Cell *c = get_cell (table, row, column);

  return c != NULL ? c->text : NULL;
}

static void
csv_field (GString *out, const char *s)
{
  if (strpbrk (s, ",\"\r\n") == NULL)
    {
      g_string_append (out, s);
      return;
    }
  g_string_append_c (out, '"');
  for (const char *p = s; *p; p++)
    {
      if (*p == '"')
        g_string_append_c (out, '"');
      g_string_append_c (out, *p);
    }
  g_string_append_c (out, '"');
}

void
vs_table_write_csv (VsTable *table, GString *out)
{
  for (guint c = 0; c < table->columns->len; c++)
    {
      if (c > 0)
        g_string_append_c (out, ',');
      csv_field (out, g_array_index (table->columns, Column, c).name);
    }
  g_string_append_c (out, '\n');
  for (guint r = 0; r < table->rows->len; r++)
    {
      Cell *cells = g_ptr_array_index (table->rows, r);

      for (guint c = 0; c < table->columns->len; c++)
        {
          if (c > 0)
            g_string_append_c (out, ',');
          if (!cells[c].known)
            continue;
          if (cells[c].text != NULL)
            csv_field (out, cells[c].text);
          else
            g_string_append_printf (out, "%" G_GINT64_FORMAT, cells[c].value);
        }
      g_string_append_c (out, '\n');
    }
}

/* vs_table_set_<flag> and vs_table_get_<flag> (see vs-table.h) for the
 * table's boolean field flag. */
#define VS_TABLE_FLAG_ACCESSORS(flag)                                                              \
  void vs_table_set_##flag (VsTable *table, gboolean flag)                                         \
  {                                                                                                \
    g_return_if_fail (table != NULL);                                                              \
    table->flag = flag;                                                                            \
  }                                                                                                \
                                                                                                   \
  gboolean vs_table_get_##flag (VsTable *table)                                                    \
  {                                                                                                \
    g_return_val_if_fail (table != NULL, FALSE);                                                   \
    return table->flag;                                                                            \
  }

VS_TABLE_FLAG_ACCESSORS (event_order)
VS_TABLE_FLAG_ACCESSORS (text_blocks)

void
vs_table_set_text_order (VsTable *table, const char *const *names)
{
  g_return_if_fail (table != NULL);
  g_strfreev (table->text_order);
  table->text_order = g_strdupv ((char **)names);
}

const char *const *
vs_table_get_text_order (VsTable *table)
{
  g_return_val_if_fail (table != NULL, NULL);
  return (const char *const *)table->text_order;
}

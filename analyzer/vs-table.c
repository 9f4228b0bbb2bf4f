/* vs-table.c — typed tables and their CSV and text forms.
 *
 * Cells are stored as integers or strings with an explicit "known" flag,
 * so "unknown" is never confused with 0: CSV writes an empty field, text a
 * dash.
 */
#include "vs-table.h"
#include "vs-trace-writer.h"

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
  GArray *columns; /* Column */
  GPtrArray *rows; /* Cell[n_columns] */
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

static char *
format_cell (const Column *col, const Cell *cell)
{
  if (!cell->known)
    return g_strdup ("-");
  /* Text from a file may hold anything: nothing in it reaches the
   * terminal as a control sequence or breaks the table's lines. */
  if (cell->text != NULL)
    return vs_format_printable (cell->text);
  switch (col->kind)
    {
    case VS_COLUMN_BYTES:
      return vs_format_bytes (cell->value);
    case VS_COLUMN_TIME:
    case VS_COLUMN_DURATION:
      return vs_format_duration (cell->value);
    case VS_COLUMN_TEXT:
    case VS_COLUMN_STACK:
    case VS_COLUMN_INT:
    default:
      return g_strdup_printf ("%" G_GINT64_FORMAT, cell->value);
    }
}

/* How many frames of a stack text output lists before summing up the rest. */
#define TEXT_STACK_FRAMES 12

/* Appends the frames of stack (joined by " <- ") as indented lines. */
static void
write_stack_lines (GString *out, const char *stack)
{
  g_auto (GStrv) frames = g_strsplit (stack, " <- ", -1);
  guint n = g_strv_length (frames);

  for (guint i = 0; i < n && i < TEXT_STACK_FRAMES; i++)
    {
      g_autofree char *frame = vs_format_printable (frames[i]);

      g_string_append_printf (out, "        %s %s\n", i == 0 ? "at" : "by", frame);
    }
  if (n > TEXT_STACK_FRAMES)
    g_string_append_printf (out, "        … %u more frames\n", n - TEXT_STACK_FRAMES);
}

void
vs_table_write_text (VsTable *table, GString *out)
{
  guint nc = table->columns->len, nr = table->rows->len;
  g_autofree gsize *widths = g_new0 (gsize, nc);
  g_autoptr (GPtrArray) texts = g_ptr_array_new_with_free_func (g_free);
  guint last = 0; /* the last column in the aligned table */

  if (table->title[0] != '\0')
    g_string_append_printf (out, "%s\n\n", table->title);
  for (guint c = 0; c < nc; c++)
    {
      widths[c] = g_utf8_strlen (g_array_index (table->columns, Column, c).name, -1);
      if (g_array_index (table->columns, Column, c).kind != VS_COLUMN_STACK)
        last = c;
    }
  for (guint r = 0; r < nr; r++)
    {
      Cell *cells = g_ptr_array_index (table->rows, r);

      for (guint c = 0; c < nc; c++)
        {
          char *s = format_cell (&g_array_index (table->columns, Column, c), &cells[c]);

          widths[c] = MAX (widths[c], (gsize)g_utf8_strlen (s, -1));
          g_ptr_array_add (texts, s);
        }
    }

  for (guint r = 0; r <= nr; r++)
    {
      GString *line = g_string_new (NULL);

      for (guint c = 0; c < nc; c++)
        {
          const Column *col = &g_array_index (table->columns, Column, c);
          const char *s = r == 0 ? col->name : g_ptr_array_index (texts, (r - 1) * nc + c);
          gsize pad = widths[c] - g_utf8_strlen (s, -1);
          gboolean right = col->kind != VS_COLUMN_TEXT;

          if (col->kind == VS_COLUMN_STACK)
            continue;
          if (c > 0)
            g_string_append (line, "  ");
          if (right)
            for (gsize i = 0; i < pad; i++)
              g_string_append_c (line, ' ');
          g_string_append (line, s);
          if (!right && c < last)
            for (gsize i = 0; i < pad; i++)
              g_string_append_c (line, ' ');
        }
      /* No trailing blanks. */
      while (line->len > 0 && line->str[line->len - 1] == ' ')
        g_string_truncate (line, line->len - 1);
      g_string_append_len (out, line->str, line->len);
      g_string_append_c (out, '\n');
      g_string_free (line, TRUE);
      for (guint c = 0; r > 0 && c < nc; c++)
        {
          Cell *cells = g_ptr_array_index (table->rows, r - 1);

          if (g_array_index (table->columns, Column, c).kind == VS_COLUMN_STACK && cells[c].known
              && cells[c].text != NULL && cells[c].text[0] != '\0')
            write_stack_lines (out, cells[c].text);
        }
    }
  if (nr == 0)
    g_string_append (out, "(no rows)\n");
}

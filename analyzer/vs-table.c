/* vs-table.c — typed tables and their CSV and text forms.
 *
 * Cells are stored as integers or strings with an explicit "known" flag,
 * so "unknown" is never confused with 0: CSV writes an empty field, text a
 * dash.
 */
#include "vs-table.h"
#include "vs-format.h"
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
  gboolean event_order; /* times are event numbers */
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

void
vs_table_set_event_order (VsTable *table, gboolean event_order)
{
  g_return_if_fail (table != NULL);
  table->event_order = event_order;
}

gboolean
vs_table_get_event_order (VsTable *table)
{
  g_return_val_if_fail (table != NULL, FALSE);
  return table->event_order;
}

static char *
format_cell (const VsTable *table, const Column *col, const Cell *cell)
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
      if (table->event_order)
        return g_strdup_printf ("#%" G_GINT64_FORMAT, cell->value);
      return vs_format_duration (cell->value);
    case VS_COLUMN_DURATION:
      if (table->event_order)
        return g_strdup_printf ("%" G_GINT64_FORMAT " events", cell->value);
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

/* s cut to at most width characters, the middle replaced by "…" (paths
 * keep their file name and line, at the end). */
static char *
elide (const char *s, gsize width)
{
  gsize n = g_utf8_strlen (s, -1);
  gsize head, tail;
  GString *out;

  if (n <= width || width < 5)
    return g_strdup (s);
  head = (width - 1) / 3;
  tail = width - 1 - head;
  out = g_string_new (NULL);
  g_string_append_len (out, s, g_utf8_offset_to_pointer (s, head) - s);
  g_string_append (out, "…");
  g_string_append (out, g_utf8_offset_to_pointer (s, n - tail));
  return g_string_free (out, FALSE);
}

/* Appends the frames of stack (joined by " <- ") as indented lines of at
 * most width columns. */
static void
write_stack_lines (GString *out, const char *stack, guint width)
{
  g_auto (GStrv) frames = g_strsplit (stack, " <- ", -1);
  guint n = g_strv_length (frames);

  for (guint i = 0; i < n && i < TEXT_STACK_FRAMES; i++)
    {
      g_autofree char *printable = vs_format_printable (frames[i]);
      g_autofree char *frame = elide (printable, width > 11 ? width - 11 : width);

      g_string_append_printf (out, "        %s %s\n", i == 0 ? "at" : "by", frame);
    }
  if (n > TEXT_STACK_FRAMES)
    g_string_append_printf (out, "        … %u more frames\n", n - TEXT_STACK_FRAMES);
}

void
vs_table_write_text (VsTable *table, GString *out)
{
  vs_table_write_text_fitted (table, out, 0, 0);
}

void
vs_table_write_text_fitted (VsTable *table, GString *out, guint limit, guint width)
{
  guint nc = table->columns->len, nr = table->rows->len;
  guint shown = limit > 0 ? MIN (limit, nr) : nr;
  g_autofree gsize *widths = g_new0 (gsize, nc);
  g_autoptr (GPtrArray) texts = g_ptr_array_new_with_free_func (g_free);
  guint last = 0; /* the last column in the aligned table */

  if (table->title[0] != '\0')
    {
      /* The title wrapped at width (words are never cut). */
      g_auto (GStrv) words = g_strsplit (table->title, " ", -1);
      gsize len = 0;

      for (guint i = 0; words[i] != NULL; i++)
        {
          gsize w = g_utf8_strlen (words[i], -1);

          if (len > 0 && width > 0 && len + 1 + w > width)
            {
              g_string_append_c (out, '\n');
              len = 0;
            }
          else if (len > 0)
            {
              g_string_append_c (out, ' ');
              len++;
            }
          g_string_append (out, words[i]);
          len += w;
        }
      g_string_append (out, "\n\n");
    }
  if (table->event_order)
    g_string_append (out, "Times are event numbers (#1 = the first history entry): the "
                          "snapshot has no timestamps.\n\n");
  for (guint c = 0; c < nc; c++)
    {
      widths[c] = g_utf8_strlen (g_array_index (table->columns, Column, c).name, -1);
      if (g_array_index (table->columns, Column, c).kind != VS_COLUMN_STACK)
        last = c;
    }
  for (guint r = 0; r < shown; r++)
    {
      Cell *cells = g_ptr_array_index (table->rows, r);

      for (guint c = 0; c < nc; c++)
        {
          char *s = format_cell (table, &g_array_index (table->columns, Column, c), &cells[c]);

          widths[c] = MAX (widths[c], (gsize)g_utf8_strlen (s, -1));
          g_ptr_array_add (texts, s);
        }
    }

  /* Too wide: narrow text columns from the right (key columns come
   * first), never below 8. */
  if (width > 0)
    {
      /* A table too wide even with its text columns at their narrowest
       * (many numeric columns) is left as it is: cutting names would not
       * make it fit. */
      gsize narrowest = 0;

      for (guint c = 0; c < nc; c++)
        {
          const Column *col = &g_array_index (table->columns, Column, c);

          if (col->kind != VS_COLUMN_STACK)
            narrowest
                += (col->kind == VS_COLUMN_TEXT ? MIN (widths[c], 8) : widths[c]) + (c > 0 ? 2 : 0);
        }
      if (narrowest > width)
        width = 0;
    }
  if (width > 0)
    for (;;)
      {
        gsize total = 0;
        guint at = nc;

        for (guint c = 0; c < nc; c++)
          {
            const Column *col = &g_array_index (table->columns, Column, c);

            if (col->kind == VS_COLUMN_STACK)
              continue;
            total += widths[c] + (c > 0 ? 2 : 0);
            if (col->kind == VS_COLUMN_TEXT && widths[c] > 8)
              {
                at = c;
              }
          }
        if (total <= width || at == nc)
          break;
        widths[at] = total - width + 8 >= widths[at] ? 8 : widths[at] - (total - width);
      }

  for (guint r = 0; r <= shown; r++)
    {
      GString *line = g_string_new (NULL);

      for (guint c = 0; c < nc; c++)
        {
          const Column *col = &g_array_index (table->columns, Column, c);
          const char *raw = r == 0 ? col->name : g_ptr_array_index (texts, (r - 1) * nc + c);
          g_autofree char *s = elide (raw, widths[c]);
          gsize len = g_utf8_strlen (s, -1);
          gsize pad = widths[c] > len ? widths[c] - len : 0;
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
            write_stack_lines (out, cells[c].text, width > 0 ? width : G_MAXUINT);
        }
    }
  if (nr == 0)
    g_string_append (out, "(no rows)\n");
  else if (shown < nr)
    g_string_append_printf (out, "… %u more row%s (--limit 0 shows all)\n", nr - shown,
                            nr - shown == 1 ? "" : "s");
}

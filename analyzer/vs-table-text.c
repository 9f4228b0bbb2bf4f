/* SPDX-License-Identifier: MIT */
/* vs-table-text.c — a report table as text that fits a width.
 *
 * Columns get human headers ("time", "requested": the CSV name without its
 * unit suffix), split over two lines where that keeps a column narrow; the
 * key columns the report names come first.  When the table is wider than
 * the width, in turn: columns holding one value in every row are said
 * once above the table; text columns are narrowed (names cut in the
 * middle, a frame `file:line function` keeping its file name, line and
 * function), the key ones last; and then a table that asks for it (as
 * `oom` does), or one of few rows whose key columns alone do not fit,
 * becomes a block per row; any other leaves out its last columns (the
 * key ones last) and says which.  Every line of the result is at most
 * width columns
 * (given width >= 40), however long the cells.
 */
#include "vs-table.h"
#include "vs-format.h"
#include "vs-trace-format.h"

#include <string.h>

/* How many frames of a stack text output lists before summing up the rest. */
#define TEXT_STACK_FRAMES 12
/* A text column is never narrowed below this. */
#define MIN_TEXT_WIDTH 16
/* A table of at most this many rows that does not fit becomes blocks. */
#define MAX_BLOCK_ROWS 6
/* The indent of a stack's frame lines ("        at "). */
#define STACK_INDENT 11

char *
vs_table_column_header (const char *name)
{
  static const char *const suffixes[] = { "_bytes", "_ns" };
  g_autofree char *s = g_strdup (name);

  g_return_val_if_fail (name != NULL, NULL);
  for (guint i = 0; i < G_N_ELEMENTS (suffixes); i++)
    if (g_str_has_suffix (s, suffixes[i]) && strlen (s) > strlen (suffixes[i]))
      s[strlen (s) - strlen (suffixes[i])] = '\0';
  g_strdelimit (s, "_", ' ');
  return g_steal_pointer (&s);
}

static gsize
text_width (const char *s)
{
  return (gsize)g_utf8_strlen (s, -1);
}

/* s cut to at most width characters, the middle replaced by "…". */
static char *
elide_middle (const char *s, gsize width)
{
  gsize n = text_width (s);
  gsize head, tail;
  GString *out;

  if (n <= width)
    return g_strdup (s);
  if (width < 2)
    return g_strdup ("…");
  head = (width - 1) / 3;
  tail = width - 1 - head;
  out = g_string_new (NULL);
  g_string_append_len (out, s, g_utf8_offset_to_pointer (s, (glong)head) - s);
  g_string_append (out, "…");
  g_string_append (out, g_utf8_offset_to_pointer (s, (glong)(n - tail)));
  return g_string_free (out, FALSE);
}

/* s cut to at most width characters.  A frame `dir/file.py:12 function`
 * loses its folders first (`…/file.py:12 function`), then the middle of
 * its function (a C++ signature); anything else its middle. */
static char *
elide (const char *s, gsize width)
{
  const char *space, *colon, *slash;
  gsize n = text_width (s);

  if (n <= width)
    return g_strdup (s);
  space = strchr (s, ' ');
  colon = space != NULL ? g_strrstr_len (s, space - s, ":") : strrchr (s, ':');
  slash = colon != NULL ? g_strrstr_len (s, colon - s, "/") : NULL;
  if (colon != NULL && g_ascii_isdigit (colon[1]))
    {
      const char *file = slash != NULL ? slash + 1 : s;
      g_autofree char *rest = NULL;
      gsize file_w;

      /* "…/" + file:line, and the function cut to what is left. */
      rest = slash != NULL ? g_strconcat ("…/", file, NULL) : g_strdup (file);
      if (text_width (rest) <= width)
        return g_steal_pointer (&rest);
      file_w = space != NULL ? text_width (file) - text_width (space) : text_width (file);
      if (space != NULL && file_w + 1 + 2 + (slash != NULL ? 2 : 0) <= width)
        {
          g_autofree char *head = g_strndup (file, space - file);
          gsize left = width - text_width (head) - 1 - (slash != NULL ? 2 : 0);
          g_autofree char *fn = elide_middle (space + 1, left);

          return g_strdup_printf ("%s%s %s", slash != NULL ? "…/" : "", head, fn);
        }
    }
  return elide_middle (s, width);
}

static char *
format_cell (VsTable *table, guint row, guint column)
{
  const char *text;
  gint64 value;

  if (!vs_table_cell_is_known (table, row, column))
    return g_strdup ("-");
  /* Text from a file may hold anything: nothing in it reaches the
   * terminal as a control sequence or breaks the table's lines. */
  text = vs_table_get_text (table, row, column);
  if (text != NULL)
    return vs_format_printable (text);
  value = vs_table_get_int (table, row, column);
  switch (vs_table_get_column_kind (table, column))
    {
    case VS_COLUMN_BYTES:
      return vs_format_bytes (value);
    case VS_COLUMN_TIME:
      if (vs_table_get_event_order (table))
        return g_strdup_printf ("#%" G_GINT64_FORMAT, value);
      return vs_format_duration (value);
    case VS_COLUMN_DURATION:
      if (vs_table_get_event_order (table))
        return g_strdup_printf ("%" G_GINT64_FORMAT " events", value);
      return vs_format_duration (value);
    case VS_COLUMN_TEXT:
    case VS_COLUMN_STACK:
    case VS_COLUMN_INT:
    default:
      return g_strdup_printf ("%" G_GINT64_FORMAT, value);
    }
}

/* Appends text wrapped at spaces to lines of at most width columns (0: no
 * limit), a word longer than width cut in the middle. */
static void
append_wrapped (GString *out, const char *text, gsize width, const char *indent)
{
  g_auto (GStrv) words = g_strsplit (text, " ", -1);
  gsize len = 0, ind = text_width (indent);

  g_string_append (out, indent);
  len = ind;
  for (guint i = 0; words[i] != NULL; i++)
    {
      g_autofree char *w = width > ind ? elide (words[i], width - ind) : g_strdup (words[i]);
      gsize wl = text_width (w);

      if (len > ind && width > 0 && len + 1 + wl > width)
        {
          g_string_append_c (out, '\n');
          g_string_append (out, indent);
          len = ind;
        }
      else if (len > ind)
        {
          g_string_append_c (out, ' ');
          len++;
        }
      g_string_append (out, w);
      len += wl;
    }
  g_string_append_c (out, '\n');
}

/* Appends the frames of stack (joined by " <- ") as indented lines of at
 * most width columns. */
static void
write_stack_lines (GString *out, const char *stack, gsize width)
{
  g_auto (GStrv) frames = g_strsplit (stack, " <- ", -1);
  guint n = g_strv_length (frames);

  for (guint i = 0; i < n && i < TEXT_STACK_FRAMES; i++)
    {
      g_autofree char *printable = vs_format_printable (frames[i]);
      g_autofree char *frame
          = elide (printable, width > STACK_INDENT + 8 ? width - STACK_INDENT : G_MAXSIZE);

      g_string_append_printf (out, "        %s %s\n", i == 0 ? "at" : "by", frame);
    }
  if (n > TEXT_STACK_FRAMES)
    g_string_append_printf (out, "        … %u more frames\n", n - TEXT_STACK_FRAMES);
}

/* One shown column. */
typedef struct
{
  guint column;
  VsColumnKind kind;
  char *header;     /* human header, one line */
  char *top;        /* the header's first line when split, else NULL */
  char *bottom;     /* its last line */
  gsize value_w;    /* widest cell */
  gsize width;      /* the column's width as laid out */
  gboolean hoisted; /* one value in every row: said above the table */
  gboolean key;     /* named by the table's text order */
} Shown;

static void
shown_clear (gpointer data)
{
  Shown *s = data;

  g_free (s->header);
  g_free (s->top);
  g_free (s->bottom);
}

/* Splits s->header over two lines when that narrows the column below the
 * header's width, at the space that gives the narrowest column. */
static void
lay_out_header (Shown *s)
{
  gsize hw = text_width (s->header);
  gsize best = hw;
  const char *cut = NULL;

  g_clear_pointer (&s->top, g_free);
  g_free (s->bottom);
  for (const char *p = strchr (s->header, ' '); p != NULL; p = strchr (p + 1, ' '))
    {
      gsize left = (gsize)g_utf8_pointer_to_offset (s->header, p);
      gsize w = MAX (left, hw - left - 1);

      if (w < best)
        best = w, cut = p;
    }
  if (s->value_w >= hw || cut == NULL)
    {
      s->bottom = g_strdup (s->header);
      s->width = MAX (s->value_w, hw);
      return;
    }
  s->top = g_strndup (s->header, cut - s->header);
  s->bottom = g_strdup (cut + 1);
  s->width = MAX (s->value_w, best);
}

/* The width of the table of the shown columns not hoisted (of those only
 * the key columns when keys_only), text columns at their width or at least
 * floor; *n (may be NULL) gets how many columns it counted. */
static gsize
columns_width (GArray *cols, gsize floor, gboolean keys_only, guint *n_counted)
{
  gsize total = 0;
  guint n = 0;

  for (guint i = 0; i < cols->len; i++)
    {
      const Shown *s = &g_array_index (cols, Shown, i);

      if (s->hoisted || (keys_only && !s->key))
        continue;
      total += (s->kind == VS_COLUMN_TEXT ? MIN (s->width, MAX (floor, text_width (s->bottom)))
                                          : s->width)
               + (n++ > 0 ? 2 : 0);
    }
  if (n_counted != NULL)
    *n_counted = n;
  return total;
}

/* The width of the table of the shown columns not hoisted, text columns
 * at their width or at least floor. */
static gsize
table_width (GArray *cols, gsize floor)
{
  return columns_width (cols, floor, FALSE, NULL);
}

/* Narrows text columns from the right until the table fits width, none
 * below MIN_TEXT_WIDTH (or its header), key columns only with key_too.
 * Returns whether it fits. */
static gboolean
narrow (GArray *cols, gsize width, gboolean key_too)
{
  for (;;)
    {
      gsize total = table_width (cols, G_MAXSIZE);
      Shown *at = NULL;

      if (total <= width)
        return TRUE;
      for (guint i = 0; i < cols->len; i++)
        {
          Shown *s = &g_array_index (cols, Shown, i);
          gsize floor = MAX (MIN_TEXT_WIDTH, text_width (s->bottom));

          if (!s->hoisted && s->kind == VS_COLUMN_TEXT && s->width > floor && (key_too || !s->key))
            at = s;
        }
      if (at == NULL)
        return FALSE;
      {
        gsize floor = MAX (MIN_TEXT_WIDTH, text_width (at->bottom));
        gsize over = total - width;

        at->width = at->width - floor <= over ? floor : at->width - over;
      }
    }
}

/* Leaves out columns from the right (key columns only with key_too, one
 * column always kept) until narrow() makes the rest fit, naming them in
 * left_out.  Returns whether the rest fits. */
static gboolean
leave_out (GArray *cols, gsize width, gboolean key_too, GString *left_out)
{
  while (!narrow (cols, width, key_too))
    {
      guint kept = 0, at = cols->len;

      for (guint i = 0; i < cols->len; i++)
        if (!g_array_index (cols, Shown, i).hoisted)
          kept++;
      for (guint i = cols->len; i > 0 && at == cols->len; i--)
        {
          const Shown *s = &g_array_index (cols, Shown, i - 1);

          if (!s->hoisted && (key_too || !s->key))
            at = i - 1;
        }
      if (at == cols->len || kept <= 1)
        return FALSE;
      g_string_prepend (left_out, g_array_index (cols, Shown, at).header);
      if (left_out->len > strlen (g_array_index (cols, Shown, at).header))
        g_string_insert (left_out, (gssize)strlen (g_array_index (cols, Shown, at).header), ", ");
      g_array_remove_index (cols, at);
    }
  return TRUE;
}

/* Whether the key columns alone (not hoisted) fit width: then a table
 * that leaves out the others reads better than blocks.  FALSE when the
 * table names no key column. */
static gboolean
keys_fit (GArray *cols, gsize width)
{
  guint n;
  gsize total = columns_width (cols, G_MAXSIZE, TRUE, &n);

  return n > 0 && total <= width;
}

static const char *
cell_text (GPtrArray *texts, guint n_columns, guint row, guint column)
{
  return g_ptr_array_index (texts, row * n_columns + column);
}

static void
append_padded (GString *line, const char *s, gsize width, gboolean right, gboolean last)
{
  gsize len = text_width (s);
  gsize pad = width > len ? width - len : 0;

  if (right)
    for (gsize i = 0; i < pad; i++)
      g_string_append_c (line, ' ');
  g_string_append (line, s);
  if (!right && !last)
    for (gsize i = 0; i < pad; i++)
      g_string_append_c (line, ' ');
}

static void
end_line (GString *out, GString *line)
{
  while (line->len > 0 && line->str[line->len - 1] == ' ')
    g_string_truncate (line, line->len - 1);
  g_string_append_len (out, line->str, (gssize)line->len);
  g_string_append_c (out, '\n');
  g_string_truncate (line, 0);
}

/* Appends the stacks of row r below it. */
static void
write_row_stacks (VsTable *table, guint r, gsize width, GString *out)
{
  for (guint c = 0; c < vs_table_get_n_columns (table); c++)
    {
      const char *stack;

      if (vs_table_get_column_kind (table, c) != VS_COLUMN_STACK)
        continue;
      stack = vs_table_get_text (table, r, c);
      if (stack != NULL && stack[0] != '\0')
        write_stack_lines (out, stack, width);
    }
}

static void
write_table (VsTable *table, GArray *cols, GPtrArray *texts, guint shown, gsize width, GString *out)
{
  guint nc = vs_table_get_n_columns (table);
  g_autoptr (GString) line = g_string_new (NULL);
  gboolean two_lines = FALSE;
  guint last = 0;

  for (guint i = 0; i < cols->len; i++)
    {
      const Shown *s = &g_array_index (cols, Shown, i);

      if (!s->hoisted)
        last = i, two_lines |= s->top != NULL;
    }
  for (guint h = two_lines ? 0 : 1; h < 2; h++)
    {
      gboolean first = TRUE;

      for (guint i = 0; i < cols->len; i++)
        {
          const Shown *s = &g_array_index (cols, Shown, i);
          const char *part = h == 0 ? (s->top != NULL ? s->top : "") : s->bottom;
          g_autofree char *cut = NULL;

          if (s->hoisted)
            continue;
          cut = elide (part, s->width);
          if (!first)
            g_string_append (line, "  ");
          first = FALSE;
          append_padded (line, cut, s->width, s->kind != VS_COLUMN_TEXT, i == last);
        }
      end_line (out, line);
    }
  for (guint r = 0; r < shown; r++)
    {
      gboolean first = TRUE;

      for (guint i = 0; i < cols->len; i++)
        {
          const Shown *s = &g_array_index (cols, Shown, i);
          g_autofree char *cut = NULL;

          if (s->hoisted)
            continue;
          cut = elide (cell_text (texts, nc, r, s->column), s->width);
          if (!first)
            g_string_append (line, "  ");
          first = FALSE;
          append_padded (line, cut, s->width, s->kind != VS_COLUMN_TEXT, i == last);
        }
      end_line (out, line);
      write_row_stacks (table, r, width, out);
    }
}

/* A block per row: its first two columns on one line; under it each
 * other text column on a line of its own, then the numbers as "header
 * value" pairs in as many aligned columns as width holds. */
static void
write_blocks (VsTable *table, GArray *cols, GPtrArray *texts, guint shown, gsize width,
              GString *out)
{
  guint nc = vs_table_get_n_columns (table);
  g_autoptr (GString) line = g_string_new (NULL);
  g_autoptr (GArray) words = g_array_new (FALSE, FALSE, sizeof (guint));
  g_autoptr (GArray) numbers = g_array_new (FALSE, FALSE, sizeof (guint));
  gsize label_w = 0, value_w = 0, cell_w, per_line;
  guint heading[2], n_heading = 0;

  for (guint i = 0; i < cols->len; i++)
    {
      const Shown *s = &g_array_index (cols, Shown, i);

      if (s->hoisted)
        continue;
      if (n_heading < 2)
        {
          heading[n_heading++] = i;
          continue;
        }
      label_w = MAX (label_w, text_width (s->header));
      if (s->kind == VS_COLUMN_TEXT)
        {
          g_array_append_val (words, i);
          continue;
        }
      g_array_append_val (numbers, i);
      for (guint r = 0; r < shown; r++)
        value_w = MAX (value_w, text_width (cell_text (texts, nc, r, s->column)));
    }
  /* Cells of "label  value", three blanks apart, two in from the left. */
  value_w = MIN (value_w, width - 2 - label_w - 2);
  cell_w = label_w + 2 + value_w;
  per_line = MAX (1, (width - 2 + 3) / (cell_w + 3));
  for (guint r = 0; r < shown; r++)
    {
      g_autoptr (GString) head = g_string_new (NULL);

      if (r > 0)
        g_string_append_c (out, '\n');
      for (guint k = 0; k < n_heading; k++)
        {
          const Shown *s = &g_array_index (cols, Shown, heading[k]);

          g_string_append_printf (head, "%s%s %s", k > 0 ? "  " : "", s->header,
                                  cell_text (texts, nc, r, s->column));
        }
      {
        g_autofree char *cut = elide (head->str, width);

        g_string_append (out, cut);
        g_string_append_c (out, '\n');
      }
      for (guint k = 0; k < words->len; k++)
        {
          const Shown *s = &g_array_index (cols, Shown, g_array_index (words, guint, k));
          g_autofree char *indent = g_strnfill (2 + label_w + 2, ' ');
          g_autoptr (GString) wrapped = g_string_new (NULL);

          /* The value wrapped under itself, its first line after the
           * header. */
          append_wrapped (wrapped, cell_text (texts, nc, r, s->column), width, indent);
          g_string_append (line, "  ");
          append_padded (line, s->header, label_w, FALSE, FALSE);
          g_string_append (line, "  ");
          g_string_append (line, wrapped->str + strlen (indent));
          g_string_truncate (line, line->len - 1);
          end_line (out, line);
        }
      for (guint k = 0; k < numbers->len; k++)
        {
          const Shown *s = &g_array_index (cols, Shown, g_array_index (numbers, guint, k));
          g_autofree char *value = elide (cell_text (texts, nc, r, s->column), value_w);

          g_string_append (line, k % per_line == 0 ? "  " : "   ");
          append_padded (line, s->header, label_w, FALSE, FALSE);
          g_string_append (line, "  ");
          append_padded (line, value, value_w, TRUE, FALSE);
          if (k % per_line == per_line - 1 || k == numbers->len - 1)
            end_line (out, line);
        }
      write_row_stacks (table, r, width, out);
    }
}

/* Appends "header value · header value…" of the hoisted columns of row 0,
 * wrapped at width. */
static void
write_hoisted (GArray *cols, GPtrArray *texts, guint n_columns, gsize width, GString *out)
{
  g_autoptr (GString) s = g_string_new (NULL);

  for (guint i = 0; i < cols->len; i++)
    {
      const Shown *c = &g_array_index (cols, Shown, i);

      if (!c->hoisted)
        continue;
      g_string_append_printf (s, "%s%s %s", s->len > 0 ? " · " : "", c->header,
                              cell_text (texts, n_columns, 0, c->column));
    }
  if (s->len == 0)
    return;
  g_string_prepend (s, "In every row: ");
  append_wrapped (out, s->str, width, "");
  g_string_append_c (out, '\n');
}

/* The shown columns of table in text order: the columns it names first,
 * then the others; stack columns are written under their rows. */
static GArray *
shown_columns (VsTable *table, GPtrArray *texts, guint shown)
{
  guint nc = vs_table_get_n_columns (table);
  GArray *cols = g_array_new (FALSE, TRUE, sizeof (Shown));
  const char *const *order = vs_table_get_text_order (table);
  g_autofree gboolean *taken = g_new0 (gboolean, nc);

  g_array_set_clear_func (cols, shown_clear);
  for (guint pass = 0; pass < 2; pass++)
    for (guint k = 0; k < (pass == 0 ? (order != NULL ? g_strv_length ((char **)order) : 0) : nc);
         k++)
      for (guint c = 0; c < nc; c++)
        {
          Shown s = { 0 };

          if (taken[c] || vs_table_get_column_kind (table, c) == VS_COLUMN_STACK)
            continue;
          if (pass == 0 && strcmp (vs_table_get_column_name (table, c), order[k]) != 0)
            continue;
          if (pass == 1 && c != k)
            continue;
          taken[c] = TRUE;
          s.column = c;
          s.key = pass == 0;
          s.kind = vs_table_get_column_kind (table, c);
          s.header = vs_table_column_header (vs_table_get_column_name (table, c));
          /* Two columns that read the same without their unit keep it
           * ("largest_live_site", "largest_live_site_bytes"). */
          for (guint o = 0; o < nc; o++)
            {
              g_autofree char *other = NULL;

              if (o == c)
                continue;
              other = vs_table_column_header (vs_table_get_column_name (table, o));
              if (strcmp (other, s.header) == 0
                  && strlen (vs_table_get_column_name (table, c))
                         > strlen (vs_table_get_column_name (table, o)))
                {
                  g_free (s.header);
                  s.header
                      = g_strdelimit (g_strdup (vs_table_get_column_name (table, c)), "_", ' ');
                }
            }
          for (guint r = 0; r < shown; r++)
            s.value_w = MAX (s.value_w, text_width (cell_text (texts, nc, r, c)));
          lay_out_header (&s);
          g_array_append_val (cols, s);
        }
  return cols;
}

/* Marks the columns holding one value in every row of the table (two or
 * more rows), keeping at least one column in the table.  texts holds the
 * cells of the shown rows. */
static void
hoist_constant_columns (VsTable *table, GArray *cols, GPtrArray *texts)
{
  guint nc = vs_table_get_n_columns (table), nr = vs_table_get_n_rows (table);
  guint left = cols->len;

  if (nr < 2 || texts->len == 0)
    return;
  for (guint i = 0; i < cols->len && left > 1; i++)
    {
      Shown *s = &g_array_index (cols, Shown, i);
      const char *first = cell_text (texts, nc, 0, s->column);
      gboolean same = TRUE;

      for (guint r = 1; r < nr && same; r++)
        {
          g_autofree char *cell = format_cell (table, r, s->column);

          same = strcmp (cell, first) == 0;
        }
      if (same)
        s->hoisted = TRUE, left--;
    }
}

void
vs_table_write_text (VsTable *table, GString *out)
{
  vs_table_write_text_fitted (table, out, 0, 0);
}

void
vs_table_write_text_fitted (VsTable *table, GString *out, guint limit, guint width)
{
  guint nc = vs_table_get_n_columns (table), nr = vs_table_get_n_rows (table);
  guint shown = limit > 0 ? MIN (limit, nr) : nr;
  g_autoptr (GPtrArray) texts = g_ptr_array_new_with_free_func (g_free);
  g_autoptr (GArray) cols = NULL;
  g_autoptr (GString) left_out = g_string_new (NULL);
  gsize w = width > 0 ? MAX (width, 40) : G_MAXSIZE / 4;
  gboolean blocks = FALSE;

  g_return_if_fail (table != NULL && out != NULL);
  if (vs_table_get_title (table)[0] != '\0')
    {
      append_wrapped (out, vs_table_get_title (table), width > 0 ? w : 0, "");
      g_string_append_c (out, '\n');
    }
  if (vs_table_get_event_order (table))
    {
      append_wrapped (out,
                      "Times are event numbers (#1 = the first history entry): the snapshot "
                      "has no timestamps.",
                      width > 0 ? w : 0, "");
      g_string_append_c (out, '\n');
    }
  for (guint r = 0; r < shown; r++)
    for (guint c = 0; c < nc; c++)
      g_ptr_array_add (texts, format_cell (table, r, c));
  cols = shown_columns (table, texts, shown);

  if (width > 0 && vs_table_get_text_blocks (table))
    blocks = shown > 0;
  else if (width > 0 && table_width (cols, G_MAXSIZE) > w)
    {
      hoist_constant_columns (table, cols, texts);
      if (!narrow (cols, w, FALSE))
        {
          if (nr <= MAX_BLOCK_ROWS && !keys_fit (cols, w))
            blocks = TRUE;
          else if (!leave_out (cols, w, FALSE, left_out))
            leave_out (cols, w, TRUE, left_out);
        }
      write_hoisted (cols, texts, nc, w, out);
    }

  if (blocks)
    write_blocks (table, cols, texts, shown, w, out);
  else if (shown == 0 && width > 0 && vs_table_get_text_blocks (table))
    ; /* No block to write: "(no rows)" below. */
  else
    write_table (table, cols, texts, shown, width > 0 ? w : 0, out);
  if (left_out->len > 0)
    {
      g_autofree char *note = g_strdup_printf ("Left out to fit %" G_GSIZE_FORMAT
                                               " columns: %s (a larger --width or --format csv "
                                               "shows them).",
                                               w, left_out->str);

      append_wrapped (out, note, w, "");
    }
  if (nr == 0)
    g_string_append (out, "(no rows)\n");
  else if (shown < nr)
    g_string_append_printf (out, "… %u more row%s (--limit 0 shows all)\n", nr - shown,
                            nr - shown == 1 ? "" : "s");
}

/* SPDX-License-Identifier: MIT */
/* vs-table.h — a report as a table, written as CSV or aligned text.
 *
 * Every report is built as a VsTable of typed columns, so the CLI, tests
 * and the viewer share one result.  CSV (RFC 4180): a header row, fields
 * with `,` `"` CR or LF quoted, integers exact, an empty field for
 * VS_UNKNOWN.  Text: a title line, aligned columns, bytes in B/KiB/MiB/GiB,
 * times in ns/µs/ms/s, "-" for unknown, and stacks as indented frame lines
 * below their row.
 */
#pragma once

#include <glib.h>

#include "vs-format.h"

G_BEGIN_DECLS

typedef enum
{
  VS_COLUMN_TEXT,
  VS_COLUMN_INT,      /* a count or an id */
  VS_COLUMN_BYTES,    /* integer bytes */
  VS_COLUMN_TIME,     /* integer ns since the trace's start */
  VS_COLUMN_DURATION, /* integer ns */
  VS_COLUMN_STACK,    /* frames innermost first, joined by " <- ": CSV
                       * writes the text; text output lists the frames
                       * under their row instead of in a column */
} VsColumnKind;

typedef struct _VsTable VsTable;

/* A new empty table; title is the one-line explanation text output prints
 * above the table. */
VsTable *vs_table_new (const char *title);
void vs_table_free (VsTable *table);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (VsTable, vs_table_free)

/* Adds a column; all columns must be added before the first row. */
void vs_table_add_column (VsTable *table, const char *name, VsColumnKind kind);

/* A column's name and kind, for tables whose columns are declared in a
 * static list. */
typedef struct
{
  const char *name;
  VsColumnKind kind;
} VsColumnSpec;

/* Adds the n columns of specs in order (vs_table_add_column() each). */
void vs_table_add_columns (VsTable *table, const VsColumnSpec *specs, guint n);

/* Starts a new row whose cells are all unknown until set. */
void vs_table_add_row (VsTable *table);

/* Sets cell `column` of the last row; VS_UNKNOWN (INT64_MIN) or a NULL
 * string leaves it unknown. */
void vs_table_set_int (VsTable *table, guint column, gint64 value);
void vs_table_set_text (VsTable *table, guint column, const char *value);

/* Keeps the first n_rows rows (no-op when there are no more). */
void vs_table_truncate (VsTable *table, guint n_rows);

/* A new table of the rows of tables[0..n-1] (n >= 1, the same columns,
 * as in tables[0]), each row led by a text column named label_column
 * holding labels[i] of the table it came from; tables[0]'s title. */
VsTable *vs_table_concat (VsTable *const *tables, const char *const *labels, guint n,
                          const char *label_column);

guint vs_table_get_n_columns (VsTable *table);
guint vs_table_get_n_rows (VsTable *table);
const char *vs_table_get_title (VsTable *table);
const char *vs_table_get_column_name (VsTable *table, guint column);
VsColumnKind vs_table_get_column_kind (VsTable *table, guint column);
/* Whether the cell is known; an integer cell's value; a text cell's value
 * (NULL when unknown). */
gboolean vs_table_cell_is_known (VsTable *table, guint row, guint column);
gint64 vs_table_get_int (VsTable *table, guint row, guint column);
const char *vs_table_get_text (VsTable *table, guint row, guint column);

/* Says that the table's times are event numbers, not ns (a trace whose
 * time axis is the order of events, meta time_axis "order"): text output
 * then prints TIME cells as "#N", DURATION cells as "N events", and a
 * line saying so under the title.  CSV is unchanged (integers). */
void vs_table_set_event_order (VsTable *table, gboolean event_order);
gboolean vs_table_get_event_order (VsTable *table);

/* The columns text output shows first, in this order (a NULL-terminated
 * list of column names; names the table lacks are skipped; NULL: the
 * table's order).  CSV and JSON keep the table's order. */
void vs_table_set_text_order (VsTable *table, const char *const *names);
const char *const *vs_table_get_text_order (VsTable *table);

/* Says that text output fitted to a width writes a block per row (its
 * key columns on a line, the others as "header value" pairs under it)
 * rather than a table: for tables of many columns read one row at a time,
 * as the failures of `oom`. */
void vs_table_set_text_blocks (VsTable *table, gboolean blocks);
gboolean vs_table_get_text_blocks (VsTable *table);

/* A column's header in text output: its name without the unit suffix
 * ("_bytes", "_ns") and with spaces for underscores ("time_ns" → "time",
 * "requested_bytes" → "requested").  Returns a new string. */
char *vs_table_column_header (const char *name);

/* Appends the table as RFC 4180 CSV (CRLF-free: rows end with "\n"). */
void vs_table_write_csv (VsTable *table, GString *out);

/* Appends the title line and the aligned text table, with human headers
 * (vs_table_column_header()) and the text order's columns first. */
void vs_table_write_text (VsTable *table, GString *out);

/* The same, showing at most limit rows (0: all; a last line says how many
 * more there are) and fitted to width columns (0: no limit; else at least
 * 40), every line of it: headers split over two lines, then text columns
 * narrowed (cells cut in the middle with "…", a frame keeping its file
 * name, line and function), then columns with one value in every row said
 * once above the table, then a block per row (a table of few rows, or one
 * set to blocks) or the last columns left out with a line naming them. */
void vs_table_write_text_fitted (VsTable *table, GString *out, guint limit, guint width);

/* Appends the table as one JSON document: {"report": report, "title",
 * "columns": [{"name", "kind"}], "rows": [{column: value}]} with integers
 * for ints, bytes and ns, strings for text and stacks, null for unknown.
 * Kinds: text, int, bytes, time_ns, duration_ns, stack. */
void vs_table_write_json (VsTable *table, const char *report, GString *out);

G_END_DECLS

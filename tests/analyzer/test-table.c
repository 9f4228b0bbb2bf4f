/* SPDX-License-Identifier: MIT */
/* test-table.c — CSV (RFC 4180, empty for unknown) and text output of
 * report tables.
 */
#include <string.h>

#include <glib.h>

#include "vs-analyzer.h"

static VsTable *
sample_table (void)
{
  VsTable *t = vs_table_new ("A test table.");

  vs_table_add_column (t, "name", VS_COLUMN_TEXT);
  vs_table_add_column (t, "bytes", VS_COLUMN_BYTES);
  vs_table_add_column (t, "time_ns", VS_COLUMN_TIME);
  vs_table_add_row (t);
  vs_table_set_text (t, 0, "plain");
  vs_table_set_int (t, 1, 0);
  vs_table_set_int (t, 2, 1500000);
  vs_table_add_row (t);
  vs_table_set_text (t, 0, "has, comma and \"quotes\"\nand a line break");
  vs_table_set_int (t, 1, G_GINT64_CONSTANT (3221225472));
  vs_table_set_int (t, 2, VS_UNKNOWN);
  vs_table_add_row (t);
  return t;
}

static void
test_csv (void)
{
  g_autoptr (VsTable) t = sample_table ();
  g_autoptr (GString) out = g_string_new (NULL);

  vs_table_write_csv (t, out);
  /* 0 stays 0; unknown is an empty field; the last row is all unknown. */
  g_assert_cmpstr (out->str, ==,
                   "name,bytes,time_ns\n"
                   "plain,0,1500000\n"
                   "\"has, comma and \"\"quotes\"\"\nand a line break\",3221225472,\n"
                   ",,\n");
  g_assert_false (vs_table_cell_is_known (t, 1, 2));
  g_assert_true (vs_table_cell_is_known (t, 0, 1));
  g_assert_cmpint (vs_table_get_int (t, 1, 1), ==, G_GINT64_CONSTANT (3221225472));
}

/* Tables of the same columns joined, each row led by its table's label;
 * unknown cells stay unknown. */
static void
test_concat (void)
{
  g_autoptr (VsTable) a = sample_table ();
  g_autoptr (VsTable) b = sample_table ();
  VsTable *tables[] = { a, b };
  const char *labels[] = { "a.db", "b.db" };
  g_autoptr (VsTable) t = NULL;
  g_autoptr (GString) out = g_string_new (NULL);

  vs_table_truncate (b, 1);
  t = vs_table_concat (tables, labels, 2, "trace");
  g_assert_cmpstr (vs_table_get_title (t), ==, "A test table.");
  g_assert_cmpuint (vs_table_get_n_columns (t), ==, 4);
  g_assert_cmpint (vs_table_get_column_kind (t, 2), ==, VS_COLUMN_BYTES);
  vs_table_write_csv (t, out);
  g_assert_cmpstr (out->str, ==,
                   "trace,name,bytes,time_ns\n"
                   "a.db,plain,0,1500000\n"
                   "a.db,\"has, comma and \"\"quotes\"\"\nand a line break\",3221225472,\n"
                   "a.db,,,\n"
                   "b.db,plain,0,1500000\n");
}

static void
test_text (void)
{
  g_auto (GStrv) lines = NULL;
  g_autoptr (VsTable) t = sample_table ();
  g_autoptr (GString) out = g_string_new (NULL);

  vs_table_write_text (t, out);
  g_assert_true (g_str_has_prefix (out->str, "A test table.\n\n"));
  g_assert_nonnull (strstr (out->str, "3.00 GiB"));
  g_assert_nonnull (strstr (out->str, "1.5 ms"));
  g_assert_nonnull (strstr (out->str, "0 B"));
  /* Line breaks inside a cell do not break the row. */
  lines = g_strsplit (out->str, "\n", -1);
  g_assert_cmpint (g_strv_length (lines), ==, 2 + 1 + 3 + 1);
}

/* Stacks: the whole text in CSV; under their row, one frame a line, in
 * text output, the longest cut after a fixed number of frames. */
static void
test_stack_column (void)
{
  g_autoptr (VsTable) t = vs_table_new ("Stacks.");
  g_autoptr (GString) csv = g_string_new (NULL);
  g_autoptr (GString) text = g_string_new (NULL);
  g_autoptr (GString) deep = g_string_new ("f0");

  for (int i = 1; i < 20; i++)
    g_string_append_printf (deep, " <- f%d", i);
  vs_table_add_column (t, "bytes", VS_COLUMN_BYTES);
  vs_table_add_column (t, "stack", VS_COLUMN_STACK);
  vs_table_add_row (t);
  vs_table_set_int (t, 0, 1024);
  vs_table_set_text (t, 1, "layer <- train <- main");
  vs_table_add_row (t);
  vs_table_set_int (t, 0, 2048);
  vs_table_set_text (t, 1, deep->str);
  vs_table_write_csv (t, csv);
  g_assert_true (g_str_has_prefix (csv->str, "bytes,stack\n1024,layer <- train <- main\n"));
  vs_table_write_text (t, text);
  g_assert_nonnull (strstr (text->str, "bytes\n"));
  g_assert_nonnull (
      strstr (text->str, "1.00 KiB\n        at layer\n        by train\n        by main\n"));
  g_assert_nonnull (strstr (text->str, "        by f11\n        … 8 more frames\n"));
  g_assert_null (strstr (text->str, "f12"));
}

static void
test_units (void)
{
  static const struct
  {
    gint64 v;
    const char *bytes, *time;
  } cases[] = {
    { 0, "0 B", "0 ns" },
    { 1023, "1023 B", "1.0 µs" },
    { 1536, "1.50 KiB", "1.5 µs" },
    { G_GINT64_CONSTANT (1048576), "1.00 MiB", "1.0 ms" },
    { G_GINT64_CONSTANT (23299358720), "21.70 GiB", "23.299 s" },
  };

  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autofree char *b = vs_format_bytes (cases[i].v);
      g_autofree char *d = vs_format_duration (cases[i].v);

      g_assert_cmpstr (b, ==, cases[i].bytes);
      g_assert_cmpstr (d, ==, cases[i].time);
    }
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/table/concat", test_concat);
  g_test_add_func ("/table/csv", test_csv);
  g_test_add_func ("/table/text", test_text);
  g_test_add_func ("/table/units", test_units);
  g_test_add_func ("/table/stack-column", test_stack_column);
  return g_test_run ();
}

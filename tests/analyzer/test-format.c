/* SPDX-License-Identifier: MIT */
/* test-format.c — vs_parse_time(): times with units, exact to the ns, and
 * the values it refuses.
 */
#include <string.h>

#include <glib.h>

#include "vs-analyzer.h"

static void
test_parse_time (void)
{
  static const struct
  {
    const char *text;
    gint64 ns;
  } good[] = {
    { "0", 0 },
    { "1500", 1500 },
    { "-20", -20 },
    { "7ns", 7 },
    { "120us", 120000 },
    { "120\xc2\xb5s", 120000 },
    { "850ms", 850000000 },
    { "1.5s", 1500000000 },
    { "0.000000001s", 1 },
    { "2m", G_GINT64_CONSTANT (120000000000) },
    { "2min", G_GINT64_CONSTANT (120000000000) },
    { "1h", G_GINT64_CONSTANT (3600000000000) },
    { "1d", G_GINT64_CONSTANT (86400000000000) },
    { "1.5d", G_GINT64_CONSTANT (129600000000000) },
    { ".5ms", 500000 },
    { "3.ms", 3000000 },
    { "-3s", G_GINT64_CONSTANT (-3000000000) },
    { "1.0", 1 },
    { "9223372036854775807", G_MAXINT64 },
    { "-9223372036854775807", -G_MAXINT64 },
    { "0.1234567890000000000000s", 123456789 },
  };
  static const char *const bad[] = {
    "",
    "ms",
    "1.5",
    "1.5ns",
    "0.1us0",
    "12 ms",
    "1e3",
    "1.2.3s",
    "abc",
    "-",
    "1ks",
    "10S",
    "1.0000000001s",
    "9223372036854775808",
    "-9223372036854775808",
    "3000000000h",
    "99999999999999999999",
    "0.0000000000000000001s",
  };

  for (guint i = 0; i < G_N_ELEMENTS (good); i++)
    {
      g_autoptr (GError) error = NULL;
      gint64 ns = -12345;

      g_test_message ("%s", good[i].text);
      g_assert_true (vs_parse_time (good[i].text, &ns, &error));
      g_assert_no_error (error);
      g_assert_cmpint (ns, ==, good[i].ns);
    }
  for (guint i = 0; i < G_N_ELEMENTS (bad); i++)
    {
      g_autoptr (GError) error = NULL;
      gint64 ns = -12345;

      g_test_message ("%s", bad[i]);
      g_assert_false (vs_parse_time (bad[i], &ns, &error));
      g_assert_error (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE);
      g_assert_nonnull (strstr (error->message, bad[i]));
      g_assert_cmpint (ns, ==, -12345);
    }
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/format/parse-time", test_parse_time);
  return g_test_run ();
}

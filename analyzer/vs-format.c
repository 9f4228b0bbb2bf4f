/* SPDX-License-Identifier: MIT */
/* vs-format.c — the human forms of bytes and durations that every text
 * output uses (reports, `record`'s summary, the viewer's labels).
 */
#include "vs-format.h"
#include "vs-trace.h"

#include <math.h>
#include <string.h>

static const char *const units[] = { "B", "KiB", "MiB", "GiB", "TiB", "PiB" };

char *
vs_format_bytes (gint64 bytes)
{
  double v = (double)bytes;
  int u = 0;

  if (bytes == VS_UNKNOWN)
    return g_strdup ("-");
  if (bytes > -1024 && bytes < 1024)
    return g_strdup_printf ("%" G_GINT64_FORMAT " B", bytes);
  while ((v >= 1024.0 || v <= -1024.0) && u < (int)G_N_ELEMENTS (units) - 1)
    {
      v /= 1024.0;
      u++;
    }
  return g_strdup_printf ("%.2f %s", v, units[u]);
}

char *
vs_format_duration (gint64 ns)
{
  double v = (double)ns;

  if (ns == VS_UNKNOWN)
    return g_strdup ("-");
  if (ns > -1000 && ns < 1000)
    return g_strdup_printf ("%" G_GINT64_FORMAT " ns", ns);
  if (ns > -1000000 && ns < 1000000)
    return g_strdup_printf ("%.1f µs", v / 1e3);
  if (ns > -1000000000 && ns < 1000000000)
    return g_strdup_printf ("%.1f ms", v / 1e6);
  return g_strdup_printf ("%.3f s", v / 1e9);
}

char *
vs_format_bytes_in_unit (double bytes, int unit_power, int decimals)
{
  g_return_val_if_fail (unit_power >= 0 && unit_power < (int)G_N_ELEMENTS (units), NULL);
  return g_strdup_printf ("%.*f %s", decimals, bytes / pow (1024.0, unit_power), units[unit_power]);
}

char *
vs_format_printable (const char *s)
{
  GString *out;
  const char *p = s, *end;

  g_return_val_if_fail (s != NULL, NULL);
  end = s + strlen (s);
  out = g_string_sized_new (end - s);
  while (p < end)
    {
      gunichar c = g_utf8_get_char_validated (p, end - p);

      if (c == (gunichar)-1 || c == (gunichar)-2)
        {
          g_string_append_printf (out, "\\x%02x", (guint8)*p);
          p++;
          continue;
        }
      if (c == '\n')
        g_string_append (out, "\\n");
      else if (c == '\r')
        g_string_append (out, "\\r");
      else if (c == '\t')
        g_string_append (out, "\\t");
      else if (c == 0x1b)
        g_string_append (out, "\\e");
      else if (c < 0x20 || c == 0x7f)
        g_string_append_printf (out, "\\x%02x", (guint)c);
      else if (c >= 0x80 && c <= 0x9f)
        g_string_append_printf (out, "\\u%04x", (guint)c);
      else
        g_string_append_len (out, p, g_utf8_next_char (p) - p);
      p = g_utf8_next_char (p);
    }
  return g_string_free (out, FALSE);
}

gboolean
vs_parse_time (const char *text, gint64 *out_ns, GError **error)
{
  static const struct
  {
    const char *name;
    gint64 ns;
  } time_units[] = {
    { "", 1 },
    { "ns", 1 },
    { "us", 1000 },
    { "\xc2\xb5s", 1000 },
    { "ms", 1000000 },
    { "s", G_GINT64_CONSTANT (1000000000) },
    { "m", G_GINT64_CONSTANT (60000000000) },
    { "min", G_GINT64_CONSTANT (60000000000) },
    { "h", G_GINT64_CONSTANT (3600000000000) },
    { "d", G_GINT64_CONSTANT (86400000000000) },
  };
  const char *p = text;
  gboolean negative = FALSE;
  guint64 whole = 0, frac = 0, frac_scale = 1;
  gint64 unit = 0, value, frac_ns;
  gboolean digits = FALSE;

  g_return_val_if_fail (text != NULL && out_ns != NULL, FALSE);
  if (*p == '-' || *p == '+')
    negative = *p++ == '-';
  for (; g_ascii_isdigit (*p); p++, digits = TRUE)
    if (__builtin_mul_overflow (whole, 10, &whole)
        || __builtin_add_overflow (whole, (guint64)(*p - '0'), &whole))
      goto out_of_range;
  if (*p == '.')
    for (p++; g_ascii_isdigit (*p); p++, digits = TRUE)
      {
        if (frac_scale > G_GUINT64_CONSTANT (100000000000000000))
          {
            /* Digits past 1e-17 of a unit must be zeros to stay whole ns. */
            if (*p != '0')
              goto not_whole;
            continue;
          }
        frac = frac * 10 + (guint64)(*p - '0');
        frac_scale *= 10;
      }
  for (guint i = 0; i < G_N_ELEMENTS (time_units) && digits; i++)
    if (strcmp (p, time_units[i].name) == 0)
      unit = time_units[i].ns;
  if (!digits || unit == 0)
    {
      g_set_error (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                   "'%s' is not a time: give ns (1500) or a number with a unit "
                   "(ns, us, ms, s, m, h: 850ms, 1.5s, 2m)",
                   text);
      return FALSE;
    }
  /* frac / frac_scale of a unit, in ns, exactly (frac < 10^18, unit <
   * 2^42: the product fits 128 bits). */
  {
    unsigned __int128 n = (unsigned __int128)frac * (guint64)unit;

    if (n % frac_scale != 0)
      goto not_whole;
    frac_ns = (gint64)(n / frac_scale);
  }
  if (whole > (guint64)G_MAXINT64 || __builtin_mul_overflow ((gint64)whole, unit, &value)
      || __builtin_add_overflow (value, frac_ns, &value))
    goto out_of_range;
  *out_ns = negative ? -value : value;
  return TRUE;

not_whole:
  g_set_error (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
               "'%s' is not a whole number of nanoseconds", text);
  return FALSE;
out_of_range:
  g_set_error (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE, "'%s' is out of range", text);
  return FALSE;
}

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

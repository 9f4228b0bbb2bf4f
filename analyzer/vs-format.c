/* vs-format.c — the human forms of bytes and durations that every text
 * output uses (reports, `record`'s summary, the viewer's labels).
 */
#include "vs-format.h"
#include "vs-trace.h"

#include <math.h>

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

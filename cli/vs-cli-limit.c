/* SPDX-License-Identifier: MIT */
/* vs-cli-limit.c — the --limit argument that `whatif` and `predict` take:
 * a cap on the allocator's memory in bytes, or a fraction of the device.
 */
#include <string.h>

#include <glib.h>

#include "vs-analyzer.h"
#include "vs-cli.h"

gboolean
vs_cli_parse_limit (const char *text, gint64 *bytes, double *fraction)
{
  guint64 v;
  char *end = NULL;

  g_return_val_if_fail (text != NULL && bytes != NULL && fraction != NULL, FALSE);
  *bytes = VS_UNKNOWN;
  *fraction = 0.0;
  if (strchr (text, '.') == NULL)
    {
      if (!g_ascii_string_to_unsigned (text, 10, 1, G_MAXINT64, &v, NULL))
        return FALSE;
      *bytes = (gint64)v;
      return TRUE;
    }
  *fraction = g_ascii_strtod (text, &end);
  return end != NULL && *end == '\0' && *fraction > 0.0 && *fraction <= 1.0;
}

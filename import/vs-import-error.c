/* SPDX-License-Identifier: MIT */
/* vs-import-error.c — the import's errors (vs-import-error.h) and the
 * helpers its parts set them with: a file that is not a snapshot, a
 * failed write, a cancelled import (vs-import-private.h).
 */
#include "vs-import-private.h"

#include <stdarg.h>

/* The quark's name is one string of words and dashes, as GLib spells
 * its own; clang-format would space the dashes. */
/* clang-format off */
G_DEFINE_QUARK (vs-import-error-quark, vs_import_error)
/* clang-format on */

/* See vs-import-private.h. */
gboolean
vs_import_not_snapshot (Ctx *c, const char *fmt, ...)
{
  va_list ap;
  va_start (ap, fmt);
  g_autofree char *msg = g_strdup_vprintf (fmt, ap);
  va_end (ap);
  g_set_error (c->error, VS_IMPORT_ERROR, VS_IMPORT_ERROR_NOT_SNAPSHOT,
               "not a valid PyTorch memory snapshot: %s", msg);
  return FALSE;
}

/* See vs-import-private.h. */
gboolean
vs_import_write_failed (Ctx *c)
{
  g_set_error (c->error, VS_IMPORT_ERROR, VS_IMPORT_ERROR_WRITE, "cannot write the trace: %s",
               vs_writer_errmsg (c->w));
  return FALSE;
}

/* See vs-import-private.h. */
gboolean
vs_import_report (Ctx *c, const char *stage, double fraction)
{
  if (c->progress && !c->progress (stage, fraction, c->progress_data))
    {
      g_set_error_literal (c->error, VS_IMPORT_ERROR, VS_IMPORT_ERROR_CANCELLED, "cancelled");
      return FALSE;
    }
  return TRUE;
}

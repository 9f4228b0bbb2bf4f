/* SPDX-License-Identifier: MIT */
/* vs-cli-open.c — the file a command reads: a trace, or a PyTorch snapshot
 * imported into the user's cache first (import/vs-snapshot-cache.h), as
 * the viewer opens one.
 */
#include <glib.h>

#include "vs-analyzer.h"
#include "vs-cli.h"
#include "vs-snapshot-cache.h"

VsTrace *
vs_cli_open_trace (const char *path, GError **error)
{
  g_autofree char *cache = NULL;

  g_return_val_if_fail (path != NULL, NULL);
  if (!vs_snapshot_cache_is_snapshot (path) || !g_file_test (path, G_FILE_TEST_IS_REGULAR))
    return vs_trace_open (path, error);
  cache = vs_snapshot_cache_import (path, NULL, NULL, error);
  if (cache == NULL)
    return NULL;
  return vs_trace_open (cache, error);
}

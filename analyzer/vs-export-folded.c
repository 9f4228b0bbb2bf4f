/* vs-export-folded.c — folded stacks of the bytes live at the peak or at
 * the end, for flamegraph.pl, speedscope and inferno.
 *
 * The blocks come from vs_live_blocks() at the summary's peak seq (or
 * vs_leaked_blocks()), so the lines of a device add up exactly to the
 * bytes the summary reports.  Blocks of the same stack are merged into
 * one line; lines are sorted, as flamegraph.pl expects of its input.
 */
#include "vs-export.h"

#include <stdlib.h>
#include <string.h>

#include "vs-blocks.h"
#include "vs-stack.h"
#include "vs-summary.h"
#include "vs-trace-private.h"

/* Appends frame text to line with the characters that would break the
 * format (';' separates frames, a newline ends the line) replaced. */
static void
append_frame (GString *line, const char *text)
{
  if (line->len > 0)
    g_string_append_c (line, ';');
  for (const char *p = text; *p; p++)
    g_string_append_c (line, *p == ';' ? ':' : (*p == '\n' || *p == '\r') ? ' ' : *p);
}

/* Adds the blocks of one device to lines (folded stack → gint64 bytes). */
static gboolean
fold_blocks (VsTrace *trace, GArray *blocks, const char *device_frame, GHashTable *lines,
             GError **error)
{
  for (guint i = 0; i < blocks->len; i++)
    {
      const VsBlock *b = &g_array_index (blocks, VsBlock, i);
      const VsStackInfo *st = vs_stack_get (trace, b->stack_id, error);
      if (st == NULL)
        return FALSE;
      g_autoptr (GString) line = g_string_new (NULL);
      if (device_frame != NULL)
        append_frame (line, device_frame);
      if (st->frames->len == 0)
        append_frame (line, "[no stack]");
      for (guint j = st->frames->len; j-- > 0;)
        {
          const VsFrameInfo *f = g_ptr_array_index (st->frames, j);
          append_frame (line, f->text[0] ? f->text : "??");
        }
      gint64 *bytes = g_hash_table_lookup (lines, line->str);
      if (bytes == NULL)
        {
          bytes = g_new0 (gint64, 1);
          g_hash_table_insert (lines, g_strdup (line->str), bytes);
        }
      *bytes += b->bytes;
    }
  return TRUE;
}

static int
cmp_str (gconstpointer a, gconstpointer b)
{
  return strcmp (*(const char *const *)a, *(const char *const *)b);
}

gboolean
vs_export_folded (VsTrace *trace, gint64 device_id, gint64 allocator_id, VsFoldedWhen when,
                  FILE *out, GError **error)
{
  g_return_val_if_fail (trace != NULL, FALSE);
  g_return_val_if_fail (out != NULL, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  if (allocator_id != 0)
    {
      const VsAllocatorInfo *a = vs_trace_lookup_allocator (trace, allocator_id);
      if (a == NULL || (device_id != 0 && a->device_id != device_id))
        {
          g_set_error (error, VS_TRACE_ERROR, VS_TRACE_ERROR_INVALID_ARGUMENT,
                       "%s has no such allocator", vs_trace_get_path (trace));
          return FALSE;
        }
      device_id = a->device_id;
    }
  const GPtrArray *devices = vs_trace_get_devices (trace);
  gboolean several = device_id == 0 && devices->len > 1;
  g_autoptr (GHashTable) lines = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);

  for (guint d = 0; d < devices->len; d++)
    {
      const VsDeviceInfo *dev = g_ptr_array_index (devices, d);
      if (device_id != 0 && dev->id != device_id)
        continue;
      VsSummary s;
      g_autoptr (GError) missing = NULL;
      if (!vs_summary_get (trace, dev->id, allocator_id, &s, &missing))
        continue; /* a device with no memory of this allocator */
      g_autoptr (GArray) blocks = NULL;
      if (when == VS_FOLDED_AT_EXIT)
        blocks = vs_leaked_blocks (trace, dev->id, allocator_id, error);
      else if (s.peak_allocated_seq != VS_UNKNOWN)
        blocks = vs_live_blocks (trace, dev->id, allocator_id, s.peak_allocated_seq, error);
      else
        continue; /* nothing was ever allocated */
      if (blocks == NULL)
        return FALSE;
      g_autofree char *device_frame
          = several ? g_strdup_printf ("device %" G_GINT64_FORMAT, dev->idx) : NULL;
      if (!fold_blocks (trace, blocks, device_frame, lines, error))
        return FALSE;
    }

  guint n = 0;
  g_autofree gpointer *keys = g_hash_table_get_keys_as_array (lines, &n);
  qsort (keys, n, sizeof *keys, cmp_str);
  for (guint i = 0; i < n; i++)
    {
      const char *k = keys[i];
      const gint64 *bytes = g_hash_table_lookup (lines, k);
      if (*bytes > 0)
        fprintf (out, "%s %" G_GINT64_FORMAT "\n", k, *bytes);
    }
  return TRUE;
}

/* SPDX-License-Identifier: MIT */
/* vs-export-folded.c — folded stacks of the bytes live at the peak or at
 * the end, for flamegraph.pl, speedscope and inferno.
 *
 * The blocks come from vs_live_blocks() at the summary's peak seq (or
 * vs_leaked_blocks()), so the lines of a device add up exactly to the
 * bytes the summary reports.  Blocks of the same stack are merged into
 * one line; lines are sorted, as flamegraph.pl expects of its input.
 *
 * Lines are never held: blocks are summed per stack, the stacks sorted by
 * the line each would write (compared from their lowest common node in
 * the stack trie, below which their lines are the same), and each line
 * written as it is rendered.  Memory stays proportional to the stacks
 * read, whatever their depth; time to the lines written.
 */
#include "vs-export.h"

#include <stdlib.h>
#include <string.h>

#include "vs-blocks.h"
#include "vs-stack.h"
#include "vs-summary.h"
#include "vs-trace-private.h"

/* The character written for c: those that would break the format (';'
 * separates frames, a newline ends the line) replaced. */
static char
fold_char (char c)
{
  return c == ';' ? ':' : (c == '\n' || c == '\r') ? ' ' : c;
}

/* The text a frame is written as. */
static const char *
frame_text (const VsStackInfo *n)
{
  return n->frame->text[0] != '\0' ? n->frame->text : "??";
}

#define NO_STACK "[no stack]"

/* One line: a stack of a device and the bytes of its blocks. */
typedef struct
{
  const char *device_frame; /* NULL with one device */
  const VsStackInfo *stack;
  gint64 bytes;
} Fold;

/* Scratch paths for comparing lines, reused across comparisons. */
typedef struct
{
  GPtrArray *a, *b;
} FoldCmp;

/* Fills pa and pb with the nodes of a and b below their lowest common
 * node, innermost first. */
static void
paths_below_common (const VsStackInfo *a, const VsStackInfo *b, GPtrArray *pa, GPtrArray *pb)
{
  g_ptr_array_set_size (pa, 0);
  g_ptr_array_set_size (pb, 0);
  while (a != NULL && a->depth > (b != NULL ? b->depth : 0))
    {
      g_ptr_array_add (pa, (gpointer)a);
      a = a->parent;
    }
  while (b != NULL && b->depth > (a != NULL ? a->depth : 0))
    {
      g_ptr_array_add (pb, (gpointer)b);
      b = b->parent;
    }
  while (a != b)
    {
      g_ptr_array_add (pa, (gpointer)a);
      g_ptr_array_add (pb, (gpointer)b);
      a = a->parent;
      b = b->parent;
    }
}

/* Where a comparison stands in the frames of a path (innermost first,
 * walked from its end): in the text of path[i - 1], or on the ';' before
 * it; i 0 at the end of the line. */
typedef struct
{
  GPtrArray *path;
  const char *empty; /* the text of an empty stack, NULL otherwise */
  guint i;
  const char *p;
} FoldCursor;

/* The cursor's character, 0 at the end, without moving. */
static guchar
cursor_peek (FoldCursor *c)
{
  while (c->p != NULL && *c->p == '\0')
    {
      c->p = NULL;
      c->i--;
    }
  if (c->i == 0)
    return 0;
  if (c->p == NULL)
    return ';';
  return (guchar)fold_char (*c->p);
}

static void
cursor_next (FoldCursor *c)
{
  if (c->p == NULL)
    c->p = c->empty != NULL ? c->empty : frame_text (g_ptr_array_index (c->path, c->i - 1));
  else
    c->p++;
}

/* strcmp() of the device frames as the lines begin with them (each
 * followed by ';'). */
static int
device_cmp (const char *a, const char *b)
{
  for (gsize i = 0;; i++)
    {
      guchar x = a[i] != '\0' ? (guchar)fold_char (a[i]) : ';';
      guchar y = b[i] != '\0' ? (guchar)fold_char (b[i]) : ';';

      if (a[i] == '\0' && b[i] == '\0')
        return 0;
      if (x != y)
        return x < y ? -1 : 1;
      if (a[i] == '\0' || b[i] == '\0')
        return a[i] == '\0' ? -1 : 1; /* ';' against ';': a is shorter */
    }
}

/* strcmp() of the lines two folds write, without building them. */
static gint
fold_cmp (gconstpointer pa, gconstpointer pb, gpointer data)
{
  const Fold *a = pa, *b = pb;
  FoldCmp *scratch = data;
  FoldCursor x = { scratch->a, NULL, 0, NULL }, y = { scratch->b, NULL, 0, NULL };
  int c;

  if (a->device_frame != NULL && b->device_frame != NULL
      && (c = device_cmp (a->device_frame, b->device_frame)) != 0)
    return c;
  if (a->stack == b->stack)
    return 0;
  /* An empty stack is written as one frame of its own. */
  paths_below_common (a->stack->depth > 0 ? a->stack : NULL, b->stack->depth > 0 ? b->stack : NULL,
                      scratch->a, scratch->b);
  if (a->stack->depth == 0)
    {
      g_ptr_array_add (scratch->a, NULL);
      x.empty = NO_STACK;
    }
  if (b->stack->depth == 0)
    {
      g_ptr_array_add (scratch->b, NULL);
      y.empty = NO_STACK;
    }
  x.i = scratch->a->len;
  y.i = scratch->b->len;
  for (;;)
    {
      guchar cx = cursor_peek (&x), cy = cursor_peek (&y);

      if (cx != cy)
        return cx < cy ? -1 : 1;
      if (cx == 0)
        return 0;
      cursor_next (&x);
      cursor_next (&y);
    }
}

/* Writes text as a frame of the line (after the first, behind a ';'). */
static void
put_frame (FILE *out, const char *text, gboolean first)
{
  if (!first)
    fputc (';', out);
  for (const char *p = text; *p; p++)
    fputc (fold_char (*p), out);
}

/* Writes the line of f, bytes included. */
static void
put_line (FILE *out, const Fold *f, gint64 bytes)
{
  g_autofree const VsFrameInfo **frames = vs_stack_dup_frames (f->stack);
  gboolean first = TRUE;

  if (f->device_frame != NULL)
    {
      put_frame (out, f->device_frame, first);
      first = FALSE;
    }
  if (f->stack->depth == 0)
    put_frame (out, NO_STACK, first);
  for (guint j = f->stack->depth; j-- > 0;)
    {
      put_frame (out, frames[j]->text[0] ? frames[j]->text : "??", first);
      first = FALSE;
    }
  fprintf (out, " %" G_GINT64_FORMAT "\n", bytes);
}

/* Adds the blocks of one device to folds, one per stack. */
static gboolean
fold_blocks (VsTrace *trace, GArray *blocks, const char *device_frame, GArray *folds,
             GError **error)
{
  g_autoptr (GHashTable) index = g_hash_table_new (g_int64_hash, g_int64_equal);

  for (guint i = 0; i < blocks->len; i++)
    {
      const VsBlock *b = &g_array_index (blocks, VsBlock, i);
      const VsStackInfo *st = vs_stack_get (trace, b->stack_id, error);
      gpointer pos;

      if (st == NULL)
        return FALSE;
      if (!g_hash_table_lookup_extended (index, &st->stack_id, NULL, &pos))
        {
          Fold f = { device_frame, st, 0 };

          pos = GUINT_TO_POINTER (folds->len);
          g_array_append_val (folds, f);
          g_hash_table_insert (index, (gpointer)&st->stack_id, pos);
        }
      g_array_index (folds, Fold, GPOINTER_TO_UINT (pos)).bytes += b->bytes;
    }
  return TRUE;
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
  g_autoptr (GArray) folds = g_array_new (FALSE, FALSE, sizeof (Fold));
  g_autoptr (GPtrArray) device_frames = g_ptr_array_new_with_free_func (g_free);

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
      char *device_frame = NULL;
      if (several)
        {
          device_frame = g_strdup_printf ("device %" G_GINT64_FORMAT, dev->idx);
          g_ptr_array_add (device_frames, device_frame);
        }
      if (!fold_blocks (trace, blocks, device_frame, folds, error))
        return FALSE;
    }

  FoldCmp scratch = { g_ptr_array_new (), g_ptr_array_new () };
  g_array_sort_with_data (folds, fold_cmp, &scratch);
  /* Stacks whose lines are the same (frames of the same text) make one. */
  for (guint i = 0; i < folds->len;)
    {
      const Fold *f = &g_array_index (folds, Fold, i);
      gint64 bytes = 0;
      guint j = i;

      for (; j < folds->len && fold_cmp (f, &g_array_index (folds, Fold, j), &scratch) == 0; j++)
        bytes += g_array_index (folds, Fold, j).bytes;
      if (bytes > 0)
        put_line (out, f, bytes);
      i = j;
    }
  g_ptr_array_unref (scratch.a);
  g_ptr_array_unref (scratch.b);
  return TRUE;
}

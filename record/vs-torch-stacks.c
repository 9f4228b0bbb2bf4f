/* SPDX-License-Identifier: MIT */
/* vs-torch-stacks.c — the Python stacks of a PyTorch allocator stream, read
 * from its side file and written into a trace (see vs-torch-stacks.h).
 *
 * Workload: one entry per distinct frame and per distinct call stack, a
 * few thousand for a training run; the file is read whole, checked entry
 * by entry, and a stack reaches the trace only when an imported event
 * names it.  While its process still runs (record following the stream,
 * vs-torch-follow.c) the file is read again from where the last complete
 * entry ended, as it grows.
 */
#include "vs-torch-stacks.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <glib.h>

#define STACKS_MAGIC "VSSTACK1"
#define STACKS_HEADER 16

enum
{
  ENTRY_FRAME = 1,
  ENTRY_STACK = 2
};

typedef struct
{
  char *file, *function;
  int32_t line;
  int64_t trace_id; /* 0 until written */
} VsStackFrame;

struct VsTorchStacks
{
  GArray *frames;    /* VsStackFrame, index id - 1 */
  GArray *stack_off; /* guint: into ids, index id - 1, plus one past the last */
  GArray *ids;       /* guint32 frame ids, innermost first */
  GArray *trace_ids; /* gint64 per stack, 0 until written */
  size_t offset;     /* the file's bytes read: up to the end of the last entry */
  bool bad;          /* a malformed entry was found: nothing more is read */
};

static uint32_t
fnv32 (const unsigned char *p, size_t n)
{
  uint32_t h = 2166136261u;
  for (size_t i = 0; i < n; i++)
    h = (h ^ p[i]) * 16777619u;
  return h;
}

static uint32_t
get32 (const unsigned char *p)
{
  uint32_t v;
  memcpy (&v, p, 4);
  return v;
}

static void
clear_frame (gpointer p)
{
  VsStackFrame *f = p;
  g_free (f->file);
  g_free (f->function);
}

void
vs_torch_stacks_free (VsTorchStacks *s)
{
  if (s == NULL)
    return;
  g_array_unref (s->frames);
  g_array_unref (s->stack_off);
  g_array_unref (s->ids);
  g_array_unref (s->trace_ids);
  g_free (s);
}

/* Reads one frame payload p[0..n) into s; false when it is malformed. */
static bool
read_frame (VsTorchStacks *s, const unsigned char *p, uint32_t n)
{
  if (n < 16)
    return false;
  uint32_t id = get32 (p), file_len = get32 (p + 8), name_len = get32 (p + 12);
  int32_t line;
  memcpy (&line, p + 4, 4);
  if (id != s->frames->len + 1 || (uint64_t)file_len + name_len != (uint64_t)n - 16)
    return false;
  VsStackFrame f = {
    .file = g_utf8_make_valid ((const char *)p + 16, file_len),
    .function = g_utf8_make_valid ((const char *)p + 16 + file_len, name_len),
    .line = line,
  };
  g_array_append_val (s->frames, f);
  return true;
}

/* Reads one stack payload p[0..n) into s; false when it is malformed. */
static bool
read_stack (VsTorchStacks *s, const unsigned char *p, uint32_t n)
{
  if (n < 8)
    return false;
  uint32_t id = get32 (p), count = get32 (p + 4);
  if (id != s->stack_off->len || count == 0 || (uint64_t)count * 4 != (uint64_t)n - 8)
    return false;
  for (uint32_t i = 0; i < count; i++)
    {
      uint32_t f = get32 (p + 8 + 4 * (size_t)i);
      if (f == 0 || f > s->frames->len)
        return false;
      g_array_append_val (s->ids, f);
    }
  guint end = s->ids->len;
  g_array_append_val (s->stack_off, end);
  int64_t zero = 0;
  g_array_append_val (s->trace_ids, zero);
  return true;
}

VsTorchStacks *
vs_torch_stacks_new (void)
{
  VsTorchStacks *s = g_new0 (VsTorchStacks, 1);
  s->frames = g_array_new (FALSE, FALSE, sizeof (VsStackFrame));
  g_array_set_clear_func (s->frames, clear_frame);
  s->stack_off = g_array_new (FALSE, FALSE, sizeof (guint));
  s->ids = g_array_new (FALSE, FALSE, sizeof (guint32));
  s->trace_ids = g_array_new (FALSE, FALSE, sizeof (int64_t));
  guint zero = 0;
  g_array_append_val (s->stack_off, zero);
  return s;
}

bool
vs_torch_stacks_read_more (VsTorchStacks *s, const char *path, bool *torn, char *err, size_t errlen)
{
  g_return_val_if_fail (s != NULL && path != NULL && err != NULL, false);
  if (torn)
    *torn = false;
  if (s->bad)
    {
      snprintf (err, errlen, "%s: a malformed entry at byte %zu", path, s->offset);
      return false;
    }
  FILE *f = fopen (path, "rb");
  if (f == NULL)
    {
      snprintf (err, errlen, "cannot read %s: %s", path, g_strerror (errno));
      return false;
    }
  /* What was read before is not read again: the file only grows. */
  size_t from = s->offset;
  g_autoptr (GByteArray) buf = g_byte_array_new ();
  unsigned char chunk[65536];
  size_t got;
  bool io_ok = fseek (f, (long)from, SEEK_SET) == 0;
  while (io_ok && (got = fread (chunk, 1, sizeof chunk, f)) > 0)
    g_byte_array_append (buf, chunk, (guint)got);
  io_ok = io_ok && !ferror (f);
  int e = errno;
  fclose (f);
  if (!io_ok)
    {
      snprintf (err, errlen, "cannot read %s: %s", path, g_strerror (e));
      return false;
    }
  const unsigned char *d = buf->data;
  size_t len = buf->len, off = 0;
  if (s->offset == 0)
    {
      if (len < STACKS_HEADER)
        {
          /* Its writer has not written the header yet, or never will. */
          if (torn)
            *torn = len > 0;
          return true;
        }
      if (memcmp (d, STACKS_MAGIC, 8) != 0 || get32 (d + 8) != 1 || get32 (d + 12) != 0)
        {
          snprintf (err, errlen, "%s is not a Python stacks file this version reads", path);
          s->bad = true;
          return false;
        }
      off = STACKS_HEADER;
    }
  while (off < len)
    {
      if (len - off < 12 || len - off - 12 < get32 (d + off + 4))
        {
          if (torn)
            *torn = true; /* the last entry, not completely written (yet) */
          break;
        }
      uint32_t kind = get32 (d + off), n = get32 (d + off + 4);
      const unsigned char *p = d + off + 8;
      bool ok = fnv32 (d + off, 8 + (size_t)n) == get32 (p + n);
      if (ok && kind == ENTRY_FRAME)
        ok = read_frame (s, p, n);
      else if (ok && kind == ENTRY_STACK)
        ok = read_stack (s, p, n);
      else
        ok = false;
      if (!ok)
        {
          s->offset = from + off;
          s->bad = true;
          snprintf (err, errlen, "%s: a malformed entry at byte %zu", path, s->offset);
          return false;
        }
      off += 12 + (size_t)n;
    }
  s->offset = from + off;
  return true;
}

VsTorchStacks *
vs_torch_stacks_read (const char *path, bool *torn, char *err, size_t errlen)
{
  g_return_val_if_fail (path != NULL && err != NULL, NULL);
  VsTorchStacks *s = vs_torch_stacks_new ();
  bool cut = false;
  if (!vs_torch_stacks_read_more (s, path, &cut, err, errlen))
    {
      vs_torch_stacks_free (s);
      return NULL;
    }
  if (s->offset == 0)
    {
      snprintf (err, errlen, "%s is not a Python stacks file this version reads", path);
      vs_torch_stacks_free (s);
      return NULL;
    }
  if (torn)
    *torn = cut;
  return s;
}

size_t
vs_torch_stacks_n_stacks (const VsTorchStacks *s)
{
  g_return_val_if_fail (s != NULL, 0);
  return s->trace_ids->len;
}

size_t
vs_torch_stacks_n_frames (const VsTorchStacks *s)
{
  g_return_val_if_fail (s != NULL, 0);
  return s->frames->len;
}

const uint32_t *
vs_torch_stacks_get (const VsTorchStacks *s, uint32_t id, size_t *n)
{
  g_return_val_if_fail (s != NULL && n != NULL, NULL);
  if (id == 0 || id > s->trace_ids->len)
    return NULL;
  guint a = g_array_index (s->stack_off, guint, id - 1);
  guint b = g_array_index (s->stack_off, guint, id);
  *n = b - a;
  return &g_array_index (s->ids, guint32, a);
}

bool
vs_torch_stacks_frame (const VsTorchStacks *s, uint32_t id, const char **file,
                       const char **function, int32_t *line)
{
  g_return_val_if_fail (s != NULL, false);
  if (id == 0 || id > s->frames->len)
    return false;
  const VsStackFrame *f = &g_array_index (s->frames, VsStackFrame, id - 1);
  if (file)
    *file = f->file;
  if (function)
    *function = f->function;
  if (line)
    *line = f->line;
  return true;
}

int64_t
vs_torch_stacks_trace_id (VsTorchStacks *s, VsWriter *w, uint32_t id)
{
  g_return_val_if_fail (s != NULL && w != NULL, -1);
  size_t n = 0;
  const uint32_t *fids = vs_torch_stacks_get (s, id, &n);
  if (fids == NULL)
    return VS_UNKNOWN;
  int64_t *known = &g_array_index (s->trace_ids, int64_t, id - 1);
  if (*known != 0)
    return *known;
  g_autofree int64_t *ids = g_new (int64_t, n);
  for (size_t i = 0; i < n; i++)
    {
      VsStackFrame *f = &g_array_index (s->frames, VsStackFrame, fids[i] - 1);
      if (f->trace_id == 0)
        {
          /* As the snapshot importer tells a Python frame from a native
           * one (vs-import-stacks.c). */
          gboolean python = g_str_has_suffix (f->file, ".py") || f->file[0] == '<';
          VsFrame vf = {
            .kind = python ? VS_FRAME_PYTHON : VS_FRAME_NATIVE,
            .module_id = VS_UNKNOWN,
            .address = VS_UNKNOWN,
            .function = f->function[0] ? f->function : NULL,
            .file = f->file[0] ? f->file : NULL,
            .line = f->line,
          };
          f->trace_id = vs_writer_add_frame (w, &vf);
          if (f->trace_id < 0)
            {
              f->trace_id = 0;
              return -1;
            }
        }
      ids[n - 1 - i] = f->trace_id; /* the writer wants the outermost first */
    }
  int64_t sid = vs_writer_add_stack (w, ids, n);
  if (sid < 0)
    return -1;
  *known = sid;
  return sid;
}

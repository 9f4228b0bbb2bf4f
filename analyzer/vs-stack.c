/* SPDX-License-Identifier: MIT */
/* vs-stack.c — walking the stack trie and rendering frames.
 *
 * The trace stores stacks as a trie (schemas/trace.sql, `stack`), and so
 * does this cache: each trie node is read once, with its frame, and kept
 * as a VsStackInfo pointing at its parent's, its site worked out from the
 * parent's in constant time.  A stack whose outer frames were read before
 * reads only its own nodes, so a report over many stacks sharing a deep
 * chain reads the chain once: time and memory stay proportional to the
 * nodes and frames read, never to the sum of the stacks' depths.  The
 * texts of whole stacks are built only when asked for, and not kept.
 */
#include "vs-stack.h"
#include "vs-frame.h"
#include "vs-trace-private.h"
#include "vs-trace-format.h"

#include <string.h>

/* A stack deeper than writers write is taken to be a cycle in the trie. */
#define MAX_DEPTH VS_TRACE_MAX_STACK_DEPTH

static const char *node_sql = "SELECT parent_id, frame_id FROM stack WHERE id = ?1";

static const char *frame_sql
    = "SELECT f.kind, f.function, f.file, f.line, f.address, m.path, m.load_address"
      " FROM frame f LEFT JOIN module m ON m.id = f.module_id WHERE f.id = ?1";

/* The stacks and frames read from one trace (trace->stacks). */
struct _VsStackCache
{
  GHashTable *nodes;  /* gint64* stack id -> VsStackInfo* (owned) */
  GHashTable *frames; /* gint64* frame id -> VsFrameInfo* (owned) */
  VsStackInfo empty;
};

static void
frame_info_free (gpointer data)
{
  VsFrameInfo *f = data;

  g_free (f->text);
  g_free (f->module);
  g_free (f->file);
  g_free (f->function);
  g_free (f->backward_site);
  g_free (f);
}

static VsStackCache *
stack_cache_new (void)
{
  VsStackCache *c = g_new0 (VsStackCache, 1);

  c->nodes = g_hash_table_new_full (g_int64_hash, g_int64_equal, NULL, g_free);
  c->frames = g_hash_table_new_full (g_int64_hash, g_int64_equal, NULL, frame_info_free);
  c->empty.top_frame = "";
  c->empty.site = "";
  return c;
}

void
vs_stack_cache_free (VsStackCache *cache)
{
  if (cache == NULL)
    return;
  g_hash_table_unref (cache->nodes);
  g_hash_table_unref (cache->frames);
  g_free (cache);
}

/* The folder the program's own paths are shown relative to: meta cwd;
 * else, when the command line names a script by a relative path, the
 * folder that a frame's file has in front of it; else the folder of a
 * script named by an absolute path; else NULL. */
static char *
find_path_base (VsTrace *trace)
{
  static const char *suffix_sql
      = "SELECT file FROM frame WHERE kind = 2 AND substr(file, -length(?1) - 1) = '/' || ?1"
        " LIMIT 1";
  g_autofree char *cwd = vs_trace_dup_meta (trace, "cwd");
  g_autofree char *command = vs_trace_dup_meta (trace, "command_line");
  g_auto (GStrv) argv = NULL;

  if (cwd != NULL && cwd[0] == '/')
    return g_steal_pointer (&cwd);
  if (command == NULL || !g_shell_parse_argv (command, NULL, &argv, NULL))
    return NULL;
  for (guint i = 0; argv[i] != NULL; i++)
    {
      sqlite3_stmt *stmt;
      char *base = NULL;

      if (!g_str_has_suffix (argv[i], ".py"))
        continue;
      if (argv[i][0] == '/')
        return g_path_get_dirname (argv[i]);
      stmt = vs_trace_statement (trace, suffix_sql, NULL);
      if (stmt == NULL)
        return NULL;
      sqlite3_bind_text (stmt, 1, argv[i], -1, SQLITE_TRANSIENT);
      if (sqlite3_step (stmt) == SQLITE_ROW)
        {
          const char *file = (const char *)sqlite3_column_text (stmt, 0);
          gsize n = strlen (file) - strlen (argv[i]) - 1;

          base = g_strndup (file, n);
        }
      sqlite3_reset (stmt);
      if (base != NULL)
        return base;
    }
  return NULL;
}

const char *
vs_stack_get_path_base (VsTrace *trace)
{
  g_return_val_if_fail (trace != NULL, NULL);
  if (!trace->path_base_read)
    {
      trace->path_base = find_path_base (trace);
      trace->path_base_read = TRUE;
    }
  return trace->path_base;
}

void
vs_stack_set_full_paths (VsTrace *trace, gboolean full_paths)
{
  g_return_if_fail (trace != NULL);
  if (trace->full_paths == full_paths)
    return;
  trace->full_paths = full_paths;
  /* Texts handed out before stay valid: the cache is retired, not freed. */
  if (trace->stacks != NULL)
    {
      GPtrArray *holder = g_ptr_array_new_with_free_func ((GDestroyNotify)vs_stack_cache_free);

      g_ptr_array_add (holder, g_steal_pointer (&trace->stacks));
      g_ptr_array_add (trace->retired, holder);
    }
}

/* Renders one frame as documented in vs-stack.h. */
static char *
render_frame (VsTrace *trace, const VsFrameInfo *f, gint64 address, gint64 load_address)
{
  if (f->kind == VS_FRAME_LABEL)
    return g_strdup (f->function != NULL ? f->function : "?");
  if (f->file != NULL)
    {
      g_autofree char *path
          = vs_frame_display_path (f->file, vs_stack_get_path_base (trace), trace->full_paths);
      GString *s = g_string_new (path);

      if (f->line != VS_UNKNOWN)
        g_string_append_printf (s, ":%" G_GINT64_FORMAT, f->line);
      if (f->function != NULL)
        g_string_append_printf (s, " %s", f->function);
      return g_string_free (s, FALSE);
    }
  if (f->function != NULL)
    return g_strdup (f->function);
  if (f->module != NULL)
    {
      g_autofree char *base = g_path_get_basename (f->module);
      guint64 offset = (guint64)(address == VS_UNKNOWN ? 0 : address);

      if (load_address != VS_UNKNOWN && address != VS_UNKNOWN)
        offset = (guint64)address - (guint64)load_address;
      return g_strdup_printf ("%s+0x%" G_GINT64_MODIFIER "x", base, offset);
    }
  if (address != VS_UNKNOWN)
    return g_strdup_printf ("0x%" G_GINT64_MODIFIER "x", (guint64)address);
  return g_strdup ("?");
}

/* What the site rules need of frame f alone (VsFrameInfo): whether it is
 * the profiler's or allocator's own, whether it is PyTorch's autograd
 * engine, and the autograd node it names, if any, as `record` labels
 * native stacks of the backward pass. */
static void
frame_site_props (VsFrameInfo *f)
{
  static const char *const machinery[] = {
    "torch::unwind",
    "CapturedTraceback",
    "gather_with_cpp",
    "CUDACachingAllocator",
  };
  static const char generated[] = "torch::autograd::generated::";
  const char *fn = f->function != NULL ? f->function : "";
  const char *node = strstr (fn, generated);

  if (node != NULL)
    {
      gsize n;

      node += strlen (generated);
      n = strcspn (node, ":(<");
      if (n > 0 && g_strstr_len (node, n, "Backward") != NULL)
        {
          g_autofree char *name = g_strndup (node, n);

          /* AddmmBackward0_apply_functional -> AddmmBackward0 */
          if (strstr (name, "_apply") != NULL)
            *strstr (name, "_apply") = '\0';
          f->backward_site = g_strdup_printf ("backward pass: %s", name);
        }
    }
  f->engine = strstr (fn, "torch::autograd::Engine") != NULL;
  for (guint k = 0; k < G_N_ELEMENTS (machinery); k++)
    if (strstr (fn, machinery[k]) != NULL)
      f->machinery = TRUE;
}

/* Frame frame_id, read once per cache.  NULL with error set when the
 * frame table has no such row (stack_id names the stack that led here). */
static const VsFrameInfo *
get_frame (VsTrace *trace, gint64 frame_id, gint64 stack_id, GError **error)
{
  VsStackCache *c = trace->stacks;
  VsFrameInfo *f = g_hash_table_lookup (c->frames, &frame_id);
  sqlite3_stmt *stmt;
  gint64 address, load_address;
  int rc;

  if (f != NULL)
    return f;
  stmt = vs_trace_statement (trace, frame_sql, error);
  if (stmt == NULL)
    return NULL;
  sqlite3_bind_int64 (stmt, 1, frame_id);
  rc = sqlite3_step (stmt);
  if (rc != SQLITE_ROW)
    {
      sqlite3_reset (stmt);
      if (rc != SQLITE_DONE)
        vs_trace_sql_error (trace, error);
      else
        g_set_error (error, VS_TRACE_ERROR, VS_TRACE_ERROR_CORRUPT,
                     "%s is inconsistent: stack %" G_GINT64_FORMAT
                     " names a frame that does not exist",
                     trace->path, stack_id);
      return NULL;
    }
  f = g_new0 (VsFrameInfo, 1);
  f->id = frame_id;
  f->kind = sqlite3_column_int (stmt, 0);
  f->function = vs_column_dup (stmt, 1);
  f->file = vs_column_dup (stmt, 2);
  f->line = vs_column_int (stmt, 3);
  address = vs_column_int (stmt, 4);
  f->module = vs_column_dup (stmt, 5);
  load_address = vs_column_int (stmt, 6);
  sqlite3_reset (stmt);
  f->user_code = vs_frame_is_user (f->kind, f->file, f->module, f->function, f->line);
  f->runtime = vs_frame_is_runtime (f->kind, f->file, f->module, f->function, f->line);
  f->text = render_frame (trace, f, address, load_address);
  frame_site_props (f);
  g_hash_table_insert (c->frames, &f->id, f);
  return f;
}

/* The site of stack s, from what its node holds: the innermost Python
 * frame of the user's own code; where the stack has no Python frame, the
 * innermost frame of the user's own code (a Python stack's native frames
 * are a library's or the interpreter's); else the innermost label (e.g.
 * "backward pass"), which says more than a frame inside a library; else,
 * for a stack of PyTorch's autograd engine, the backward pass (named after
 * the autograd node when a frame names one); else the innermost Python
 * frame (a library's); else the innermost frame that is neither the
 * profiler's or allocator's own nor the interpreter's or the C and C++
 * runtime's (vs_frame_is_runtime()); else the top frame. */
static const char *
stack_site (const VsStackInfo *s)
{
  if (s->innermost_user_python != NULL)
    return s->innermost_user_python->text;
  if (s->innermost_python == NULL && s->innermost_user != NULL)
    return s->innermost_user->text;
  if (s->innermost_label != NULL)
    return s->innermost_label->text;
  if (s->backward_site != NULL)
    return s->backward_site;
  if (s->engine)
    return "backward pass";
  if (s->innermost_python != NULL)
    return s->innermost_python->text;
  if (s->innermost_other != NULL)
    return s->innermost_other->text;
  return s->top_frame;
}

/* A new node for frame f inside parent (NULL: f is the outermost). */
static VsStackInfo *
node_new (gint64 stack_id, const VsFrameInfo *f, const VsStackInfo *parent)
{
  VsStackInfo *s = g_new0 (VsStackInfo, 1);

  s->stack_id = stack_id;
  s->frame = f;
  s->parent = parent;
  s->depth = parent != NULL ? parent->depth + 1 : 1;
  s->top_frame = f->text;
  s->innermost_user = f->user_code && f->text[0] != '\0' ? f : NULL;
  s->innermost_label = f->kind == VS_FRAME_LABEL && f->text[0] != '\0' ? f : NULL;
  s->innermost_other = !f->machinery && !f->runtime ? f : NULL;
  s->innermost_python = f->kind == VS_FRAME_PYTHON ? f : NULL;
  s->innermost_user_python = s->innermost_python != NULL && s->innermost_user != NULL ? f : NULL;
  s->backward_site = f->backward_site;
  s->engine = f->engine;
  s->user_code = f->user_code;
  if (parent != NULL)
    {
      s->user_code = s->user_code || parent->user_code;
      if (s->innermost_user == NULL)
        s->innermost_user = parent->innermost_user;
      if (s->innermost_label == NULL)
        s->innermost_label = parent->innermost_label;
      if (s->innermost_other == NULL)
        s->innermost_other = parent->innermost_other;
      if (s->innermost_python == NULL)
        s->innermost_python = parent->innermost_python;
      if (s->innermost_user_python == NULL)
        s->innermost_user_python = parent->innermost_user_python;
      if (s->backward_site == NULL)
        s->backward_site = parent->backward_site;
      s->engine = s->engine || parent->engine;
    }
  s->site = stack_site (s);
  return s;
}

/* Reads the nodes of stack_id not read before, from it outwards until a
 * node already read or the root, then its frames, innermost first (the
 * first error found is the one an innermost-first walk meets), and keeps
 * them, outermost first.  A walk longer than VS_TRACE_MAX_STACK_DEPTH + 1
 * nodes is a cycle. */
static const VsStackInfo *
load_stack (VsTrace *trace, gint64 stack_id, GError **error)
{
  VsStackCache *c = trace->stacks;
  g_autoptr (GArray) walk = g_array_new (FALSE, FALSE, sizeof (gint64) * 2);
  g_autofree const VsFrameInfo **frames = NULL;
  const VsStackInfo *known = NULL;
  gboolean rooted = FALSE;
  gint64 id = stack_id;
  sqlite3_stmt *stmt;

  stmt = vs_trace_statement (trace, node_sql, error);
  if (stmt == NULL)
    return NULL;
  while (walk->len <= VS_TRACE_MAX_STACK_DEPTH)
    {
      gint64 row[2];
      int rc;

      known = g_hash_table_lookup (c->nodes, &id);
      if (known != NULL)
        break;
      sqlite3_bind_int64 (stmt, 1, id);
      rc = sqlite3_step (stmt);
      if (rc != SQLITE_ROW)
        {
          if (!vs_trace_step_done (trace, stmt, rc, error))
            return NULL;
          break;
        }
      row[0] = id;
      row[1] = sqlite3_column_int64 (stmt, 1);
      id = sqlite3_column_int64 (stmt, 0);
      sqlite3_reset (stmt);
      g_array_append_val (walk, row);
      if (id == 0)
        {
          rooted = TRUE;
          break;
        }
    }
  frames = g_new0 (const VsFrameInfo *, walk->len + 1);
  for (guint i = 0; i < walk->len; i++)
    {
      frames[i] = get_frame (trace, ((gint64 *)walk->data)[2 * i + 1], stack_id, error);
      if (frames[i] == NULL)
        return NULL;
    }
  if ((known == NULL && !rooted) || walk->len == 0
      || (known != NULL && known->depth + walk->len > VS_TRACE_MAX_STACK_DEPTH + 1))
    {
      g_set_error (error, VS_TRACE_ERROR, VS_TRACE_ERROR_CORRUPT,
                   "%s is inconsistent: stack %" G_GINT64_FORMAT
                   " is missing from the stack table or does not reach its root",
                   trace->path, stack_id);
      return NULL;
    }
  for (guint i = walk->len; i-- > 0;)
    {
      VsStackInfo *s = node_new (((gint64 *)walk->data)[2 * i], frames[i], known);

      g_hash_table_insert (c->nodes, &s->stack_id, s);
      known = s;
    }
  return known;
}

const VsStackInfo *
vs_stack_get (VsTrace *trace, gint64 stack_id, GError **error)
{
  const VsStackInfo *s;

  g_return_val_if_fail (trace != NULL, NULL);
  if (trace->stacks == NULL)
    trace->stacks = stack_cache_new ();
  if (stack_id == VS_UNKNOWN || stack_id <= 0)
    return &trace->stacks->empty;
  s = g_hash_table_lookup (trace->stacks->nodes, &stack_id);
  return s != NULL ? s : load_stack (trace, stack_id, error);
}

char *
vs_stack_dup_text (const VsStackInfo *s)
{
  GString *text = g_string_new (NULL);

  g_return_val_if_fail (s != NULL, NULL);
  for (const VsStackInfo *n = s; n != NULL && n->frame != NULL; n = n->parent)
    {
      if (n != s)
        g_string_append (text, VS_STACK_SEPARATOR);
      g_string_append (text, n->frame->text);
    }
  return g_string_free (text, FALSE);
}

char *
vs_stack_dup_user_text (const VsStackInfo *s)
{
  GString *text = g_string_new (NULL);

  g_return_val_if_fail (s != NULL, NULL);
  for (const VsStackInfo *n = s; n != NULL && n->frame != NULL; n = n->parent)
    {
      const VsFrameInfo *f = n->frame;

      if (!f->user_code && f->kind != VS_FRAME_LABEL)
        continue;
      if (text->len > 0)
        g_string_append (text, VS_STACK_SEPARATOR);
      g_string_append (text, f->text);
    }
  if (text->len == 0)
    g_string_append (text, s->top_frame);
  return g_string_free (text, FALSE);
}

const VsFrameInfo **
vs_stack_dup_frames (const VsStackInfo *s)
{
  const VsFrameInfo **frames;
  guint i = 0;

  g_return_val_if_fail (s != NULL, NULL);
  if (s->depth == 0)
    return NULL;
  frames = g_new (const VsFrameInfo *, s->depth);
  for (const VsStackInfo *n = s; n != NULL && n->frame != NULL; n = n->parent)
    frames[i++] = n->frame;
  g_assert (i == s->depth);
  return frames;
}

/* Where a walk over a stack's text stands: in node n's frame text, or in
 * the separator after it; n NULL at the end. */
typedef struct
{
  const VsStackInfo *n;
  const char *p;
  gboolean in_separator;
} TextCursor;

/* Moves c past the ends of texts and separators to the next character. */
static void
cursor_settle (TextCursor *c)
{
  while (c->n != NULL && *c->p == '\0')
    {
      if (c->in_separator)
        {
          c->in_separator = FALSE;
          c->p = c->n->frame->text;
        }
      else
        {
          c->n = c->n->parent;
          c->in_separator = TRUE;
          c->p = VS_STACK_SEPARATOR;
        }
    }
}

int
vs_stack_text_cmp (const VsStackInfo *a, const VsStackInfo *b)
{
  TextCursor x = { a->frame != NULL ? a : NULL, a->frame != NULL ? a->frame->text : "", FALSE };
  TextCursor y = { b->frame != NULL ? b : NULL, b->frame != NULL ? b->frame->text : "", FALSE };

  for (;;)
    {
      guchar cx, cy;

      cursor_settle (&x);
      cursor_settle (&y);
      if (x.n == NULL || y.n == NULL)
        return (x.n != NULL) - (y.n != NULL);
      /* The same node at the start of its frame: the rest is the same. */
      if (x.n == y.n && !x.in_separator && !y.in_separator && x.p == y.p && x.p == x.n->frame->text)
        return 0;
      cx = (guchar)*x.p++;
      cy = (guchar)*y.p++;
      if (cx != cy)
        return cx < cy ? -1 : 1;
    }
}

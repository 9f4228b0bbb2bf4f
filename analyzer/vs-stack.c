/* vs-stack.c — walking the stack trie and rendering frames.
 *
 * One recursive query per distinct stack walks the parent links and joins
 * frames and modules; results are cached per VsTrace, so a report touching
 * the same stacks many times reads each once.
 */
#include "vs-stack.h"
#include "vs-frame.h"
#include "vs-trace-private.h"
#include "vs-trace-writer.h"

#include <string.h>

/* A stack deeper than writers write is taken to be a cycle in the trie. */
#define MAX_DEPTH VS_TRACE_MAX_STACK_DEPTH

static const char *walk_sql
    = "WITH RECURSIVE s (depth, id, parent_id, frame_id) AS ("
      "  SELECT 0, id, parent_id, frame_id FROM stack WHERE id = ?1"
      "  UNION ALL"
      "  SELECT s.depth + 1, t.id, t.parent_id, t.frame_id"
      "  FROM stack t JOIN s ON t.id = s.parent_id"
      "  WHERE s.parent_id != 0 AND s.depth < ?2)"
      " SELECT s.depth, s.parent_id, f.id, f.kind, f.function, f.file, f.line,"
      "  f.address, m.path, m.load_address"
      " FROM s LEFT JOIN frame f ON f.id = s.frame_id"
      " LEFT JOIN module m ON m.id = f.module_id"
      " ORDER BY s.depth";

static void
frame_info_free (gpointer data)
{
  VsFrameInfo *f = data;

  g_free (f->text);
  g_free (f->module);
  g_free (f->file);
  g_free (f->function);
  g_free (f);
}

static void
stack_info_free (gpointer data)
{
  VsStackInfo *s = data;

  g_free (s->top_frame);
  g_free (s->site);
  g_free (s->text);
  g_free (s->user_text);
  g_ptr_array_unref (s->frames);
  g_free (s);
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
      GPtrArray *holder = g_ptr_array_new_with_free_func ((GDestroyNotify)g_hash_table_unref);

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

static VsStackInfo *
empty_stack (gint64 stack_id)
{
  VsStackInfo *s = g_new0 (VsStackInfo, 1);

  s->stack_id = stack_id;
  s->top_frame = g_strdup ("");
  s->site = g_strdup ("");
  s->text = g_strdup ("");
  s->user_text = g_strdup ("");
  s->frames = g_ptr_array_new_with_free_func (frame_info_free);
  return s;
}

/* The site of a stack with no frame of the user's own and no label: the
 * backward pass when PyTorch's autograd engine made it (named after the
 * autograd node, as `record` labels its native stacks), else the
 * innermost Python frame (a library's), else the innermost frame that is
 * not the profiler's or allocator's own nor the interpreter's or runtime's
 * (vs_frame_is_runtime()), else the top frame. */
static char *
machine_site (const VsStackInfo *s)
{
  static const char *const machinery[] = {
    "torch::unwind",
    "CapturedTraceback",
    "gather_with_cpp",
    "CUDACachingAllocator",
  };
  static const char generated[] = "torch::autograd::generated::";
  const char *first_other = NULL, *first_python = NULL;
  gboolean engine = FALSE;

  for (guint i = 0; i < s->frames->len; i++)
    {
      const VsFrameInfo *f = g_ptr_array_index (s->frames, i);
      const char *fn = f->function != NULL ? f->function : "";
      const char *node = strstr (fn, generated);
      gboolean machine = FALSE;

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
              return g_strdup_printf ("backward pass: %s", name);
            }
        }
      if (strstr (fn, "torch::autograd::Engine") != NULL)
        engine = TRUE;
      for (guint k = 0; k < G_N_ELEMENTS (machinery); k++)
        if (strstr (fn, machinery[k]) != NULL)
          machine = TRUE;
      if (f->kind == VS_FRAME_PYTHON && first_python == NULL)
        first_python = f->text;
      if (!machine && first_other == NULL
          && !vs_frame_is_runtime (f->kind, f->file, f->module, f->function, f->line))
        first_other = f->text;
    }
  if (engine)
    return g_strdup ("backward pass");
  if (first_python != NULL)
    return g_strdup (first_python);
  return g_strdup (first_other != NULL ? first_other : s->top_frame);
}

static VsStackInfo *
load_stack (VsTrace *trace, gint64 stack_id, GError **error)
{
  VsStackInfo *s;
  GString *text;
  sqlite3_stmt *stmt;
  gint64 last_parent = 0;
  int rc;

  stmt = vs_trace_statement (trace, walk_sql, error);
  if (stmt == NULL)
    return NULL;
  sqlite3_bind_int64 (stmt, 1, stack_id);
  sqlite3_bind_int (stmt, 2, MAX_DEPTH);

  s = empty_stack (stack_id);
  while ((rc = sqlite3_step (stmt)) == SQLITE_ROW)
    {
      VsFrameInfo *f = g_new0 (VsFrameInfo, 1);
      gint64 address = vs_column_int (stmt, 7);
      gint64 load_address = vs_column_int (stmt, 9);

      last_parent = sqlite3_column_int64 (stmt, 1);
      f->id = vs_column_int (stmt, 2);
      if (f->id == VS_UNKNOWN)
        {
          g_free (f);
          sqlite3_reset (stmt);
          stack_info_free (s);
          g_set_error (error, VS_TRACE_ERROR, VS_TRACE_ERROR_CORRUPT,
                       "%s is inconsistent: stack %" G_GINT64_FORMAT
                       " names a frame that does not exist",
                       trace->path, stack_id);
          return NULL;
        }
      f->kind = sqlite3_column_int (stmt, 3);
      f->function = vs_column_dup (stmt, 4);
      f->file = vs_column_dup (stmt, 5);
      f->line = vs_column_int (stmt, 6);
      f->module = vs_column_dup (stmt, 8);
      f->user_code = vs_frame_is_user (f->kind, f->file, f->module, f->function, f->line);
      f->text = render_frame (trace, f, address, load_address);
      g_ptr_array_add (s->frames, f);
    }
  sqlite3_reset (stmt);
  if (rc != SQLITE_DONE)
    {
      stack_info_free (s);
      vs_trace_sql_error (trace, error);
      return NULL;
    }
  if (s->frames->len == 0 || last_parent != 0)
    {
      stack_info_free (s);
      g_set_error (error, VS_TRACE_ERROR, VS_TRACE_ERROR_CORRUPT,
                   "%s is inconsistent: stack %" G_GINT64_FORMAT
                   " is missing from the stack table or does not reach its root",
                   trace->path, stack_id);
      return NULL;
    }

  text = g_string_new (NULL);
  for (guint i = 0; i < s->frames->len; i++)
    {
      VsFrameInfo *f = g_ptr_array_index (s->frames, i);

      if (i > 0)
        g_string_append (text, VS_STACK_SEPARATOR);
      g_string_append (text, f->text);
    }
  {
    int site = vs_frame_pick_site (s->frames);

    if (site >= 0)
      {
        g_free (s->site);
        s->site = g_strdup (((VsFrameInfo *)g_ptr_array_index (s->frames, site))->text);
      }
  }
  g_free (s->text);
  s->text = g_string_free (text, FALSE);
  g_free (s->top_frame);
  s->top_frame = g_strdup (((VsFrameInfo *)g_ptr_array_index (s->frames, 0))->text);
  text = g_string_new (NULL);
  for (guint i = 0; i < s->frames->len; i++)
    {
      VsFrameInfo *f = g_ptr_array_index (s->frames, i);

      if (!f->user_code && f->kind != VS_FRAME_LABEL)
        continue;
      if (text->len > 0)
        g_string_append (text, VS_STACK_SEPARATOR);
      g_string_append (text, f->text);
    }
  if (text->len == 0)
    g_string_append (text, s->top_frame);
  g_free (s->user_text);
  s->user_text = g_string_free (text, FALSE);
  /* No frame of the user's own: a label (e.g. "backward pass") says more
   * than a frame inside a library. */
  for (guint i = 0; i < s->frames->len && s->site[0] == '\0'; i++)
    {
      VsFrameInfo *f = g_ptr_array_index (s->frames, i);

      if (f->kind == VS_FRAME_LABEL)
        {
          g_free (s->site);
          s->site = g_strdup (f->text);
        }
    }
  if (s->site[0] == '\0')
    {
      g_free (s->site);
      s->site = machine_site (s);
    }
  return s;
}

const VsStackInfo *
vs_stack_get (VsTrace *trace, gint64 stack_id, GError **error)
{
  VsStackInfo *s;

  g_return_val_if_fail (trace != NULL, NULL);
  if (stack_id == VS_UNKNOWN || stack_id < 0)
    stack_id = 0;
  if (trace->stacks == NULL)
    trace->stacks = g_hash_table_new_full (g_int64_hash, g_int64_equal, g_free, stack_info_free);
  s = g_hash_table_lookup (trace->stacks, &stack_id);
  if (s != NULL)
    return s;
  s = stack_id == 0 ? empty_stack (0) : load_stack (trace, stack_id, error);
  if (s == NULL)
    return NULL;
  g_hash_table_insert (trace->stacks, g_memdup2 (&stack_id, sizeof stack_id), s);
  return s;
}

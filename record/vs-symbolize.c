/* SPDX-License-Identifier: MIT */
/* vs-symbolize.c — native frames to function, file and line with libdw,
 * and the stack rewrite that inlined calls and dropped frames need.
 *
 * Workload: runs once per recorded process when `vramscope record`
 * finishes; a few thousand distinct frames in a few dozen modules
 * (PyTorch: hundreds of modules loaded, but only those that appear in a
 * stack are opened).  One Dwfl session per module, reported at the address
 * it was loaded at, so the raw return addresses are looked up as they
 * were.  A return address points after the call, so address - 1 is
 * looked up (the call's own line).
 *
 * What a module's addresses gave is kept in the symbol cache by build-id
 * (vs-symbol-cache.c, when the caller turned it on): a module whose
 * addresses are all there is not opened.
 *
 * Everything happens inside one transaction on the trace: frames are
 * updated in place (a native frame keeps its module and address and gains
 * function/file/line), inline frames are added, and the stacks whose shape
 * changed are rebuilt in the trie and the events pointing at them
 * renamed.  Nodes no event reaches any more are deleted.
 */
#include "vs-symbolize.h"
#include "vs-clock.h"
#include "vs-symbol-cache.h"
#include "vs-trace-writer.h"

#include <dlfcn.h>
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <sqlite3.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define VS_MAX_EXPANSION VS_SYMBOL_CACHE_MAX_ENTRIES /* frames one address may expand into */

typedef char *(*VsDemangleFunc) (const char *, char *, size_t *, int *);

typedef struct
{
  int64_t kind, module_id, address;
  char *function, *file;
  bool internal;      /* innermost frames like this are dropped */
  bool engine;        /* inside PyTorch's autograd engine */
  char *node;         /* autograd node name this frame runs, if any */
  int64_t *expansion; /* inline chain, innermost first, ending with itself */
  int n_expansion;
  bool present;
} VsFrameRec;

typedef struct
{
  sqlite3 *db;
  VsFrameRec *frames;
  int64_t max_frame;
  VsDemangleFunc demangle;
  sqlite3_stmt *update, *insert_frame, *find_frame, *insert_node, *find_node;
  VsSymbolizeStats *stats;
  char *err;
  size_t errlen;
} VsSym;

static int
sql_fail (VsSym *s, const char *what)
{
  snprintf (s->err, s->errlen, "%s: %s", what, sqlite3_errmsg (s->db));
  return -1;
}

/* A malloc'd display name: demangled when it is a C++ mangled name and a
 * demangler is at hand. */
static char *
display_name (VsSym *s, const char *name)
{
  if (name == NULL)
    return NULL;
  if (s->demangle != NULL && name[0] == '_' && name[1] == 'Z')
    {
      int status = -1;
      char *d = s->demangle (name, NULL, NULL, &status);
      if (status == 0 && d != NULL)
        return d;
      free (d);
    }
  return strdup (name);
}

/* The name of a subprogram or inlined-subroutine DIE: its linkage name
 * demangled, else its plain name (both followed through the abstract
 * origin). */
static char *
die_name (VsSym *s, Dwarf_Die *die)
{
  Dwarf_Attribute a;
  const char *linkage = NULL;
  if (dwarf_attr_integrate (die, DW_AT_linkage_name, &a) != NULL
      || dwarf_attr_integrate (die, DW_AT_MIPS_linkage_name, &a) != NULL)
    linkage = dwarf_formstring (&a);
  if (linkage != NULL)
    return display_name (s, linkage);
  const char *name = dwarf_diename (die);
  return name ? strdup (name) : NULL;
}

/* Source file named by a DW_AT_call_file index of a DIE in cu. */
static const char *
call_file (Dwarf_Die *cu, Dwarf_Die *die, int64_t *line)
{
  Dwarf_Attribute a;
  Dwarf_Word idx = 0, l = 0;
  Dwarf_Files *files;
  size_t nfiles;
  *line = VS_UNKNOWN;
  if (dwarf_formudata (dwarf_attr (die, DW_AT_call_line, &a), &l) == 0)
    *line = (int64_t)l;
  if (dwarf_formudata (dwarf_attr (die, DW_AT_call_file, &a), &idx) != 0
      || dwarf_getsrcfiles (cu, &files, &nfiles) != 0 || idx >= nfiles)
    return NULL;
  return dwarf_filesrc (files, idx, NULL, NULL);
}

typedef struct
{
  char *function;
  const char *file;
  int64_t line;
} VsSymEntry;

/* Looks pc up in mod; fills entries innermost first (the last one is the
 * function that really holds pc) and returns how many. */
static int
lookup (VsSym *s, Dwfl_Module *mod, uint64_t pc, VsSymEntry *e, int max)
{
  GElf_Off off;
  GElf_Sym sym;
  const char *symname = dwfl_module_addrinfo (mod, pc, &off, &sym, NULL, NULL, NULL);
  const char *file = NULL;
  int lineno = 0;
  Dwfl_Line *dl = dwfl_module_getsrc (mod, pc);
  if (dl != NULL)
    file = dwfl_lineinfo (dl, NULL, &lineno, NULL, NULL, NULL);
  int64_t line = file != NULL && lineno > 0 ? lineno : VS_UNKNOWN;

  int n = 0;
  bool have_function = false;
  Dwarf_Addr bias = 0;
  Dwarf_Die *cu = dwfl_module_addrdie (mod, pc, &bias);
  Dwarf_Die *scopes = NULL;
  int nscopes = cu ? dwarf_getscopes (cu, pc - bias, &scopes) : 0;
  for (int i = 0; i < nscopes && n < max; i++)
    {
      int tag = dwarf_tag (&scopes[i]);
      if (tag == DW_TAG_inlined_subroutine)
        {
          e[n++] = (VsSymEntry){ die_name (s, &scopes[i]), file, line };
          file = call_file (cu, &scopes[i], &line);
        }
      else if (tag == DW_TAG_subprogram)
        {
          /* The symbol table's name is the mangled one of the real function. */
          char *name = symname ? display_name (s, symname) : die_name (s, &scopes[i]);
          e[n++] = (VsSymEntry){ name, file, line };
          have_function = true;
          break;
        }
    }
  free (scopes);
  /* No DWARF (or no subprogram around pc): the symbol table's name, with
   * whatever line the line table gave. */
  if (!have_function && n < max && (symname != NULL || file != NULL))
    e[n++] = (VsSymEntry){ display_name (s, symname), file, line };
  return n;
}

/* Names of the libraries whose frames are CUDA's own. */
static bool
internal_module (const char *path)
{
  static const char *const names[] = { "libcuda.so", "libcudart.so", "libcupti.so",
                                       "libvramscope-collector.so", "libunwind.so" };
  const char *b = strrchr (path, '/');
  b = b ? b + 1 : path;
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
    if (strncmp (b, names[i], strlen (names[i])) == 0)
      return true;
  return false;
}

/* A frame of a statically linked CUDA runtime: its entry points
 * (cudaMalloc…) and internals (cudart::…, __cudart…), which carry no
 * source line of the program's own. */
static bool
internal_function (const char *fn, const char *file)
{
  if (fn == NULL || file != NULL)
    return false;
  if (strncmp (fn, "cudart::", 8) == 0 || strncmp (fn, "__cudart", 8) == 0
      || strncmp (fn, "cudaApi", 7) == 0)
    return true;
  return (strncmp (fn, "cuda", 4) == 0 && fn[4] >= 'A' && fn[4] <= 'Z')
         || (strncmp (fn, "cu", 2) == 0 && fn[2] >= 'A' && fn[2] <= 'Z');
}

/* Notes what a frame's function says about PyTorch's autograd. */
static void
classify (VsFrameRec *f)
{
  const char *fn = f->function;
  if (fn == NULL)
    return;
  if (strstr (fn, "torch::autograd::Engine::") != NULL)
    f->engine = true;
  const char *g = strstr (fn, "torch::autograd::generated::");
  if (g != NULL)
    {
      g += strlen ("torch::autograd::generated::");
      const char *end = strstr (g, "::apply");
      if (end != NULL && end > g)
        {
          f->node = strndup (g, (size_t)(end - g));
          f->engine = true;
        }
    }
}

/* INSERT OR IGNORE then SELECT: the id of a frame row. */
static int64_t
frame_row (VsSym *s, int64_t kind, int64_t module_id, int64_t address, const char *function,
           const char *file, int64_t line)
{
  sqlite3_stmt *st[2] = { s->insert_frame, s->find_frame };
  int64_t id = -1;
  for (int k = 0; k < 2; k++)
    {
      sqlite3_stmt *q = st[k];
      sqlite3_reset (q);
      sqlite3_bind_int64 (q, 1, kind);
      module_id == VS_UNKNOWN ? sqlite3_bind_null (q, 2) : sqlite3_bind_int64 (q, 2, module_id);
      address == VS_UNKNOWN ? sqlite3_bind_null (q, 3) : sqlite3_bind_int64 (q, 3, address);
      function ? sqlite3_bind_text (q, 4, function, -1, SQLITE_TRANSIENT)
               : sqlite3_bind_null (q, 4);
      file ? sqlite3_bind_text (q, 5, file, -1, SQLITE_TRANSIENT) : sqlite3_bind_null (q, 5);
      line == VS_UNKNOWN ? sqlite3_bind_null (q, 6) : sqlite3_bind_int64 (q, 6, line);
      int rc = sqlite3_step (q);
      if (k == 1 && rc == SQLITE_ROW)
        id = sqlite3_column_int64 (q, 0);
      sqlite3_reset (q);
      if (rc != SQLITE_DONE && rc != SQLITE_ROW)
        return -1;
    }
  return id;
}

/* INSERT OR IGNORE then SELECT: the id of the trie node (parent, frame). */
static int64_t
node_row (VsSym *s, int64_t parent, int64_t frame)
{
  sqlite3_stmt *st[2] = { s->insert_node, s->find_node };
  int64_t id = -1;
  for (int k = 0; k < 2; k++)
    {
      sqlite3_reset (st[k]);
      sqlite3_bind_int64 (st[k], 1, parent);
      sqlite3_bind_int64 (st[k], 2, frame);
      int rc = sqlite3_step (st[k]);
      if (k == 1 && rc == SQLITE_ROW)
        id = sqlite3_column_int64 (st[k], 0);
      sqlite3_reset (st[k]);
      if (rc != SQLITE_DONE && rc != SQLITE_ROW)
        return -1;
    }
  return id;
}

/* Symbolizes the frames of one module (ids frame_ids[0..n)). */
static int
symbolize_module (VsSym *s, const char *path, const char *build_id, int64_t load_address,
                  const int64_t *frame_ids, size_t n)
{
  bool internal = internal_module (path);
  static char *debuginfo_path = NULL;
  static const Dwfl_Callbacks callbacks = {
    .find_elf = dwfl_build_id_find_elf,
    .find_debuginfo = dwfl_standard_find_debuginfo,
    .section_address = dwfl_offline_section_address,
    .debuginfo_path = &debuginfo_path,
  };
  VsSymbolCache *cache = vs_symbol_cache_open (build_id);
  Dwfl *dwfl = NULL;
  Dwfl_Module *mod = NULL;
  bool opened = false;
  for (size_t i = 0; i < n; i++)
    {
      VsFrameRec *f = &s->frames[frame_ids[i]];
      f->internal = internal;
      s->stats->frames++;
      VsSymEntry e[VS_MAX_EXPANSION];
      int ne = -1;
      uint64_t off = (uint64_t)f->address - 1 - (uint64_t)load_address;
      const VsSymbolCacheEntry *hit = NULL;
      int nhit = vs_symbol_cache_find (cache, off, &hit);
      if (nhit >= 0)
        {
          ne = nhit;
          for (int k = 0; k < ne; k++)
            e[k] = (VsSymEntry){ hit[k].function ? strdup (hit[k].function) : NULL, hit[k].file,
                                 hit[k].line };
        }
      else
        {
          /* Opened at the first address the cache does not have. */
          if (!opened)
            {
              opened = true;
              dwfl = dwfl_begin (&callbacks);
              if (dwfl != NULL)
                {
                  dwfl_report_begin (dwfl);
                  mod = dwfl_report_elf (dwfl, path, path, -1, (GElf_Addr)load_address, false);
                  dwfl_report_end (dwfl, NULL, NULL);
                }
            }
          if (mod == NULL)
            continue;
          ne = lookup (s, mod, (uint64_t)f->address - 1, e, VS_MAX_EXPANSION);
          VsSymbolCacheEntry kept[VS_MAX_EXPANSION];
          for (int k = 0; k < ne; k++)
            kept[k] = (VsSymbolCacheEntry){ e[k].function, (char *)e[k].file, e[k].line };
          vs_symbol_cache_add (cache, off, kept, ne);
        }
      if (ne == 0)
        continue;
      VsSymEntry *outer = &e[ne - 1];
      if (outer->function != NULL)
        s->stats->symbolized++;
      if (outer->file != NULL)
        s->stats->with_line++;
      sqlite3_reset (s->update);
      outer->function ? sqlite3_bind_text (s->update, 1, outer->function, -1, SQLITE_TRANSIENT)
                      : sqlite3_bind_null (s->update, 1);
      outer->file ? sqlite3_bind_text (s->update, 2, outer->file, -1, SQLITE_TRANSIENT)
                  : sqlite3_bind_null (s->update, 2);
      outer->line == VS_UNKNOWN ? sqlite3_bind_null (s->update, 3)
                                : sqlite3_bind_int64 (s->update, 3, outer->line);
      sqlite3_bind_int64 (s->update, 4, frame_ids[i]);
      int rc = sqlite3_step (s->update);
      f->function = outer->function ? strdup (outer->function) : NULL;
      f->file = outer->file ? strdup (outer->file) : NULL;
      f->internal = internal || internal_function (f->function, f->file);
      classify (f);
      if (rc == SQLITE_DONE && ne > 1)
        {
          f->expansion = malloc ((size_t)ne * sizeof (int64_t));
          f->n_expansion = ne;
          for (int k = 0; k < ne - 1 && f->expansion; k++)
            {
              f->expansion[k] = frame_row (s, VS_FRAME_INLINE, f->module_id, f->address,
                                           e[k].function, e[k].file, e[k].line);
              if (f->expansion[k] < 0)
                rc = SQLITE_ERROR;
              s->stats->inlined++;
            }
          if (f->expansion)
            f->expansion[ne - 1] = frame_ids[i];
        }
      for (int k = 0; k < ne; k++)
        free (e[k].function);
      if (rc != SQLITE_DONE)
        {
          if (dwfl != NULL)
            dwfl_end (dwfl);
          vs_symbol_cache_close (cache);
          return sql_fail (s, "cannot store a symbolized frame");
        }
    }
  if (dwfl != NULL)
    dwfl_end (dwfl);
  vs_symbol_cache_close (cache);
  return 0;
}

/* The largest id of the query sql ("SELECT max(id) FROM …") into *max
 * (0 for an empty table).  0, or -1 with s->err telling what it could not
 * read. */
static int
max_id (VsSym *s, const char *sql, const char *what, int64_t *max)
{
  sqlite3_stmt *q;
  if (sqlite3_prepare_v2 (s->db, sql, -1, &q, NULL) != SQLITE_OK)
    return sql_fail (s, what);
  *max = sqlite3_step (q) == SQLITE_ROW ? sqlite3_column_int64 (q, 0) : 0;
  sqlite3_finalize (q);
  return 0;
}

/* Loads every frame (id-indexed) and reports the largest id. */
static int
load_frames (VsSym *s)
{
  sqlite3_stmt *q;
  if (max_id (s, "SELECT max(id) FROM frame", "cannot read frames", &s->max_frame) != 0)
    return -1;
  s->frames = calloc ((size_t)s->max_frame + 1, sizeof (VsFrameRec));
  if (s->frames == NULL)
    {
      snprintf (s->err, s->errlen, "out of memory");
      return -1;
    }
  static const char *sql = "SELECT f.id, f.kind, f.module_id, f.address, f.function, f.file, m.path"
                           " FROM frame f LEFT JOIN module m ON m.id = f.module_id";
  if (sqlite3_prepare_v2 (s->db, sql, -1, &q, NULL) != SQLITE_OK)
    return sql_fail (s, "cannot read frames");
  while (sqlite3_step (q) == SQLITE_ROW)
    {
      int64_t id = sqlite3_column_int64 (q, 0);
      if (id < 0 || id > s->max_frame)
        continue;
      VsFrameRec *f = &s->frames[id];
      f->present = true;
      f->kind = sqlite3_column_int64 (q, 1);
      f->module_id
          = sqlite3_column_type (q, 2) == SQLITE_NULL ? VS_UNKNOWN : sqlite3_column_int64 (q, 2);
      f->address
          = sqlite3_column_type (q, 3) == SQLITE_NULL ? VS_UNKNOWN : sqlite3_column_int64 (q, 3);
      const char *fn = (const char *)sqlite3_column_text (q, 4);
      const char *file = (const char *)sqlite3_column_text (q, 5);
      const char *path = (const char *)sqlite3_column_text (q, 6);
      f->function = fn ? strdup (fn) : NULL;
      f->file = file ? strdup (file) : NULL;
      f->internal = f->kind == VS_FRAME_NATIVE
                    && ((path != NULL && internal_module (path))
                        || internal_function (f->function, f->file));
      classify (f);
    }
  sqlite3_finalize (q);
  return 0;
}

/* Symbolizes the frames still without a name, module by module. */
static int
symbolize_frames (VsSym *s)
{
  static const char *sql = "SELECT m.id, m.path, m.load_address, f.id, m.build_id FROM frame f"
                           " JOIN module m ON m.id = f.module_id"
                           " WHERE f.kind = 1 AND f.function IS NULL AND f.file IS NULL"
                           "  AND f.address IS NOT NULL"
                           " ORDER BY m.id, f.id";
  sqlite3_stmt *q;
  if (sqlite3_prepare_v2 (s->db, sql, -1, &q, NULL) != SQLITE_OK)
    return sql_fail (s, "cannot read frames");
  int64_t *ids = NULL;
  size_t n = 0, cap = 0;
  int64_t cur = -1, load = 0;
  char *path = NULL, *build_id = NULL;
  int rc = 0;
  for (;;)
    {
      int step = sqlite3_step (q);
      int64_t mid = step == SQLITE_ROW ? sqlite3_column_int64 (q, 0) : -2;
      if (mid != cur && n > 0)
        {
          if (symbolize_module (s, path, build_id, load, ids, n) != 0)
            {
              rc = -1;
              break;
            }
          n = 0;
        }
      if (step != SQLITE_ROW)
        break;
      if (mid != cur)
        {
          cur = mid;
          free (path);
          const char *p = (const char *)sqlite3_column_text (q, 1);
          path = strdup (p ? p : "");
          load = sqlite3_column_int64 (q, 2);
          free (build_id);
          const char *b = (const char *)sqlite3_column_text (q, 4);
          build_id = b ? strdup (b) : NULL;
        }
      int64_t fid = sqlite3_column_int64 (q, 3);
      if (fid < 0 || fid > s->max_frame)
        continue;
      if (n == cap)
        {
          cap = cap ? cap * 2 : 256;
          int64_t *m = realloc (ids, cap * sizeof *m);
          if (m == NULL)
            {
              rc = -1;
              snprintf (s->err, s->errlen, "out of memory");
              break;
            }
          ids = m;
        }
      ids[n++] = fid;
    }
  sqlite3_finalize (q);
  free (ids);
  free (path);
  free (build_id);
  return rc;
}

/* --- the stack rewrite ---------------------------------------------------- */

typedef struct
{
  int64_t *parent, *frame; /* by node id */
  int64_t max_node;
} VsTrie;

static const char *used_stacks_sql = "SELECT stack_id FROM mem_event WHERE stack_id > 0"
                                     " UNION SELECT stack_id FROM pool_event WHERE stack_id > 0"
                                     " UNION SELECT stack_id FROM alloc_event WHERE stack_id > 0"
                                     " UNION SELECT stack_id FROM failed_alloc WHERE stack_id > 0";

static int
load_trie (VsSym *s, VsTrie *t)
{
  sqlite3_stmt *q;
  if (max_id (s, "SELECT max(id) FROM stack", "cannot read stacks", &t->max_node) != 0)
    return -1;
  t->parent = calloc ((size_t)t->max_node + 1, sizeof (int64_t));
  t->frame = calloc ((size_t)t->max_node + 1, sizeof (int64_t));
  if (t->parent == NULL || t->frame == NULL)
    {
      snprintf (s->err, s->errlen, "out of memory");
      return -1;
    }
  if (sqlite3_prepare_v2 (s->db, "SELECT id, parent_id, frame_id FROM stack", -1, &q, NULL)
      != SQLITE_OK)
    return sql_fail (s, "cannot read stacks");
  while (sqlite3_step (q) == SQLITE_ROW)
    {
      int64_t id = sqlite3_column_int64 (q, 0);
      if (id > 0 && id <= t->max_node)
        {
          t->parent[id] = sqlite3_column_int64 (q, 1);
          t->frame[id] = sqlite3_column_int64 (q, 2);
        }
    }
  sqlite3_finalize (q);
  return 0;
}

static VsFrameRec *
frame_at (VsSym *s, int64_t id)
{
  return id > 0 && id <= s->max_frame && s->frames[id].present ? &s->frames[id] : NULL;
}

/* Builds the new frame list (innermost first) of stack old into out:
 * inline expansions in place, leading CUDA runtime frames dropped, and a
 * last entry 0 standing for the label frame when the stack runs in the
 * autograd engine with no Python frame (label_node then names the autograd
 * node, if a frame showed one).  Returns its length, or -1 when the stack
 * is broken (it is left alone). */
static int64_t
new_frames (VsSym *s, const VsTrie *t, int64_t old, int64_t **out, size_t *cap,
            const char **label_node)
{
  size_t n = 0;
  bool python = false, engine = false;
  *label_node = NULL;
  int64_t depth = 0;
  for (int64_t node = old; node != 0; node = t->parent[node])
    {
      if (node < 0 || node > t->max_node || t->frame[node] == 0
          || ++depth > VS_TRACE_MAX_STACK_DEPTH)
        return -1;
      int64_t fid = t->frame[node];
      VsFrameRec *f = frame_at (s, fid);
      int ne = f && f->expansion ? f->n_expansion : 1;
      if (n + (size_t)ne + 1 > *cap)
        {
          *cap = (*cap + (size_t)ne + 1) * 2;
          int64_t *m = realloc (*out, *cap * sizeof *m);
          if (m == NULL)
            return -1;
          *out = m;
        }
      /* Leading frames of CUDA's runtime are dropped. */
      if (n == 0 && f != NULL && f->internal)
        continue;
      if (f != NULL)
        {
          python |= f->kind == VS_FRAME_PYTHON;
          engine |= f->engine;
          if (f->node != NULL && *label_node == NULL)
            *label_node = f->node;
          if (f->kind == VS_FRAME_LABEL)
            engine = false, python = true; /* already labelled */
        }
      for (int k = 0; k < ne; k++)
        (*out)[n++] = f && f->expansion ? f->expansion[k] : fid;
    }
  if (engine && !python)
    (*out)[n++] = 0; /* placeholder: the label frame, filled by the caller */
  return (int64_t)n;
}

/* Rewrites every used stack whose frames changed. */
static int
rewrite_stacks (VsSym *s)
{
  VsTrie t = { 0 };
  int rc = load_trie (s, &t);
  sqlite3_stmt *used = NULL, *map = NULL;
  int64_t *frames = NULL;
  size_t cap = 0;
  if (rc == 0
      && (sqlite3_exec (s->db,
                        "CREATE TEMP TABLE vs_stack_map (old INTEGER PRIMARY KEY,"
                        " new INTEGER NOT NULL)",
                        NULL, NULL, NULL)
              != SQLITE_OK
          || sqlite3_prepare_v2 (s->db, used_stacks_sql, -1, &used, NULL) != SQLITE_OK
          || sqlite3_prepare_v2 (s->db, "INSERT INTO vs_stack_map VALUES (?, ?)", -1, &map, NULL)
                 != SQLITE_OK))
    rc = sql_fail (s, "cannot rewrite stacks");
  while (rc == 0 && sqlite3_step (used) == SQLITE_ROW)
    {
      int64_t old = sqlite3_column_int64 (used, 0);
      const char *node_name = NULL;
      int64_t n = new_frames (s, &t, old, &frames, &cap, &node_name);
      if (n <= 0)
        continue;
      if (frames[n - 1] == 0)
        {
          char label[256];
          if (node_name != NULL)
            snprintf (label, sizeof label, "backward pass: %s", node_name);
          else
            snprintf (label, sizeof label, "backward pass");
          frames[n - 1]
              = frame_row (s, VS_FRAME_LABEL, VS_UNKNOWN, VS_UNKNOWN, label, NULL, VS_UNKNOWN);
          if (frames[n - 1] < 0)
            {
              rc = sql_fail (s, "cannot add a label frame");
              break;
            }
        }
      /* Unchanged when the walk gives back exactly the old chain. */
      bool same = true;
      int64_t node = old;
      for (int64_t i = 0; i < n; i++)
        {
          if (node == 0 || node > t.max_node || t.frame[node] != frames[i])
            {
              same = false;
              break;
            }
          node = t.parent[node];
        }
      if (same && node == 0)
        continue;
      int64_t id = 0;
      for (int64_t i = n - 1; i >= 0 && id >= 0; i--)
        id = node_row (s, id, frames[i]);
      if (id < 0)
        {
          rc = sql_fail (s, "cannot add a stack");
          break;
        }
      sqlite3_reset (map);
      sqlite3_bind_int64 (map, 1, old);
      sqlite3_bind_int64 (map, 2, id);
      if (sqlite3_step (map) != SQLITE_DONE)
        {
          rc = sql_fail (s, "cannot rewrite stacks");
          break;
        }
      s->stats->stacks_rewritten++;
    }
  sqlite3_finalize (used);
  sqlite3_finalize (map);
  free (frames);
  free (t.parent);
  free (t.frame);
  static const char *rename_sql
      = "UPDATE mem_event SET stack_id = (SELECT new FROM vs_stack_map WHERE old = stack_id)"
        " WHERE stack_id IN (SELECT old FROM vs_stack_map);"
        "UPDATE pool_event SET stack_id = (SELECT new FROM vs_stack_map WHERE old = stack_id)"
        " WHERE stack_id IN (SELECT old FROM vs_stack_map);"
        "UPDATE alloc_event SET stack_id = (SELECT new FROM vs_stack_map WHERE old = stack_id)"
        " WHERE stack_id IN (SELECT old FROM vs_stack_map);"
        "UPDATE failed_alloc SET stack_id = (SELECT new FROM vs_stack_map WHERE old = stack_id)"
        " WHERE stack_id IN (SELECT old FROM vs_stack_map);"
        "DELETE FROM stack WHERE id NOT IN ("
        " WITH RECURSIVE live (id) AS ("
        "  SELECT stack_id FROM mem_event WHERE stack_id > 0"
        "  UNION SELECT stack_id FROM pool_event WHERE stack_id > 0"
        "  UNION SELECT stack_id FROM alloc_event WHERE stack_id > 0"
        "  UNION SELECT stack_id FROM failed_alloc WHERE stack_id > 0"
        "  UNION SELECT s.parent_id FROM stack s JOIN live ON s.id = live.id"
        "   WHERE s.parent_id != 0)"
        " SELECT id FROM live);"
        "DROP TABLE vs_stack_map;";
  if (rc == 0 && sqlite3_exec (s->db, rename_sql, NULL, NULL, NULL) != SQLITE_OK)
    rc = sql_fail (s, "cannot rewrite stacks");
  return rc;
}

int
vs_symbolize_db (sqlite3 *db, VsSymbolizeStats *stats, char *err, size_t errlen)
{
  VsSymbolizeStats local;
  if (stats == NULL)
    stats = &local;
  memset (stats, 0, sizeof *stats);
  int64_t t0 = vs_clock_ns (CLOCK_MONOTONIC);
  VsSym s = { .db = db, .stats = stats, .err = err, .errlen = errlen };

  sqlite3_stmt *q;
  bool done = false;
  if (sqlite3_prepare_v2 (db, "SELECT value FROM meta WHERE key = 'symbolized'", -1, &q, NULL)
      != SQLITE_OK)
    return sql_fail (&s, "not a trace");
  if (sqlite3_step (q) == SQLITE_ROW)
    done = sqlite3_column_int64 (q, 0) == 1;
  sqlite3_finalize (q);
  if (done)
    return 0;
  /* Without a native frame nothing changes: names, inline chains, the
   * runtime's frames and the engine's labels all come from native frames.
   * The stack rewrite's scans of every event are skipped (an imported
   * PyTorch history: hundreds of thousands of events, Python frames). */
  if (sqlite3_prepare_v2 (db, "SELECT 1 FROM frame WHERE kind = ?1 LIMIT 1", -1, &q, NULL)
      != SQLITE_OK)
    return sql_fail (&s, "not a trace");
  sqlite3_bind_int (q, 1, VS_FRAME_NATIVE);
  bool native = sqlite3_step (q) == SQLITE_ROW;
  sqlite3_finalize (q);
  if (!native)
    {
      stats->elapsed_ns = vs_clock_ns (CLOCK_MONOTONIC) - t0;
      return 0;
    }

  void *cxx = dlopen ("libstdc++.so.6", RTLD_NOW | RTLD_LOCAL);
  if (cxx != NULL)
    s.demangle = (VsDemangleFunc)dlsym (cxx, "__cxa_demangle");

  int rc = sqlite3_exec (db, "BEGIN IMMEDIATE", NULL, NULL, NULL) == SQLITE_OK
               ? 0
               : sql_fail (&s, "cannot start a transaction");
  const struct
  {
    const char *sql;
    sqlite3_stmt **stmt;
  } statements[] = {
    { "UPDATE frame SET function = ?, file = ?, line = ? WHERE id = ?", &s.update },
    { "INSERT OR IGNORE INTO frame (kind, module_id, address, function, file, line)"
      " VALUES (?,?,?,?,?,?)",
      &s.insert_frame },
    { "SELECT id FROM frame WHERE kind = ?1 AND"
      " ifnull(module_id, 0) = ifnull(?2, 0) AND"
      " ifnull(address, 0) = ifnull(?3, 0) AND"
      " ifnull(function, '') = ifnull(?4, '') AND"
      " ifnull(file, '') = ifnull(?5, '') AND"
      " ifnull(line, 0) = ifnull(?6, 0)",
      &s.find_frame },
    { "INSERT OR IGNORE INTO stack (parent_id, frame_id) VALUES (?, ?)", &s.insert_node },
    { "SELECT id FROM stack WHERE parent_id = ? AND frame_id = ?", &s.find_node },
  };
  for (size_t k = 0; rc == 0 && k < sizeof statements / sizeof statements[0]; k++)
    if (sqlite3_prepare_v2 (db, statements[k].sql, -1, statements[k].stmt, NULL) != SQLITE_OK)
      rc = sql_fail (&s, "not a trace");
  if (rc == 0)
    rc = load_frames (&s);
  if (rc == 0)
    rc = symbolize_frames (&s);
  if (rc == 0)
    rc = rewrite_stacks (&s);
  if (rc == 0
      && sqlite3_exec (db, "INSERT OR REPLACE INTO meta VALUES ('symbolized', 1)", NULL, NULL, NULL)
             != SQLITE_OK)
    rc = sql_fail (&s, "cannot mark the trace symbolized");
  sqlite3_finalize (s.update);
  sqlite3_finalize (s.insert_frame);
  sqlite3_finalize (s.find_frame);
  sqlite3_finalize (s.insert_node);
  sqlite3_finalize (s.find_node);
  if (rc == 0 && sqlite3_exec (db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK)
    rc = sql_fail (&s, "cannot commit the symbols");
  if (rc != 0)
    sqlite3_exec (db, "ROLLBACK", NULL, NULL, NULL);
  for (int64_t i = 0; s.frames != NULL && i <= s.max_frame; i++)
    {
      free (s.frames[i].function);
      free (s.frames[i].file);
      free (s.frames[i].node);
      free (s.frames[i].expansion);
    }
  free (s.frames);
  stats->elapsed_ns = vs_clock_ns (CLOCK_MONOTONIC) - t0;
  return rc;
}

int
vs_symbolize_file (const char *path, VsSymbolizeStats *stats, char *err, size_t errlen)
{
  sqlite3 *db = NULL;
  if (sqlite3_open_v2 (path, &db, SQLITE_OPEN_READWRITE, NULL) != SQLITE_OK)
    {
      snprintf (err, errlen, "cannot open %s: %s", path,
                db ? sqlite3_errmsg (db) : "out of memory");
      sqlite3_close (db);
      return -1;
    }
  sqlite3_busy_timeout (db, 5000);
  int rc = vs_symbolize_db (db, stats, err, errlen);
  sqlite3_close (db);
  return rc;
}

void
vs_symbolize_traces (const char *const *paths, size_t n, bool quiet)
{
  for (size_t i = 0; i < n; i++)
    {
      VsSymbolizeStats st;
      char err[512] = "";
      sqlite3 *db = NULL;
      int rc = -1;
      if (sqlite3_open_v2 (paths[i], &db, SQLITE_OPEN_READWRITE, NULL) == SQLITE_OK)
        {
          sqlite3_busy_timeout (db, 5000);
          rc = vs_symbolize_db (db, &st, err, sizeof err);
          static const char *sql = "INSERT OR REPLACE INTO meta VALUES (?, ?)";
          sqlite3_stmt *q = NULL;
          if (rc == 0 && st.frames > 0 && sqlite3_prepare_v2 (db, sql, -1, &q, NULL) == SQLITE_OK)
            {
              const struct
              {
                const char *key;
                int64_t v;
              } kv[] = {
                { "collector_symbolize_ns", st.elapsed_ns },
                { "collector_symbolized_frames", st.symbolized },
                { "collector_native_frames", st.frames },
              };
              for (size_t k = 0; k < sizeof kv / sizeof kv[0]; k++)
                {
                  sqlite3_reset (q);
                  sqlite3_bind_text (q, 1, kv[k].key, -1, SQLITE_STATIC);
                  sqlite3_bind_int64 (q, 2, kv[k].v);
                  sqlite3_step (q);
                }
            }
          sqlite3_finalize (q);
        }
      else
        {
          snprintf (err, sizeof err, "%s", db ? sqlite3_errmsg (db) : "out of memory");
        }
      sqlite3_close (db);
      if (rc != 0 && !quiet)
        fprintf (stderr, "vramscope record: stacks of %s stay unsymbolized: %s\n", paths[i], err);
    }
}

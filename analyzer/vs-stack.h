/* vs-stack.h — rendering call stacks: frames, top frame, site, stack text.
 *
 * A stack id names a node of the trace's stack trie; walking parent links
 * gives its frames innermost first.  A frame is written
 *   `path:line function`   (symbolized native or Python frame),
 *   `module+0xoffset`      (native frame without symbols),
 *   `function`             (label frames such as "backward pass").
 * The site is the innermost frame in the user's own code: not the Python
 * standard library, not installed packages (site-packages, dist-packages),
 * not system or CUDA libraries, not the profiler's or allocator's own
 * frames (see vs_frame_is_user() in vs-frame.h); when no frame qualifies,
 * the innermost label (e.g. "backward pass"), else "backward pass: <node>"
 * for a native stack of PyTorch's autograd engine (`stacks="all"`
 * snapshots), else the innermost frame that is not the profiler's or
 * allocator's own, else the top frame.  The
 * stack text joins the frames innermost first with VS_STACK_SEPARATOR.
 * Paths are shown as vs_frame_display_path() writes them: short (library
 * files relative to their package, the program's relative to its working
 * directory) unless vs_stack_set_full_paths() asked for full ones.
 */
#pragma once

#include "vs-trace.h"
#include "vs-frame.h"

G_BEGIN_DECLS

#define VS_STACK_SEPARATOR " <- "

/* One frame of a stack. */
typedef struct
{
  gint64 id;      /* frame.id */
  int kind;       /* VsFrameKind */
  char *text;     /* rendered as described above */
  char *module;   /* module path, NULL if none */
  char *file;     /* NULL if unknown */
  char *function; /* NULL if unknown */
  gint64 line;    /* VS_UNKNOWN if unknown */
  gboolean user_code;
} VsFrameInfo;

/* The rendering of one stack.  Strings are "" (never NULL) when the stack
 * is empty or unknown. */
typedef struct
{
  gint64 stack_id;
  char *top_frame;
  char *site;
  char *text;        /* every frame, innermost first */
  char *user_text;   /* the user's own frames and labels, innermost first;
                      * the top frame when there are none */
  GPtrArray *frames; /* VsFrameInfo*, innermost first */
} VsStackInfo;

/* The rendered stack stack_id (0 or VS_UNKNOWN: the empty stack).  Cached:
 * the result is owned by trace and stays valid until vs_trace_free().
 * Returns NULL with error set when the trie is broken (a missing node or a
 * cycle). */
const VsStackInfo *vs_stack_get (VsTrace *trace, gint64 stack_id, GError **error);

/* Shows full paths in every stack rendered from now on (full_paths), or
 * short ones (the default).  Stacks obtained before stay valid and keep
 * their texts. */
void vs_stack_set_full_paths (VsTrace *trace, gboolean full_paths);

/* The program's working directory its own paths are shown relative to:
 * meta 'cwd', else inferred from the command line (the folder in front of a
 * script it names by a relative path, in the frames' files; the folder of
 * a script named by an absolute path); NULL when unknown.  Owned by trace. */
const char *vs_stack_get_path_base (VsTrace *trace);

G_END_DECLS

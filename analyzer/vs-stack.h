/* vs-stack.h — rendering call stacks: frames, top frame, site, stack text.
 *
 * A stack id names a node of the trace's stack trie; walking parent links
 * gives its frames innermost first.  A frame is written
 *   `path:line function`   (symbolized native or Python frame),
 *   `module+0xoffset`      (native frame without symbols),
 *   `function`             (label frames such as "backward pass").
 * The site is the innermost frame in the user's own code: not the Python
 * standard library, not installed packages (site-packages, dist-packages),
 * not system or CUDA libraries (see vs_frame_is_user_code()); when no frame
 * qualifies the site is the top frame.  The stack text joins the frames
 * innermost first with VS_STACK_SEPARATOR.
 */
#pragma once

#include "vs-trace.h"

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
  GPtrArray *frames; /* VsFrameInfo*, innermost first */
} VsStackInfo;

/* The rendered stack stack_id (0 or VS_UNKNOWN: the empty stack).  Cached:
 * the result is owned by trace and stays valid until vs_trace_free().
 * Returns NULL with error set when the trie is broken (a missing node or a
 * cycle). */
const VsStackInfo *vs_stack_get (VsTrace *trace, gint64 stack_id, GError **error);

/* Whether a frame at file (or, for native frames, in module) belongs to the
 * user's own code rather than Python's standard library, installed packages
 * or system and CUDA libraries.  Both may be NULL. */
gboolean vs_frame_is_user_code (const char *file, const char *module);

G_END_DECLS

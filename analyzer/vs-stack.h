/* SPDX-License-Identifier: MIT */
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

/* One frame of a stack.  Read once per trace and shared by every stack
 * that holds it. */
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
  /* What the site rules need of the frame alone: */
  gboolean machinery;  /* the profiler's or allocator's own frame */
  gboolean runtime;    /* the interpreter's or the C/C++ runtime's
                        * (vs_frame_is_runtime()): never a site */
  gboolean engine;     /* a frame of PyTorch's autograd engine */
  char *backward_site; /* "backward pass: <node>" when the frame names an
                        * autograd node, else NULL */
} VsFrameInfo;

typedef struct _VsStackInfo VsStackInfo;

/* One stack: a node of the trie, holding its innermost frame and the stack
 * of the frames outside it (parent), so that stacks sharing their outer
 * frames share those nodes.  A trace's stacks take memory in proportion
 * to the trie nodes and frames they reach, never to the sum of their
 * depths.  Strings are "" (never NULL) for the empty or unknown stack. */
struct _VsStackInfo
{
  gint64 stack_id;
  const char *top_frame;     /* the innermost frame's text */
  const char *site;          /* see the header comment */
  const VsFrameInfo *frame;  /* innermost frame; NULL for the empty stack */
  const VsStackInfo *parent; /* the frames outside frame; NULL when frame
                              * is the outermost (or the stack is empty) */
  guint depth;               /* number of frames; 0 for the empty stack */
  /* The innermost frames the site rules look for, NULL when none: a user
   * frame with a text, a label with a text, one that is not the
   * profiler's or allocator's own nor the runtime's; a Python frame; a
   * Python frame of the user's; the innermost autograd node's site;
   * whether any frame is the autograd engine's. */
  const VsFrameInfo *innermost_user;
  const VsFrameInfo *innermost_python;
  const VsFrameInfo *innermost_user_python;
  const VsFrameInfo *innermost_label;
  const VsFrameInfo *innermost_other;
  const char *backward_site;
  gboolean engine;
  gboolean user_code; /* some frame is the user's own (VsFrameInfo.user_code) */
};

/* The rendered stack stack_id (0 or VS_UNKNOWN: the empty stack).  Cached:
 * the result is owned by trace and stays valid until vs_trace_free().
 * Reads only the trie nodes and frames not read before.  Returns NULL with
 * error set when the trie is broken (a missing node or frame, or a
 * cycle). */
const VsStackInfo *vs_stack_get (VsTrace *trace, gint64 stack_id, GError **error);

/* The stack's text: every frame, innermost first, joined with
 * VS_STACK_SEPARATOR ("" for the empty stack).  Built on each call, in
 * time and memory proportional to the stack's depth; free with g_free(). */
char *vs_stack_dup_text (const VsStackInfo *s);

/* The user's own frames and labels, innermost first, joined with
 * VS_STACK_SEPARATOR; the top frame when there are none.  As
 * vs_stack_dup_text(). */
char *vs_stack_dup_user_text (const VsStackInfo *s);

/* The stack's frames innermost first (s->depth of them; NULL when empty),
 * for walking it outermost first.  Free the array with g_free(); the
 * frames are the trace's. */
const VsFrameInfo **vs_stack_dup_frames (const VsStackInfo *s);

/* Compares the texts of a and b (vs_stack_dup_text()) as strcmp() would,
 * without building them: stops at the first difference. */
int vs_stack_text_cmp (const VsStackInfo *a, const VsStackInfo *b);

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

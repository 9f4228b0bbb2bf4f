/* vs-application.h — the viewer application: actions, keyboard shortcuts,
 * and how the command line ([FILE], --screenshot, --size) becomes a window.
 */
#pragma once

#include <adwaita.h>

G_BEGIN_DECLS

#define VS_TYPE_APPLICATION (vs_application_get_type ())
G_DECLARE_FINAL_TYPE (VsApplication, vs_application, VS, APPLICATION, AdwApplication)

/* file: the trace to open (NULL: an empty window); screenshot: a PNG path
 * (NULL: interactive); width/height: the window's size (0: default);
 * pane: the pane shown first (NULL: attribution). */
VsApplication *vs_application_new (const char *file, const char *screenshot, int width, int height,
                                   const char *pane);

/* Whether name is a pane vs_application_new() accepts. */
gboolean vs_application_is_pane (const char *name);

/* When OpenGL is rendered in software (Mesa's llvmpipe: no GPU, a remote
 * or virtual X server such as Xvfb), GTK's GL renderer repaints the whole
 * window on the CPU at several times the cost of its cairo renderer, which
 * repaints only what changed: this chooses cairo then (GSK_RENDERER=cairo),
 * unless the user set GSK_RENDERER.  Call after gtk_init() and before the
 * first window is realized. */
void vs_application_choose_renderer (void);

/* Whether a screenshot run failed (exit status 1). */
gboolean vs_application_get_failed (VsApplication *self);

G_END_DECLS

/* SPDX-License-Identifier: MIT */
/* vs-application.h — the viewer application: its command line, actions
 * and keyboard shortcuts, and how a command line becomes a window.
 *
 * `vramscope-view [--screenshot PNG] [--size WxH] [--pane NAME] [FILE]`:
 * the options are GApplication's (g_application_add_main_option_entries),
 * checked before any window opens (a bad one: one line on stderr, exit 1);
 * FILE arrives through GApplication's "open".
 */
#pragma once

#include <adwaita.h>

G_BEGIN_DECLS

#define VS_TYPE_APPLICATION (vs_application_get_type ())
G_DECLARE_FINAL_TYPE (VsApplication, vs_application, VS, APPLICATION, AdwApplication)

/* A new viewer application; run it with g_application_run(). */
VsApplication *vs_application_new (void);

/* Whether name is a pane --pane accepts. */
gboolean vs_application_is_pane (const char *name);

/* When OpenGL is rendered in software (Mesa's llvmpipe: no GPU, a remote
 * or virtual X server such as Xvfb), GTK's GL renderer repaints the whole
 * window on the CPU at several times the cost of its cairo renderer, which
 * repaints only what changed: this chooses cairo then (GSK_RENDERER=cairo),
 * unless the user set GSK_RENDERER.  Call after gtk_init() and before the
 * first window is realized. */
void vs_application_choose_renderer (void);

/* Whether the command line failed: more than one file, --screenshot
 * without one, or a screenshot that could not load its trace or save its
 * picture (exit status 1). */
gboolean vs_application_get_failed (VsApplication *self);

/* Whether the command line was wrong: an unknown option (GApplication
 * then never handed the options over), a bad --size, --whatif or --pane,
 * --screenshot without a file, or more than one file.  Its exit status
 * is 2. */
gboolean vs_application_get_usage_error (VsApplication *self);

G_END_DECLS

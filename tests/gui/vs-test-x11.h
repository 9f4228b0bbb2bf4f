/* SPDX-License-Identifier: MIT */
/* vs-test-x11.h — real input for GUI tests under Xvfb: pointer moves,
 * clicks and keys made with the XTest extension, so they travel as a
 * user's do (X server, GDK, GTK's controllers).
 */
#pragma once

#include <gtk/gtk.h>

#include <X11/Xlib.h>

/* The root window's coordinates (rx, ry) of (x, y) in widget. */
void vs_test_x11_to_root (GtkWidget *widget, double x, double y, int *rx, int *ry);
/* The pixel on the X screen at (x, y) of widget, as 0xRRGGBB: what a user
 * sees there, drawn by the X server. */
guint32 vs_test_x11_screen_pixel (GtkWidget *widget, double x, double y);
/* Moves the pointer to (x, y) of widget, in the widget's coordinates. */
void vs_test_x11_move_to (GtkWidget *widget, double x, double y);
/* Clicks button at (x, y) of widget. */
void vs_test_x11_click_at (GtkWidget *widget, double x, double y, guint button);
/* Clicks the middle of widget with the first button. */
void vs_test_x11_click (GtkWidget *widget);
/* Presses and releases keysym with the modifiers' keysyms held. */
void vs_test_x11_key (KeySym keysym, const KeySym *mods, guint n_mods);
/* Presses and releases keysym and returns at once, without running the
 * main loop (for a test that looks at what the very next frames show). */
void vs_test_x11_key_now (KeySym keysym);
/* Types text: letters of either case, digits and . _ - / */
void vs_test_x11_type (const char *text);
/* Gives window the keyboard focus, as a window manager would; returns
 * whether it became active in time. */
gboolean vs_test_x11_focus (GtkWindow *window);
/* Runs the main loop for ms milliseconds. */
void vs_test_x11_spin (guint ms);

/* The GNOME HIG's basics on every mapped widget under root: each button
 * (a menu button's included) has a tooltip and can take the keyboard
 * focus, and each label that may be ellipsized, when it shows text, has
 * a tooltip (column headers, which GTK 4.8 keeps to itself, aside).
 * Fails the test otherwise, naming the widget; returns how many buttons
 * and labels were checked. */
guint vs_test_audit_reach (GtkWidget *root);

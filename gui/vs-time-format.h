/* SPDX-License-Identifier: MIT */
/* vs-time-format.h — times as the viewer's axis and tooltips write them.
 *
 * s / ms / µs for times relative to the trace's start.  Bytes and durations
 * use the analyzer's vs_format_bytes() / vs_format_duration() (vs-table.h),
 * so the viewer and the CLI print the same units.
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* Whether times are event numbers rather than ns (a trace without
 * timestamps, see vs_document_is_event_order): the functions below then
 * write "#N".  Set by the window for the document it shows. */
void vs_time_format_set_event_order (gboolean event_order);

/* The narrowest span a chart zooms to: 1 µs, or 8 events. */
gint64 vs_time_format_min_span (void);

/* A time axis label for t (ns) on an axis whose ticks are step ns apart:
 * the unit follows the step, with as many decimals as the step needs
 * ("12.5 s", "250 ms", "1.250 s").  Returns a new string. */
char *vs_format_time_tick (gint64 t, gint64 step);

/* An exact time for tooltips and tables: "1.234567 s" (µs precision),
 * "12.345 ms", "1.250 µs" or "850 ns" below a second, "—" for a negative
 * (unknown) time.  Returns a new string. */
char *vs_format_time (gint64 t);

G_END_DECLS

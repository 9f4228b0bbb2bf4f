/* SPDX-License-Identifier: MIT */
/* vs-format.h — human forms of bytes and durations: "1.50 GiB", "12.3 ms".
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* Bytes in binary units with two decimals ("1.50 GiB", "512 B"); "-" for
 * VS_UNKNOWN.  Free with g_free(). */
char *vs_format_bytes (gint64 bytes);

/* bytes in the unit 1024^unit_power (0 = B … 5 = PiB) with that many
 * decimals, for axis ticks that share one unit ("1.5 GiB").  Free with
 * g_free(). */
char *vs_format_bytes_in_unit (double bytes, int unit_power, int decimals);

/* A duration in ns in the largest fitting unit ("12.3 ms"); "-" for
 * VS_UNKNOWN.  Free with g_free(). */
char *vs_format_duration (gint64 ns);

/* s made safe to print on a terminal, on one line: control characters
 * (C0, DEL and C1: escape sequences, bells, carriage returns, line breaks)
 * and bytes that are not UTF-8 written as \n, \r, \t, \e, \xNN or \uNNNN;
 * other text is left as it is.  Free with g_free(). */
char *vs_format_printable (const char *s);

/* Parses a time or duration given on a command line: an integer of
 * nanoseconds ("1500"), or a decimal number with a unit: ns, us (or µs),
 * ms, s, m (minutes) or h ("850ms", "1.5s", "2m", "120us", "-3s").  The
 * value must be a whole number of ns and lie within gint64 above
 * INT64_MIN (VS_UNKNOWN).  Returns FALSE with a one-line message in error
 * (G_OPTION_ERROR_BAD_VALUE) otherwise. */
gboolean vs_parse_time (const char *text, gint64 *out_ns, GError **error);

G_END_DECLS

/* SPDX-License-Identifier: MIT */
/* vs-record-window.h — `record --window DURATION`: the flight recorder's
 * side of record (parsing the duration, bounding the written trace). */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "vs-timings.h"

/* Parses a duration as every time option is parsed (vs_parse_time: ns,
 * us, ms, s, m or min, h, d; exact to the ns), with a unit required (e.g.
 * 30s, 10m, 1.5h).  Returns it in nanoseconds, or -1 for anything else
 * (no unit, junk, zero, a sign, more than 10 years). */
int64_t vs_record_parse_duration (const char *text);

/* Bounds the finalized trace at path to a window of window_ns
 * (vs-trace-window.h), its steps marked into timings (NULL: not timed),
 * and, unless quiet, says what it kept.  Returns false with err filled. */
bool vs_record_apply_window (const char *path, int64_t window_ns, bool quiet, VsTimings *timings,
                             char *err, size_t errlen);

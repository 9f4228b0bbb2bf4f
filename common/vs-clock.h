/* SPDX-License-Identifier: MIT */
/* vs-clock.h — one clock read in nanoseconds.
 *
 * Plain C, no GLib, header only, so the injected collector may use it
 * too; the finalizer's timings and the recorder read their clocks
 * through it.
 */
#pragma once

#include <stdint.h>
#include <time.h>

/* The time of clock id (CLOCK_REALTIME, CLOCK_MONOTONIC, ...) in ns. */
static inline int64_t
vs_clock_ns (clockid_t id)
{
  struct timespec ts;
  clock_gettime (id, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

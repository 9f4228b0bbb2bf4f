/* SPDX-License-Identifier: MIT */
/* vs-trace-window-private.h — what the window's three files share: the
 * slicing of a run, its aggregates in pieces, and the SQL helpers.
 *
 *   vs-trace-window.c        the window applied to a finished run
 *   vs-trace-window-pieces.c the aggregates of a run's stretch, in pieces
 *                            kept in the trace, and pieces joined into slices
 *   vs-trace-window-live.c   the window applied while the program runs
 *
 * The grid: the run's times from its start (meta start_ns) in steps of a
 * sixteenth of the window (at least 1 ms).  Detail intervals are widened
 * to it, slice lengths are the grid's step doubled, and the aggregates
 * kept while the program runs are cut on it: so every slice of the end is
 * a whole number of pieces, whenever these were computed.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <sqlite3.h>

#include "vs-timings.h"

/* A run cut into slices: slice k is [edge[k], edge[k + 1]), the last one
 * [edge[n - 1], end]. */
typedef struct
{
  int64_t start, end;
  int64_t *edge;
  size_t n;
} VsWinSlicing;

/* The index of the slice holding t (0 for t before the first edge). */
size_t vs_win_slice_of (const VsWinSlicing *c, int64_t t);

/* The grid's step for a window. */
int64_t vs_win_grid (int64_t window_ns);
/* The grid point at or below t, and at or above t (grid from origin). */
int64_t vs_win_floor (int64_t origin, int64_t g, int64_t t);
int64_t vs_win_ceil (int64_t origin, int64_t g, int64_t t);

/* Where the pieces are kept (created by vs_win_pieces_create): one row per
 * (device, allocator, piece) with the columns of window_slice, and the
 * sites' net change per piece. */
#define VS_WIN_PIECE "window_live_piece"
#define VS_WIN_SITE "window_live_site"
/* What the window done while the program ran left for the end (key,
 * value): origin, grid, from (pieces cover [origin, from)), and what it
 * dropped (blocks, kernels, copies, failures, ranges). */
#define VS_WIN_STATE "window_live"

int vs_win_pieces_create (sqlite3 *db, char *err, size_t errlen);
/* Whether db holds pieces computed while the program ran. */
bool vs_win_has_live (sqlite3 *db);
int64_t vs_win_state (sqlite3 *db, const char *key, int64_t fallback);
int vs_win_set_state (sqlite3 *db, const char *key, int64_t value);
/* Runs sql (an insert of ?1 = key, ?2 = value) once.  0 or -1. */
int vs_win_put (sqlite3 *db, const char *sql, const char *key, int64_t value);

/* The pieces of the run's stretch [c->edge[0], c->end] (c's slices), of
 * every device and allocator the summary names, from the finalized
 * trace's series (the state entering the stretch read from before it),
 * blocks and failures: added to the piece tables.  Every block live at an
 * instant of the stretch must be in the trace.  0 or -1. */
int vs_win_pieces_add (sqlite3 *db, const VsWinSlicing *c, char *err, size_t errlen);

/* window_slice, window_site and window_count from all the pieces kept,
 * joined into c's slices (every piece lies inside one slice).  0 or -1
 * (a piece across a slice's edge: err says so). */
int vs_win_pieces_join (sqlite3 *db, const VsWinSlicing *c, char *err, size_t errlen);

/* Joins the pieces of [origin, before) into slices of the grid's step
 * doubled (the slice length the run so far would get) where such a slice
 * meets no span of keep (a table device_id, start_ns, end_ns): the pieces
 * kept while the program runs stay few.  0 or -1. */
int vs_win_pieces_coarsen (sqlite3 *db, int64_t origin, int64_t g, int64_t before, const char *keep,
                           char *err, size_t errlen);

/* The SQL that drops what meets no span of the table keep (detail_interval
 * at the end, the spans that may still become detail while the program
 * runs); counts what went into the stats' fields.  Runs inside the
 * caller's transaction. */
typedef struct
{
  int64_t blocks, kernels, copies, failures, ranges;
} VsWinDropped;
int vs_win_drop_outside (sqlite3 *db, const char *keep, VsWinDropped *d, VsTimings *timings,
                         char *err, size_t errlen);

int vs_win_exec (sqlite3 *db, const char *sql, char *err, size_t errlen);
int vs_win_fail (char *err, size_t errlen, sqlite3 *db, const char *what);
int64_t vs_win_meta_int (sqlite3 *db, const char *key, int64_t fallback);

/* SPDX-License-Identifier: MIT */
/* vs-diff.h — two traces side by side: what changed between a run and
 * another (batch 64 vs 32, AMP on vs off, before vs after a fix).
 *
 * Devices are matched by index.  For each device, rows compare: the peaks
 * (allocated, reserved, device), memory at the peak by role, bytes at the
 * peak per user site, fragmentation (peak reserved − peak allocated) and
 * failures and findings (their counts).  Each row holds A's value, B's
 * and the delta B − A; a value one trace cannot know is VS_UNKNOWN.
 */
#pragma once

#include "vs-trace.h"
#include "vs-table.h"

G_BEGIN_DECLS

typedef struct
{
  const char *section; /* "peak", "role", "site", "fragmentation", "failures", "finding" */
  gint64 device;       /* device index */
  char *name;          /* what is compared: "peak_allocated_bytes", a role, a site, ... */
  gboolean is_bytes;   /* values are bytes (else counts) */
  gint64 a, b;         /* VS_UNKNOWN when unknown */
  gint64 delta;        /* b − a, VS_UNKNOWN when either is */
} VsDiffRow;

/* Compares a with b.  Sites are limited to the max_sites largest at either
 * peak (0: all).  A GArray of VsDiffRow (names freed with the array), or
 * NULL with error set. */
GArray *vs_diff (VsTrace *a, VsTrace *b, guint max_sites, GError **error);

/* The rows as a table with the columns section, device, name, unit, a, b,
 * delta (CSV: integers; unit is "bytes" or "count"). */
VsTable *vs_diff_table (GArray *rows);

/* Appends the rows as aligned text for people: bytes in B/KiB/MiB/GiB,
 * deltas signed, one block per section, fitted to width columns. */
void vs_diff_write_text (GArray *rows, const char *name_a, const char *name_b, guint width,
                         GString *out);

G_END_DECLS

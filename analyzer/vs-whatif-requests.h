/* SPDX-License-Identifier: MIT */
/* vs-whatif-requests.h — the request stream a what-if replay feeds its
 * model: a trace's PyTorch allocator events read back in recorded order,
 * merged with its failures and turned into requests (private to the
 * analyzer; see vs-whatif-requests.c for the rules). */
#pragma once

#include "vs-trace-private.h"

G_BEGIN_DECLS

typedef enum
{
  VS_WHATIF_EV_END,
  VS_WHATIF_EV_PREFIX_SEGMENT,
  VS_WHATIF_EV_PREFIX_BLOCK,
  VS_WHATIF_EV_ALLOC,
  VS_WHATIF_EV_FREE,
  VS_WHATIF_EV_FAIL,
  VS_WHATIF_EV_RELEASES,
  VS_WHATIF_EV_SEGMENT,
} VsWhatifEvKind;

typedef enum
{
  VS_WHATIF_NEXT_OTHER,
  VS_WHATIF_NEXT_SEGMENT,
  VS_WHATIF_NEXT_FAILURE,
} VsWhatifNextKind;

typedef struct
{
  VsWhatifEvKind kind;
  gint64 ts;
  gint64 address;
  gint64 size;
  gint64 block_bytes;
  gint64 stream;      /* VS_UNKNOWN in the prefix */
  gint64 device_free; /* VS_WHATIF_EV_FAIL */
  int op; /* VS_WHATIF_EV_SEGMENT, VS_WHATIF_EV_PREFIX_SEGMENT: segment_alloc or segment_map */
  /* VS_WHATIF_EV_RELEASES: the bytes given back, and what came right after */
  VsWhatifNextKind next;
  gint64 next_size;
} VsWhatifEv;

typedef struct
{
  int op;
  gint64 ts, address, size, block_bytes, stream;
  gint64 id;
} VsWhatifRow;

typedef struct
{
  VsTrace *trace;
  sqlite3_stmt *events;
  sqlite3_stmt *failures;
  gboolean have_row, have_fail;
  VsWhatifRow row;
  gint64 fail_ts, fail_size, fail_free;
  gboolean in_prefix;
  GArray *releases; /* VsWhatifRow: the releases of the last VS_WHATIF_EV_RELEASES */
  GError **error;
  gboolean failed;
} VsWhatifReader;

/* Starts reading allocator_id's events of trace into r (zeroed by the
 * caller); FALSE with error set when the trace cannot be read. */
gboolean vs_whatif_reader_start (VsWhatifReader *r, VsTrace *trace, gint64 allocator_id,
                                 GError **error);

/* Releases what r holds. */
void vs_whatif_reader_stop (VsWhatifReader *r);

/* The next request into ev; kind VS_WHATIF_EV_END at the end or on an
 * error (then r->failed, with r->error set). */
void vs_whatif_reader_next (VsWhatifReader *r, VsWhatifEv *ev);

G_END_DECLS

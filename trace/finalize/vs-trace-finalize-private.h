/* SPDX-License-Identifier: MIT */
/* vs-trace-finalize-private.h — what the finalizer's passes share.
 *
 * vs-trace-pair.c loads the raw events and pairs allocations with releases,
 * vs-trace-replay.c replays them into series, blocks and summaries, and
 * vs-trace-finalize.c runs the passes in one transaction.  See the comment
 * at the top of vs-trace-finalize.c for the method.
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include <sqlite3.h>

#include "vs-trace-finalize.h"
#include "vs-trace-writer.h"

/* Where an event came from; also the tie-break order at equal timestamps. */
enum
{
  SRC_POOL = 0,
  SRC_MEM = 1,
  SRC_ALLOC = 2,
  /* Not a raw event: a mark a windowed trace adds to the replay
   * (vs-trace-detail.c), ordered after the events of its instant. */
  SRC_MARK = 3
};

/* SRC_MARK ops (never an alloc_op or mem_op). */
enum
{
  MARK_SLICE = 200,       /* a coarse slice's point: id indexes VsFinWindow.pt */
  MARK_DETAIL_START = 201 /* a detail interval begins on the device */
};

typedef struct
{
  int64_t ts;
  int64_t id; /* rowid in its source table */
  int64_t address;
  int64_t bytes; /* counted size; pool_event: pool size or -1 */
  int64_t block_bytes;
  int32_t process_id;
  int32_t device_id;    /* 0 = none */
  int32_t allocator_id; /* allocator level: allocator; mem: pool_id; 0 none */
  int32_t block;        /* index into blocks, -1 none */
  int64_t stack_id;
  int32_t range_id;
  uint8_t src;
  uint8_t op;
  uint8_t kind;
  uint8_t flags; /* FIN_BEFORE_TRACE */
} VsFinEvent;

/* VsFinEvent flags: an allocation live before the trace began, recreated
 * at its start (VsAllocEvent.before_trace), not one the trace saw. */
#define FIN_BEFORE_TRACE 1

typedef struct
{
  int32_t alloc_ev; /* -1: live before the trace began */
  int32_t free_ev;  /* -1: live at the end */
  int32_t owner;    /* level 1: index of the owning level-3 block or -1 */
  uint8_t level;
  uint8_t owned_by_pool;
  int64_t address, bytes, block_bytes;
} VsFinBlock;

typedef struct
{
  char *msg;
  size_t len;
} VsFinErr;

/* All events, sorted, and the blocks pairing makes of them. */
typedef struct
{
  VsFinEvent *ev;
  size_t n, cap;
  VsFinBlock *bl;
  size_t nb, capb;
  /* Set before vs_fin_load_events_after(): the largest device and allocator id
   * the trace defines; a row naming another is refused. */
  int32_t max_device, max_allocator;
} VsFinTrace;

/* Limits on what a trace may hold, checked before anything is allocated
 * from it (documented in schemas/README.md): device and allocator ids are
 * 1..N, and the per-(device, allocator) state they index stays small;
 * events fit the finalizer's 32-bit block indexes; sizes are 0..2^62 and
 * their total fits a signed 64-bit integer, so no running sum can
 * overflow; timestamps are not negative. */
#define VS_FIN_MAX_DEVICE_ID 65536
#define VS_FIN_MAX_ALLOCATOR_ID 1048576
#define VS_FIN_MAX_CELLS 1048576 /* (devices + 1) × (allocators + 1) */
#define VS_FIN_MAX_EVENTS 1000000000

/* Running totals of one (device, allocator) series. */
typedef struct
{
  int64_t reserved, allocated;
  int64_t pool_size; /* pools: last known size, -1 unknown */
  int64_t peak_reserved, peak_reserved_ts, peak_reserved_seq;
  int64_t peak_allocated, peak_allocated_ts, peak_allocated_seq;
  int64_t alloc_count, free_count;
  int64_t before_bytes, before_count; /* blocks live before the trace */
  int32_t device_id, allocator_id;
  int is_pool;
  int touched;
  int seen; /* had an event, in detail or not (windowed traces) */
} VsFinAcc;

typedef struct
{
  int64_t device, static_bytes, pinned, managed;
  int64_t peak_device, peak_device_ts, peak_pinned, peak_managed;
  int64_t plain; /* unowned device-level device/VMM bytes */
  int64_t plain_allocs, plain_frees;
} VsFinDevState;

/* A growable array of accumulators indexed by allocator id (0 = all) per
 * device.  Allocator ids are small dense integers. */
typedef struct
{
  VsFinAcc *acc;      /* [ndev+1][nalloc+1] */
  VsFinDevState *dev; /* [ndev+1] */
  /* [ndev+1]: the allocator whose series equals the device's `all` series
   * (the device saw events of that allocator only), stored once under
   * allocator 0; 0 when none. */
  int32_t *shared;
  int32_t ndev, nalloc;
  /* Whether device-level memory (device, static, pinned, managed bytes)
   * was observed: not in a trace imported from an allocator's own history
   * (meta source 'import'), whose `all` rows then leave those unknown. */
  int device_level;
  /* A windowed trace's detail intervals and coarse points (never NULL
   * while replaying; windowed is false for a complete trace). */
  struct VsFinWindow *window;
  /* The series rows the replay wrote, and the latest time among them. */
  int64_t series_rows, series_max_ts;
  /* Where the derived rows go (NULL: their tables). */
  struct VsRowSink *sink;
} VsFinState;

/* A windowed trace (`record --window`): per device, its detail intervals
 * (sorted, disjoint, closed) and the points drawn for the coarse slices
 * outside them. */
typedef struct
{
  int64_t start, end;
  int32_t device_id;
} VsFinSpan;

typedef struct
{
  int64_t reserved, allocated, device; /* device: -1 unknown */
  int32_t device_id, allocator_id;
} VsFinPoint;

typedef struct VsFinWindow
{
  bool windowed;
  VsFinSpan *span; /* sorted by (device_id, start) */
  size_t nspan;
  size_t *first; /* [ndev + 2]: device d's spans are first[d] .. first[d+1]-1 */
  size_t *cur;   /* [ndev + 1]: the replay's cursor per device */
  VsFinPoint *pt;
  size_t npt;
  int32_t ndev;
} VsFinWindow;

/* Reads detail_interval and window_slice (absent before version 4: a
 * complete trace) into w and appends a mark event to t for each coarse
 * slice point and each detail interval's start.  -1 with e filled. */
int vs_fin_window_load (sqlite3 *db, VsFinTrace *t, VsFinWindow *w, int32_t ndev, VsFinErr *e);
/* Whether ts lies in a detail interval of dev (always true in a complete
 * trace).  Calls for one device must come in non-decreasing ts. */
bool vs_fin_window_detail (VsFinWindow *w, int32_t dev, int64_t ts);
void vs_fin_window_clear (VsFinWindow *w);
/* In a windowed trace, puts the whole run's counts (window_count) in
 * summary. */
int vs_fin_window_counts (sqlite3 *db, const VsFinWindow *w, VsFinErr *e);

typedef struct
{
  sqlite3 *db;
  VsProgressFunc progress;
  void *progress_data;
  uint64_t done, total;
} VsFinProgress;

/* Fills e->msg with a formatted message (when e->len > 0); returns -1. */
int vs_fin_fail (VsFinErr *e, const char *fmt, ...);
/* Runs sql; on failure fills e and returns -1. */
int vs_fin_exec (sqlite3 *db, VsFinErr *e, const char *sql);
/* Adds n units of progress; returns -1 when the caller asked to cancel. */
int vs_fin_tick (VsFinProgress *p, uint64_t n);

/* Append the finalizer's record of one raw event row, stored with rowid id,
 * to t->ev; -1 when out of memory.  The loader below uses them, and a bulk
 * writer that keeps its events for vs_fin_finalize_gathered(). */
/* A new zeroed event (block -1) at the end of t->ev; NULL when out of
 * memory. */
VsFinEvent *vs_fin_push_event (VsFinTrace *t);
int vs_fin_add_mem_event (VsFinTrace *t, int64_t id, const VsMemEvent *m);
int vs_fin_add_alloc_event (VsFinTrace *t, int64_t id, const VsAllocEvent *a);
int vs_fin_add_pool_event (VsFinTrace *t, int64_t id, const VsPoolEvent *p);

/* vs_trace_finalize() on events already gathered in *t — every row of
 * mem_event, alloc_event and pool_event, through vs_fin_add_*_event() —
 * instead of reading them back from the tables.  Frees t's arrays. */
int vs_fin_finalize_gathered (sqlite3 *db, VsFinTrace *t, const VsFinalizeOptions *o, char *err,
                              size_t errlen);

/* Checks what the replay's arithmetic relies on in t's events: times not
 * negative, sizes not below -1 (unknown), the total of every size within
 * INT64_MAX, not more than VS_FIN_MAX_EVENTS events.  -1 with e filled
 * otherwise. */
int vs_fin_check_events (const VsFinTrace *t, VsFinErr *e);

/* The events of the active hand-over g (vs-fin-given.h) moved into t
 * (empty before): *rows gets the alloc_event rows they are (ids 1..*rows),
 * *coded_rows those its chunks hold.  -1 when g has none to give (NULL,
 * given up or taken already). */
struct VsFinGiven;
int vs_fin_given_take (struct VsFinGiven *g, VsFinTrace *t, int64_t *rows, int64_t *coded_rows);

/* Appends every mem_event, alloc_event and pool_event row to t->ev;
 * refuses a row whose device or allocator id is outside 1..t->max_device
 * or 1..t->max_allocator, or whose kind or operation is not a small
 * number.  For a trace whose alloc_event rows 1..given are in
 * t already (vs_fin_given_take) and whose rows 1..coded sink (NULL:
 * none) has as chunks: the other rows are loaded, and the sink is handed
 * the rows after coded.  given and coded 0: every row. */
int vs_fin_load_events_after (sqlite3 *db, VsFinTrace *t, int64_t given, int64_t coded,
                              struct VsRowSink *sink, VsFinErr *e);
/* Refuses the first n events of t (given, not loaded) where a row would
 * be refused by vs_fin_load_events_after(): ids outside 1..t->max_device or
 * 1..t->max_allocator, a negative process.  -1 with e filled. */
int vs_fin_check_given (const VsFinTrace *t, size_t n, VsFinErr *e);

/* qsort comparator of the replay order: ts, source table, rowid. */
int vs_fin_event_cmp (const void *pa, const void *pb);
/* Whether ev opens a block (an allocation, segment alloc or map). */
int vs_fin_is_alloc (const VsFinEvent *ev);
/* Pairs sorted events into t->bl; see vs-trace-pair.c. */
int vs_fin_pair_events (VsFinTrace *t, VsFinErr *e);
/* Marks device-level blocks that lie in an allocator's segment. */
int vs_fin_assign_owners (VsFinTrace *t, VsFinErr *e);

/* The accumulator of (dev, alloc) in st; alloc 0 is `all`. */
VsFinAcc *vs_fin_acc_at (VsFinState *st, int32_t dev, int32_t alloc);
/* Fills st->shared from the events of each device. */
void vs_fin_find_shared_series (const VsFinTrace *t, VsFinState *st);
/* Replays t in order, writing series and series_level, filling st. */
int vs_fin_replay (VsFinTrace *t, VsFinState *st, int64_t origin, VsFinProgress *pr, VsFinErr *e);
/* Writes the block table from t's pairing. */
int vs_fin_write_blocks (VsFinTrace *t, struct VsRowSink *sink, VsFinProgress *pr, VsFinErr *e);
/* Writes one summary row per device and allocator from st. */
int vs_fin_write_summary (sqlite3 *db, VsFinState *st, VsFinErr *e);

/* SPDX-License-Identifier: MIT */
/* vs-alloc-steps.h — the allocators' state of one device, event by event.
 *
 * What memory_viz calls the allocator state history: every allocator
 * event of a device in replay order (a block allocated or freed, a
 * segment allocated, freed, mapped or unmapped, a failed request), and
 * after each of them the segments and blocks live — the segment map the
 * Fragmentation pane draws.
 *
 * A VsAllocSteps holds the events of a span of replay steps around a
 * step asked for (not the whole trace: a 10 M-event trace has millions),
 * the state before its first event as the trace's block table gives it
 * (the blocks live after that step), and checkpoints: a copy of the state
 * every few hundred or thousand events, so that the state after any event
 * is its nearest checkpoint with at most that many events applied.  The
 * state is the recorded one: segments at their recorded addresses and
 * sizes, blocks at theirs (the requested size, or the rounded one where
 * the trace recorded it), exactly what vs_fragmentation_at() and
 * vs_fragmentation_segments() give for the same step.
 */
#pragma once

#include "vs-blocks.h"
#include "vs-fragmentation.h"

G_BEGIN_DECLS

/* What an event was: the trace's alloc_op codes, and failures. */
typedef enum
{
  VS_ALLOC_STEP_ALLOC = 1,
  VS_ALLOC_STEP_FREE = 3,
  VS_ALLOC_STEP_SEGMENT_ALLOC = 4,
  VS_ALLOC_STEP_SEGMENT_FREE = 5,
  VS_ALLOC_STEP_SEGMENT_MAP = 6,
  VS_ALLOC_STEP_SEGMENT_UNMAP = 7,
  VS_ALLOC_STEP_FAILURE = 8,
} VsAllocStepKind;

/* One allocator event. */
typedef struct
{
  gint64 seq;     /* replay step; a failure changes nothing: the step before it */
  gint64 time_ns; /* ns since the trace's start */
  int kind;       /* VsAllocStepKind */
  gint64 allocator_id;
  gint64 id;          /* block.id (level 2 or 3); failed_alloc.id for a failure */
  gint64 address;     /* VS_UNKNOWN for a failure */
  gint64 bytes;       /* requested bytes of a block or failure; a segment's size */
  gint64 block_bytes; /* a block's rounded size when recorded, else VS_UNKNOWN */
  gint64 stream;      /* a block's stream when recorded, else VS_UNKNOWN */
  gint64 stack_id;    /* allocation's (a free: the free's, else the allocation's); 0: none */
} VsAllocStep;

/* The state after one event: what the segment map draws. */
typedef struct
{
  gint64 seq;           /* the replay step it is taken after */
  VsFragmentation frag; /* reserved: the live segments' bytes; allocated: the live
                             * blocks' requested bytes; free and largest gap inside them */
  GArray *segments;     /* VsSegment, by allocator then address (touching pieces of an
                             * expandable segment merged, as vs_fragmentation_segments) */
  GArray *blocks;       /* VsBlock (level 2), by allocator then address */
  GArray *gaps;         /* VsFreeGap, as vs_fragmentation_at() finds them */
} VsAllocState;

void vs_alloc_state_free (VsAllocState *state);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (VsAllocState, vs_alloc_state_free)

typedef struct _VsAllocSteps VsAllocSteps;

/* How many replay steps a VsAllocSteps spans on each side of the step it
 * is loaded around. */
#define VS_ALLOC_STEPS_SPAN 32768

/* The allocator events of device_id (every allocator of it) with replay
 * steps in (from, to], where from = seq − span and to = seq + span
 * (clamped to the trace), with the state after step `from` read from the
 * trace.  span 0: VS_ALLOC_STEPS_SPAN; G_MAXINT64 / 4: the whole trace.
 * Failed requests of the device's allocators are events too, placed after
 * every event of their time.  Returns NULL with error set when the trace
 * cannot be read. */
VsAllocSteps *vs_alloc_steps_load (VsTrace *trace, gint64 device_id, gint64 seq, gint64 span,
                                   GError **error);
void vs_alloc_steps_free (VsAllocSteps *steps);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (VsAllocSteps, vs_alloc_steps_free)

/* The events held, in order. */
guint vs_alloc_steps_get_n (const VsAllocSteps *steps);
const VsAllocStep *vs_alloc_steps_get (const VsAllocSteps *steps, guint index);

/* The replay steps covered: events with from < seq <= to are held. */
void vs_alloc_steps_get_span (const VsAllocSteps *steps, gint64 *from, gint64 *to);

/* Whether events exist before the span (from > 0) and after it (to below
 * the device's last step). */
gboolean vs_alloc_steps_has_before (const VsAllocSteps *steps);
gboolean vs_alloc_steps_has_after (const VsAllocSteps *steps);

/* The index of the last event at or before step seq (a failure of that
 * step's time included), or -1 when none is held (seq <= from).  seq must
 * lie in the span. */
gint vs_alloc_steps_find (const VsAllocSteps *steps, gint64 seq);

/* The state after event index (-1: before the first held event, the state
 * after step `from`), computed from the nearest checkpoint at or before
 * it.  Never fails. */
VsAllocState *vs_alloc_steps_state (const VsAllocSteps *steps, gint index);

/* How many events apart the checkpoints are, and how many there are (the
 * state before the first event is the first).  For benchmarks and tests. */
guint vs_alloc_steps_get_checkpoint_every (const VsAllocSteps *steps);
guint vs_alloc_steps_get_n_checkpoints (const VsAllocSteps *steps);

G_END_DECLS

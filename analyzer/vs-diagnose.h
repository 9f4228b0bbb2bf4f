/* SPDX-License-Identifier: MIT */
/* vs-diagnose.h — answers, not data: findings with evidence, remedies and
 * the expected saving, and the facts of each device's peak.
 *
 * Findings (names fixed; the CLI prints them, the viewer lists them):
 *   oom-device-full       a failed request: the device had less free
 *                         memory than the request (bytes = the request);
 *   oom-allocator-limit   a failed request: the device had room, the
 *                         allocator's own limit refused (bytes = request);
 *   oom-fragmentation     a failed request: enough free inside reserved,
 *                         no free block large enough (bytes = request);
 *   fragmentation         peak reserved exceeds peak allocated by at least
 *                         64 MiB and 40 % of peak reserved, and free memory
 *                         hurt: at the worst instant (vs_fragmentation_worst)
 *                         at least 64 MiB was free, in blocks smaller than
 *                         all of it, when a request took a new segment or
 *                         failed (bytes = the difference);
 *   growth-per-iteration  allocated memory grows every iteration (bytes =
 *                         growth per iteration, count = iterations judged,
 *                         site = the user site whose live bytes grow); on a
 *                         framework pool's allocator (xla, cupy, rmm,
 *                         tensorflow): the pool's reserved memory grows so
 *                         while what it hands out, where known, does not
 *                         (vs-pool-growth.h; site = the stack that took
 *                         most of its segments);
 *   leak-at-exit          device memory outside any allocator still
 *                         allocated at the end, at least two blocks from
 *                         one stack, in a program that freed other device
 *                         allocations and exited on its own (not killed by
 *                         a signal, not stopped with the recording) (bytes =
 *                         still allocated, count = blocks);
 *   outside-allocator     at the peak, device memory held outside every
 *                         allocator (libraries' cudaMalloc: cuBLAS, cuDNN,
 *                         NCCL) is at least 256 MiB and 10 % of the
 *                         device's;
 *   other-process         at a failure, the device's memory used by other
 *                         processes (CUDA's free/total minus this
 *                         process's) is at least 1 GiB and 5 % of it;
 *   forward-without-backward  at the peak, activations of a forward pass
 *                         that no backward pass followed (evaluation or
 *                         inference with gradients on) hold at least 64 MiB
 *                         and 25 % of it, in at least 8 blocks (bytes =
 *                         those activations, count = blocks).
 * A finding is made only from evidence in the trace; a remedy already in
 * effect (expandable segments on) is never proposed.  Failures of one
 * cause on one device and allocator make one finding (count = failures,
 * time and site of the first).
 */
#pragma once

#include "vs-trace.h"
#include "vs-blocks.h"
#include "vs-growth.h"
#include "vs-roles.h"
#include "vs-settings.h"
#include "vs-summary.h"
#include "vs-table.h"

G_BEGIN_DECLS

typedef enum
{
  VS_FINDING_OOM_DEVICE_FULL,
  VS_FINDING_OOM_ALLOCATOR_LIMIT,
  VS_FINDING_OOM_FRAGMENTATION,
  VS_FINDING_FRAGMENTATION,
  VS_FINDING_GROWTH_PER_ITERATION,
  VS_FINDING_LEAK_AT_EXIT,
  VS_FINDING_OUTSIDE_ALLOCATOR,
  VS_FINDING_OTHER_PROCESS,
  VS_FINDING_FORWARD_WITHOUT_BACKWARD,
  VS_N_FINDINGS,
} VsFindingKind;

/* The finding's fixed name ("oom-allocator-limit"). */
const char *vs_finding_name (VsFindingKind kind);

typedef struct
{
  VsFindingKind kind;
  gint64 device_id;
  gint64 allocator_id; /* 0 = all */
  gint64 bytes;
  gint64 count;        /* VS_UNKNOWN when it does not apply */
  gint64 run_count;    /* failures: the whole run's, when a windowed trace kept fewer
                        (count), else VS_UNKNOWN */
  gint64 time_ns;      /* the instant to look at, VS_UNKNOWN if none */
  gint64 seq;          /* its replay step (timeline and Attribution), VS_UNKNOWN if none */
  char *site;          /* the user site, NULL if none */
  gint64 stack_id;     /* a stack of that site, VS_UNKNOWN if none */
  char *evidence;      /* sentences with the numbers */
  char *remedy;        /* what to change, NULL if nothing applies */
  gint64 saving_bytes; /* expected saving of the remedy, VS_UNKNOWN if not estimated */
  const char *unit;    /* growth: what count counts ("iteration", or "slice" of a windowed
                        * trace); NULL otherwise */
} VsFinding;

/* The facts of one device's peak. */
typedef struct
{
  const VsDeviceInfo *device;
  VsSummary all;       /* the device's `all` row */
  gint64 allocator_id; /* its PyTorch allocator, else 0 */
  VsSummary allocator; /* that allocator's row (= all when 0) */
  VsRoles roles;       /* at the peak of allocated memory (all) */
  GArray *sites;       /* VsGroup by site at that peak, largest first */
  VsIterations *iterations;
  VsGrowth growth;
  VsAllocatorSettings settings;
  gboolean autocast; /* the stacks pass through torch.autocast: mixed precision is on */
  /* At the device's peak reserved (all.peak_reserved_seq): what its
   * PyTorch allocator reserved, and what was held outside every allocator
   * (module globals included); VS_UNKNOWN when not known. */
  gint64 allocator_at_peak_bytes;
  gint64 outside_at_peak_bytes;
  char *lower_peak; /* how to lower the peak, from the dominant role, or NULL */
  gint64 lower_peak_saving;
} VsDeviceDiagnosis;

typedef struct
{
  GPtrArray *devices;  /* VsDeviceDiagnosis* by device idx */
  GPtrArray *findings; /* VsFinding*, most severe first: failures, growth, leaks,
                        * fragmentation, outside-allocator */
} VsDiagnosis;

/* Diagnoses every device (device_id 0) or one.  Returns a new
 * VsDiagnosis, or NULL with error set. */
VsDiagnosis *vs_diagnose (VsTrace *trace, gint64 device_id, GError **error);

void vs_diagnosis_free (VsDiagnosis *diagnosis);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (VsDiagnosis, vs_diagnosis_free)

/* The findings as a table with the columns finding, device, allocator,
 * bytes, count, time_ns, site, evidence, remedy. */
VsTable *vs_diagnosis_table (VsTrace *trace, const VsDiagnosis *diagnosis);

/* Appends the diagnosis as one screen of text: at most 40 lines of at most
 * width columns (width >= 60) — each device's peak by role and by site,
 * its iterations and allocator settings, then the findings with evidence,
 * remedy and expected saving (the first ones, with a line saying how many
 * more there are when they do not fit). */
void vs_diagnosis_write_text (VsTrace *trace, const VsDiagnosis *diagnosis, guint width,
                              GString *out);

G_END_DECLS

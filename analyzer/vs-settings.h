/* SPDX-License-Identifier: MIT */
/* vs-settings.h — an allocator's configuration as the trace records it.
 *
 * For PyTorch's caching allocator: meta keys written by the recorder's
 * PyTorch hook and by the snapshot importer — pytorch.alloc_conf
 * (PYTORCH_CUDA_ALLOC_CONF as set), pytorch.expandable_segments ("1"/"0"),
 * pytorch.allocator_settings (the snapshot's allocator_settings as JSON),
 * pytorch.memory_fraction.<device idx> (the per-process fraction) — and the
 * allocator row's own settings text.  Whatever is absent is unknown.
 */
#pragma once

#include "vs-trace.h"

G_BEGIN_DECLS

typedef struct
{
  gboolean pytorch;        /* the device has a PyTorch caching allocator */
  int expandable_segments; /* 1 on, 0 off, -1 unknown */
  char *alloc_conf;        /* PYTORCH_CUDA_ALLOC_CONF, NULL if unknown */
  double memory_fraction;  /* the per-process fraction, < 0 if unknown */
  gint64 limit_bytes;      /* fraction × capacity, VS_UNKNOWN if unknown */
} VsAllocatorSettings;

/* Fills *out with what trace records about the allocators of device_id.
 * Never fails: what cannot be read is unknown. */
void vs_allocator_settings_read (VsTrace *trace, gint64 device_id, VsAllocatorSettings *out);

/* Frees what *s holds (not s itself). */
void vs_allocator_settings_clear (VsAllocatorSettings *s);

/* One line describing s for people ("expandable_segments off, memory
 * fraction 0.042 = limit 6.00 GiB"), or NULL when nothing is known. */
char *vs_allocator_settings_describe (const VsAllocatorSettings *s);

G_END_DECLS

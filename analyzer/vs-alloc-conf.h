/* SPDX-License-Identifier: MIT */
/* vs-alloc-conf.h — PyTorch caching-allocator settings: parsed from
 * PYTORCH_CUDA_ALLOC_CONF text, or from the settings a trace recorded.
 *
 * Only what changes where memory goes is kept (the options the what-if
 * replay models); options that change only speed or host memory
 * (release_lock_on_cudamalloc, pinned_*) are accepted and ignored.  A
 * backend other than native (cudaMallocAsync) is refused: it keeps no
 * segments of its own to replay.
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* The settings the diagnosis proposes as remedies (and the viewer offers
 * to replay), in PYTORCH_CUDA_ALLOC_CONF syntax: one spelling for both. */
#define VS_ALLOC_CONF_EXPANDABLE "expandable_segments:True"
#define VS_ALLOC_CONF_GC "garbage_collection_threshold:0.8"

/* PyTorch's size classes (CUDACachingAllocator.cpp). */
#define VS_CA_MIN_BLOCK_SIZE 512LL       /* kMinBlockSize: every size rounded to 512 */
#define VS_CA_SMALL_SIZE 1048576LL       /* kSmallSize: largest small request */
#define VS_CA_SMALL_BUFFER 2097152LL     /* kSmallBuffer: small-pool segment */
#define VS_CA_LARGE_BUFFER 20971520LL    /* kLargeBuffer: segment for 1-10 MiB */
#define VS_CA_MIN_LARGE_ALLOC 10485760LL /* kMinLargeAlloc */
#define VS_CA_ROUND_LARGE 2097152LL      /* kRoundLarge: larger segments round to it */
#define VS_CA_ROUNDUP_INTERVALS 16       /* power-of-2 intervals from 1 MiB to 64 GiB */

typedef struct
{
  gint64 max_split_size;         /* bytes; G_MAXINT64 = unlimited (the default) */
  gint64 max_non_split_rounding; /* bytes; default kLargeBuffer */
  guint roundup_power2_divisions[VS_CA_ROUNDUP_INTERVALS]; /* 0 or 1: none */
  double garbage_collection_threshold;                     /* 0: off */
  gboolean expandable_segments;
} VsAllocConf;

/* Sets conf to PyTorch's defaults (an empty PYTORCH_CUDA_ALLOC_CONF). */
void vs_alloc_conf_init (VsAllocConf *conf);

/* Parses text in PYTORCH_CUDA_ALLOC_CONF syntax ("key:value,key:value",
 * roundup_power2_divisions also as "[256:1,512:2,>:8]") into conf, which
 * starts from the defaults: the text replaces the whole configuration, as
 * the environment variable does for a new run.  Checks values the way
 * PyTorch does (max_split_size_mb > 20, 0 < garbage_collection_threshold
 * < 1, divisions powers of two).  Returns FALSE with error set (domain
 * G_OPTION_ERROR, one sentence) for anything it does not accept. */
gboolean vs_alloc_conf_parse (const char *text, VsAllocConf *conf, GError **error);

/* The settings a trace recorded for a PyTorch allocator (allocator.settings):
 * either PyTorch's allocator_settings as JSON (its PYTORCH_CUDA_ALLOC_CONF
 * then the structured max_split_size, garbage_collection_threshold,
 * expandable_segments and roundup_power2_divisions, which win), or plain
 * PYTORCH_CUDA_ALLOC_CONF text.  NULL or empty gives the defaults. */
gboolean vs_alloc_conf_from_settings (const char *settings, VsAllocConf *conf, GError **error);

/* conf as PYTORCH_CUDA_ALLOC_CONF text naming only what differs from the
 * defaults ("" for the defaults).  Newly allocated. */
char *vs_alloc_conf_to_string (const VsAllocConf *conf);

/* PyTorch's round_size(): the block size a request of size bytes gets. */
gint64 vs_alloc_conf_round_size (const VsAllocConf *conf, gint64 size);

G_END_DECLS

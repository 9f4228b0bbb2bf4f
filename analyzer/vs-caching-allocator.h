/* SPDX-License-Identifier: MIT */
/* vs-caching-allocator.h — a model of PyTorch's CUDA caching allocator
 * (c10/cuda/CUDACachingAllocator.cpp, native backend) that places requests
 * in segments without touching a GPU.
 *
 * It keeps what the real allocator keeps — per pool (small: requests up to
 * 1 MiB, large: the rest) the free blocks ordered by (stream, size,
 * address), segments as chains of blocks, expandable segments with their
 * mapped and unmapped pages — and takes the same decisions: rounding, best
 * fit per stream, splitting, merging, max_split_size, garbage collection,
 * releasing cached blocks and retrying before an out-of-memory error.  What
 * the device would do is reduced to one number, the limit: a cudaMalloc
 * (or a page mapping) fails when the memory reserved would exceed it.
 *
 * Addresses of new segments come from a caller-supplied function (the
 * what-if replay of a trace's own settings hands out the addresses the
 * recorded run got, so that ties between equal blocks break as they did),
 * or are made up, each new segment below the earlier ones, as cudaMalloc
 * placed the large segments of the recorded runs.
 *
 * Not modelled: CUDA graph private pools, memory shared with other
 * processes, blocks recorded on other streams (the replay frees a block
 * when its free completed), free-memory callbacks.
 */
#pragma once

#include <glib.h>

#include "vs-alloc-conf.h"

G_BEGIN_DECLS

/* The model's range: a request, a segment and the device's capacity are
 * at most VS_CA_MAX_BYTES (4 EiB) each; the totals it keeps (reserved,
 * requested) and every address range stay within 64 bits.  Arithmetic on
 * them is checked: an operation that would leave the range puts the model
 * out of range (vs_caching_allocator_out_of_range) instead. */
#define VS_CA_MAX_BYTES (G_GINT64_CONSTANT (1) << 62)

typedef struct _VsCachingAllocator VsCachingAllocator;
typedef struct _VsCaBlock VsCaBlock;

/* What a change of reserved memory was: the alloc_op codes of the trace
 * schema (segment_alloc 4, segment_free 5, segment_map 6, segment_unmap 7). */
typedef void (*VsCaSegmentFunc) (gpointer data, int op, gint64 address, gint64 bytes);

/* Returns the address a cudaMalloc of bytes would return, or VS_UNKNOWN
 * to let the model make one up. */
typedef gint64 (*VsCaAddressFunc) (gpointer data, gint64 bytes);

/* A new empty allocator (nothing reserved).  limit: the most memory it
 * may reserve, G_MAXINT64 for none.  limit_is_fraction: the limit is
 * PyTorch's set_per_process_memory_fraction() cap, checked against a new
 * segment's full size before any cudaMalloc or mapping, and what enables
 * garbage_collection_threshold; otherwise it stands for the device filling
 * up (cudaMalloc or cuMemCreate failing).  device_total_bytes sizes the
 * address space of expandable segments (1 1/8 of it, as PyTorch reserves). */
VsCachingAllocator *vs_caching_allocator_new (const VsAllocConf *conf, gint64 limit,
                                              gboolean limit_is_fraction,
                                              gint64 device_total_bytes);
void vs_caching_allocator_free (VsCachingAllocator *ca);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (VsCachingAllocator, vs_caching_allocator_free)

/* Whether an operation met a size, a total or an address beyond the
 * model's range (VS_CA_MAX_BYTES).  From then on the model changes
 * nothing: malloc returns NULL (not counted as a failure), place_block
 * NULL, release_recorded FALSE, the others do nothing; the caller refuses
 * the replay instead of reading its results. */
gboolean vs_caching_allocator_out_of_range (VsCachingAllocator *ca);

/* Calls segment_func for every change of reserved memory. */
void vs_caching_allocator_set_segment_func (VsCachingAllocator *ca, VsCaSegmentFunc func,
                                            gpointer data);
void vs_caching_allocator_set_address_func (VsCachingAllocator *ca, VsCaAddressFunc func,
                                            gpointer data);

/* malloc(): a block for a request of size bytes on stream, or NULL when
 * PyTorch would raise OutOfMemoryError (after garbage collection and
 * releasing cached blocks, as it does). */
VsCaBlock *vs_caching_allocator_malloc (VsCachingAllocator *ca, gint64 size, gint64 stream);

/* free() of a block malloc returned, its use completed: back to its pool,
 * merged with free neighbours. */
void vs_caching_allocator_release (VsCachingAllocator *ca, VsCaBlock *block);

/* torch.cuda.empty_cache(): every cached segment not in use goes back. */
void vs_caching_allocator_empty_cache (VsCachingAllocator *ca);

/* The bytes empty_cache() would give back now: every cached segment with
 * no block in use, and the whole free pages of expandable segments. */
gint64 vs_caching_allocator_get_releasable (VsCachingAllocator *ca);

/* Gives back what a recorded run gave back: the cached segment at address
 * (op 5, segment_free), or the bytes at address of a free stretch of an
 * expandable segment (op 7, segment_unmap).  Returns FALSE, changing
 * nothing, when the model holds no such free memory (it is out of step
 * with the recorded run). */
gboolean vs_caching_allocator_release_recorded (VsCachingAllocator *ca, int op, gint64 address,
                                                gint64 bytes);

/* State that existed before a replay starts: a segment of bytes at address
 * (of the small pool when small), reserved at once; then blocks in use
 * inside it.  place_block marks [address, address + block_bytes) of the
 * free space containing address as in use by a request of requested bytes
 * (block_bytes VS_UNKNOWN: the request's rounded size, extended over a
 * remainder PyTorch would not have split off).  Returns the block, or NULL
 * when no free space of a pre-existing segment holds address. */
void vs_caching_allocator_add_segment (VsCachingAllocator *ca, gint64 address, gint64 bytes,
                                       gint64 stream, gboolean small);
VsCaBlock *vs_caching_allocator_place_block (VsCachingAllocator *ca, gint64 address,
                                             gint64 requested, gint64 block_bytes, gint64 stream);

/* A block's address and size (its rounded size, or more when the rest of
 * the free block it came from was not split off). */
gint64 vs_ca_block_get_address (const VsCaBlock *block);
gint64 vs_ca_block_get_size (const VsCaBlock *block);

/* The request as ca rounds it and the segment it asks CUDA for when none
 * of its free blocks fits (get_allocation_size() of round_size()): what
 * PyTorch's "Tried to allocate" prints. */
gint64 vs_caching_allocator_allocation_size (VsCachingAllocator *ca, gint64 requested);

/* Memory reserved now and at most so far; requested bytes of the blocks in
 * use now and at most so far; segments (or mapped pieces) taken and given
 * back; failed requests. */
gint64 vs_caching_allocator_get_reserved (VsCachingAllocator *ca);
gint64 vs_caching_allocator_get_peak_reserved (VsCachingAllocator *ca);
gint64 vs_caching_allocator_get_requested (VsCachingAllocator *ca);
gint64 vs_caching_allocator_get_peak_requested (VsCachingAllocator *ca);
gint64 vs_caching_allocator_get_segment_allocs (VsCachingAllocator *ca);
gint64 vs_caching_allocator_get_segment_frees (VsCachingAllocator *ca);
gint64 vs_caching_allocator_get_ooms (VsCachingAllocator *ca);

/* The most memory any attempt to take a new segment or map pages would
 * have reserved had it succeeded (0 before any): under any limit at least
 * this, the allocator would have decided exactly as it did. */
gint64 vs_caching_allocator_get_max_need (VsCachingAllocator *ca);

G_END_DECLS

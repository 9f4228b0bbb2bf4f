/* SPDX-License-Identifier: MIT */
/* vs-chunk-coder.h — chunks coded on a thread of their own.
 *
 * The finalizer hands the row sink every alloc_event and mem_event row as
 * it loads them (vs-row-sink.h); coding those chunks (varints and zstd)
 * is CPU work the rest of finalizing does not wait for.  A coder takes
 * the chunks in order, codes them on one background thread while the
 * caller goes on (sorting, pairing, the replay), and gives them back,
 * coded and in the order they came, when the caller drains it.  The
 * caller keeps the database to itself: the thread only codes.
 *
 * Plain C with POSIX threads, no GLib: it runs in `vramscope record`.
 */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "vs-chunk.h"

typedef struct VsChunkCoder VsChunkCoder;

/* A new coder with its thread started, or NULL when out of memory or no
 * thread can be made. */
VsChunkCoder *vs_chunk_coder_new (void);

/* Queues chunk for coding under (tag, seq), taking its values and nulls
 * (malloc'ed, column-major for exactly chunk->nrows rows); the caller's
 * *chunk is cleared.  Returns 0, or -1 with err when out of memory (the
 * chunk is then freed). */
int vs_chunk_coder_push (VsChunkCoder *coder, int tag, int64_t seq, VsChunk *chunk, char *err,
                         size_t errlen);

/* Called by vs_chunk_coder_drain() for each coded chunk, in the order
 * pushed.  Returns 0, or -1 to stop the drain. */
typedef int (*VsChunkCoderPut) (void *data, int tag, int64_t seq, int nrows, const uint8_t *zone,
                                size_t zone_len, const uint8_t *bytes, size_t bytes_len);

/* Waits until every chunk pushed is coded and hands each to put, then
 * forgets it.  Returns 0; -1 with err when a chunk could not be coded or
 * put refused one (those after it are forgotten unseen). */
int vs_chunk_coder_drain (VsChunkCoder *coder, VsChunkCoderPut put, void *data, char *err,
                          size_t errlen);

/* Forgets the chunks of tag, coded or not (a table given up on). */
void vs_chunk_coder_forget (VsChunkCoder *coder, int tag);

/* Stops the thread and frees the coder with whatever it still holds
 * (NULL: nothing). */
void vs_chunk_coder_free (VsChunkCoder *coder);

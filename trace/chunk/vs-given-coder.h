/* SPDX-License-Identifier: MIT */
/* vs-given-coder.h — alloc_event rows coded into chunks as they are
 * written, for the finalizer's hand-over (vs-fin-given.h).
 *
 * An import that hands its rows to the finalizer (record's import of a
 * PyTorch allocator stream, while the program runs) gives each row here
 * too; every VS_CHUNK_ROWS rows the coder codes them into the chunk that
 * compaction would code of them and keeps it in the hand-over, so that
 * after the program only the rows past the last whole chunk are coded.
 * Plain C, no GLib (vschunk).
 */
#pragma once

#include <stdint.h>

#include "vs-fin-given.h"

typedef struct VsGivenCoder VsGivenCoder;

/* A new coder; NULL when out of memory. */
VsGivenCoder *vs_given_coder_new (void);

/* Frees c (NULL: nothing). */
void vs_given_coder_free (VsGivenCoder *c);

/* The next alloc_event row (v[] and nulls as vs_writer_alloc_event_row()
 * gives them), rows in id order from 1.  At each VS_CHUNK_ROWS rows, they
 * are coded and kept in g (vs_fin_given_add_chunk).  0, or -1 when g is
 * given up (then or before). */
int vs_given_coder_row (VsGivenCoder *c, VsFinGiven *g, const int64_t *v, uint32_t nulls);

/* SPDX-License-Identifier: MIT */
/* vs-torch-stacks.h — reading the Python stacks a PyTorch allocator stream
 * refers to.
 *
 * The stream's tracker gathers the allocating thread's Python stack for
 * each event, interns it and appends each new stack to the side file
 * spool/torch-PID.stacks; a record's `reserved` word is its stack id (0:
 * none).  Format (collector/python/vs_torch_stacks.hpp): a 16-byte header,
 * "VSSTACK1", u32 version 1, u32 0; then entries of u32 kind, u32 payload
 * length, the payload and u32 FNV-1a (32 bits) of the three; kind 1 a
 * frame (u32 id, i32 line, u32 file length, u32 function length, the two
 * UTF-8 strings), kind 2 a stack (u32 id, u32 count, u32 frame ids
 * innermost first).  Ids count from 1 in file order; a stack names only
 * frames defined before it.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "vs-trace-writer.h"

typedef struct VsTorchStacks VsTorchStacks;

/* Reads the stacks file at path.  The file ends at its last complete
 * entry: a torn last entry (its process died while writing it) is left
 * out and *torn (may be NULL) set.  NULL with err filled when the file
 * cannot be read, is not a stacks file this version reads, or holds a
 * complete entry that is wrong (check word, kind, ids, lengths). */
VsTorchStacks *vs_torch_stacks_read (const char *path, bool *torn, char *err, size_t errlen);

/* An empty set of stacks, filled by vs_torch_stacks_read_more(). */
VsTorchStacks *vs_torch_stacks_new (void);

/* Reads the entries of the stacks file at path that s has not read yet
 * (the file only grows while its process writes it): s keeps every
 * complete entry, stacks already written into a trace keep their trace
 * ids, and a torn last entry (not completely written yet, or never) is
 * read again next time, *torn (may be NULL) set.  A file still shorter
 * than its header holds nothing yet.  False with err filled when the file
 * cannot be read, is no stacks file this version reads, or holds a
 * complete entry that is wrong; s then keeps what it had and reads
 * nothing more. */
bool vs_torch_stacks_read_more (VsTorchStacks *s, const char *path, bool *torn, char *err,
                                size_t errlen);

/* The number of stacks and of frames read. */
size_t vs_torch_stacks_n_stacks (const VsTorchStacks *s);
size_t vs_torch_stacks_n_frames (const VsTorchStacks *s);

/* The frame ids of stack id (innermost first) and their count; NULL when
 * id names no stack read. */
const uint32_t *vs_torch_stacks_get (const VsTorchStacks *s, uint32_t id, size_t *n);

/* Frame id's file, function and line; false when id names no frame. */
bool vs_torch_stacks_frame (const VsTorchStacks *s, uint32_t id, const char **file,
                            const char **function, int32_t *line);

/* The trace's stack id for stack id, its frames and stack written
 * through w the first time (frames as the snapshot importer writes a
 * Python stack frame: file, function, line); VS_UNKNOWN for id 0 or an id
 * the file does not hold (a stack its process did not finish writing),
 * -1 when w fails.  One VsTorchStacks serves one writer. */
int64_t vs_torch_stacks_trace_id (VsTorchStacks *s, VsWriter *w, uint32_t id);

void vs_torch_stacks_free (VsTorchStacks *s);

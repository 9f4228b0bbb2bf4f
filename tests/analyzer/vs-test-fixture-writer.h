/* SPDX-License-Identifier: MIT */
/* vs-test-fixture-writer.h — the writer context the fixture builders
 * (vs-test-fixtures.c, vs-test-pool-fixtures.c) share: a trace being
 * written with one process, and the first error any step met.  Private
 * to the fixtures.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "vs-trace-writer.h"

typedef struct
{
  VsWriter *w;
  int64_t proc; /* the one process's id */
  bool ok;      /* false once a step failed; err then says why */
  char *err;
  size_t errlen;
} VsFixtureWriter;

/* Notes a writer call's result: a negative rc is the first failure, its
 * message copied into c->err, unless an earlier one was kept. */
void vs_fixture_check (VsFixtureWriter *c, int64_t rc);

/* Creates the trace at path with start_ns T0, the clock, and one process
 * (pid 4242 on "testhost", "python train.py", started at T0) whose exit
 * status is exit_status (VS_UNKNOWN: not known).  Returns c->ok; on
 * failure err (errlen bytes) says why, and c->w may be NULL. */
bool vs_fixture_begin (VsFixtureWriter *c, const char *path, int64_t exit_status, char *err,
                       size_t errlen);

/* Closes the trace, finalizing it when asked; returns c->ok, the first
 * failure of any step in c->err. */
bool vs_fixture_end (VsFixtureWriter *c, bool finalize);

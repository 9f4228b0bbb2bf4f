/* SPDX-License-Identifier: MIT */
/* vs-test-fixture-writer.c — the fixtures' writer context
 * (vs-test-fixture-writer.h): a trace with one process, and the first
 * error of any step.
 */
#include "vs-test-fixture-writer.h"

#include <stdio.h>
#include <string.h>

#include "vs-test-fixtures.h"

void
vs_fixture_check (VsFixtureWriter *c, int64_t rc)
{
  if (rc < 0 && c->ok)
    {
      c->ok = false;
      snprintf (c->err, c->errlen, "%s", vs_writer_errmsg (c->w));
    }
}

bool
vs_fixture_begin (VsFixtureWriter *c, const char *path, int64_t exit_status, char *err,
                  size_t errlen)
{
  VsProcess p = { 4242,          1,          "testhost", VS_UNKNOWN,
                  VS_UNKNOWN,    VS_UNKNOWN, NULL,       "python train.py",
                  VS_FIXTURE_T0, VS_UNKNOWN, exit_status };

  memset (c, 0, sizeof *c);
  c->ok = true;
  c->err = err;
  c->errlen = errlen;
  c->w = vs_writer_create (path, err, errlen);
  if (c->w == NULL)
    return false;
  vs_fixture_check (c, vs_writer_set_meta_int (c->w, "start_ns", VS_FIXTURE_T0));
  vs_fixture_check (c, vs_writer_set_meta (c->w, "clock", "CLOCK_REALTIME"));
  c->proc = vs_writer_add_process (c->w, &p);
  vs_fixture_check (c, c->proc);
  return c->ok;
}

bool
vs_fixture_end (VsFixtureWriter *c, bool finalize)
{
  char err[512] = "";
  int rc = vs_writer_close (c->w, finalize, NULL, NULL, err, sizeof err);

  if (rc != 0 && c->ok)
    {
      c->ok = false;
      snprintf (c->err, c->errlen, "%s", err);
    }
  return c->ok;
}

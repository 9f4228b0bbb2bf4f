/* SPDX-License-Identifier: MIT */
/* vs-record-launch.h — `vramscope record`'s launcher: the program started
 * with the collector injected, its spool, its signals, its end.
 *
 * vs_record_launch() finds the collector, makes the spool beside the
 * output, sets the environment the collector and the PyTorch hook read,
 * starts the program with the termination signals forwarded to it, and
 * starts what runs beside it (the allocator streams followed,
 * vs-torch-follow.h; the window's rounds, vs-window-rounds.h);
 * vs_record_wait() waits for it to end.  What becomes of the spool then
 * is vs-record.c's.
 */
#pragma once

#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "vs-torch-follow.h"
#include "vs-window-rounds.h"

typedef struct
{
  /* Set by the caller. */
  char **prog;     /* the program and its arguments */
  const char *out; /* the trace to write (expanded) */
  const char *job; /* --job, NULL: none */
  bool kernels;    /* record kernels, copies and memsets */
  bool torch;      /* PyTorch's allocator level (auto or on) */
  bool quiet;
  int64_t window_ns; /* --window, 0: none */

  /* Set by vs_record_launch(). */
  char collector[PATH_MAX];
  char spool[PATH_MAX + 64];     /* as made, beside the output */
  char spool_abs[PATH_MAX + 64]; /* its absolute name, as the processes see it */
  pid_t pid;                     /* the program's */
  int64_t start_ns;              /* when it started (wall clock) */
  VsTorchFollow *follow;         /* the streams followed, NULL: not */
  VsWindowRounds *rounds;        /* the window applied as it runs, NULL: not */

  /* Set by vs_record_wait(). */
  int64_t end_ns;
  int code;       /* its exit status (128 + signal when one killed it) */
  int exec_errno; /* why it could not be started, 0 if it ran */
  VsWindowRoundsStats rounds_st;

  /* The launcher's own. */
  int errpipe;             /* the child's exec error, read at the end */
  struct sigaction old[4]; /* the forwarded signals' handlers before */
} VsRecordLaunch;

/* The collector's file name. */
#define VS_RECORD_COLLECTOR_NAME "libvramscope-collector.so"

/* Launches l->prog as above.  Returns 0 with it running, or the exit
 * status (1) with the reason printed and nothing left (no spool). */
int vs_record_launch (VsRecordLaunch *l);

/* Waits for the program to end, restores the signals' handlers and stops
 * the window's rounds (the round under way is cancelled).  The streams
 * are still followed: the caller stops that when it takes them. */
void vs_record_wait (VsRecordLaunch *l);

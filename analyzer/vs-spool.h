/* SPDX-License-Identifier: MIT */
/* vs-spool.h — recognising the spool directories recordings leave.
 *
 * While `vramscope record` runs, every process of the program writes its
 * own trace into a spool directory beside the output,
 * `.vramscope-spool-<record's pid>-XXXXXX`, with a `run.info` file naming
 * the host, record's pid, the program's pid and the output.  record merges
 * the spool and removes it at the end; a record that was killed leaves it
 * behind, and `vramscope recover` turns it into a trace.
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* The prefix of a spool directory's name. */
#define VS_SPOOL_PREFIX ".vramscope-spool-"

/* The file in a spool directory that describes the run. */
#define VS_SPOOL_RUN_INFO "run.info"

/* What run.info says (fields unknown are NULL or 0). */
typedef struct
{
  char *host;
  gint64 record_pid, program_pid, start_ns;
  char *output;
} VsSpoolInfo;

void vs_spool_info_clear (VsSpoolInfo *info);
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (VsSpoolInfo, vs_spool_info_clear)

/* Reads dir/run.info into *info.  Returns FALSE when it is missing or
 * unreadable (*info is then zeroed). */
gboolean vs_spool_read_info (const char *dir, VsSpoolInfo *info);

/* TRUE when path is a directory named like a spool or holding process
 * traces (process-*.db), PyTorch snapshots (torch-*.pickle) or allocator
 * streams (torch-*.stream). */
gboolean vs_spool_looks_like_spool (const char *path);

/* TRUE when process pid runs on this host (a zombie does not). */
gboolean vs_spool_pid_alive (gint64 pid);

/* The pid of the record process that made the spool at dir: run.info's
 * record_pid, else the pid in the directory's name; 0 when neither. */
gint64 vs_spool_record_pid (const char *dir);

/* When process pid (alive) started, in ns of CLOCK_REALTIME (to about a
 * second: the boot time is known to the second); 0 when unknown. */
gint64 vs_spool_pid_start_ns (gint64 pid);

/* TRUE when process pid (alive) runs the vramscope command, or when
 * nothing here can tell; FALSE when it is some other program (its pid was
 * given again after the recording's record ended). */
gboolean vs_spool_pid_is_vramscope (gint64 pid);

/* TRUE when the recording that owns the spool at dir still runs: its
 * record process (or, without run.info, the pid in the directory's name)
 * is alive on this host.  A spool written from another host counts as
 * running, since nothing here can tell. */
gboolean vs_spool_is_active (const char *dir);

/* The spool directories in dir (a folder holding traces) left by
 * recordings that no longer run, as full paths, sorted; empty when none. */
GPtrArray *vs_spool_find_leftovers (const char *dir);

/* One line telling how to recover the leftover spools in dir, or NULL
 * when there are none: "a recording that was killed left SPOOL; recover
 * it with: vramscope recover SPOOL -o FILE". */
char *vs_spool_leftover_hint (const char *dir);

G_END_DECLS

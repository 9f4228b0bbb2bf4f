/* SPDX-License-Identifier: MIT */
/* vs-diagnose.c — the diagnosis's driver: a trace into findings (see
 * vs-diagnose.h for each rule and its threshold).
 *
 * Per device: the peak of allocated memory by role and by site, the
 * iterations and their growth, the allocator's settings; then the
 * findings, each from its own evidence, by the rules on failed requests
 * (vs-diagnose-failures.c: classified by vs_oom_classify(), other
 * processes at a failure) and on memory held (vs-diagnose-held.c: growth
 * per iteration by vs_growth_judge(), leaks of device memory at exit,
 * fragmentation at the peak, memory outside every allocator), backed by
 * the allocator model and the batch prediction; ranked last.
 */
#include "vs-alloc-conf.h"
#include "vs-diagnose-private.h"
#include "vs-format.h"
#include "vs-framework-oom.h"
#include "vs-framework-pools.h"
#include "vs-fragmentation.h"
#include "vs-oom.h"
#include "vs-stack.h"
#include "vs-timeline.h"
#include "vs-trace-private.h"
#include "vs-whatif.h"
#include "vs-windowed.h"

#include <sqlite3.h>
#include <string.h>

#define MiB (G_GINT64_CONSTANT (1) << 20)
#define GiB (G_GINT64_CONSTANT (1) << 30)

static const char *const finding_names[VS_N_FINDINGS] = {
  "oom-device-full",   "oom-allocator-limit",  "oom-fragmentation",
  "fragmentation",     "growth-per-iteration", "leak-at-exit",
  "outside-allocator", "other-process",        "forward-without-backward",
};

const char *
vs_finding_name (VsFindingKind kind)
{
  g_return_val_if_fail (kind < VS_N_FINDINGS, "?");
  return finding_names[kind];
}

static void
finding_free (gpointer data)
{
  VsFinding *f = data;

  g_free (f->site);
  g_free (f->evidence);
  g_free (f->remedy);
  g_free (f);
}

static void
device_diagnosis_free (gpointer data)
{
  VsDeviceDiagnosis *d = data;

  g_clear_pointer (&d->sites, g_array_unref);
  g_clear_pointer (&d->iterations, vs_iterations_free);
  vs_allocator_settings_clear (&d->settings);
  g_free (d->lower_peak);
  g_free (d);
}

void
vs_diagnosis_free (VsDiagnosis *diagnosis)
{
  if (diagnosis == NULL)
    return;
  g_ptr_array_unref (diagnosis->devices);
  g_ptr_array_unref (diagnosis->findings);
  g_free (diagnosis);
}

/* A frame of torch.autocast's context manager: the program ran under
 * mixed precision. */
static const char *autocast_sql
    = "SELECT 1 FROM frame WHERE file LIKE '%torch/amp/autocast_mode.py'"
      " OR file LIKE '%torch/cuda/amp/autocast_mode.py' LIMIT 1";

static gboolean
uses_autocast (VsTrace *trace)
{
  sqlite3_stmt *stmt = vs_trace_statement (trace, autocast_sql, NULL);
  gboolean found;

  if (stmt == NULL)
    return FALSE;
  found = sqlite3_step (stmt) == SQLITE_ROW;
  sqlite3_reset (stmt);
  return found;
}

/* ------------------------------------------------------------ devices */

static gint64
pytorch_allocator (VsTrace *trace, gint64 device_id)
{
  const GPtrArray *allocators = vs_trace_get_allocators (trace);

  for (guint i = 0; i < allocators->len; i++)
    {
      const VsAllocatorInfo *a = g_ptr_array_index (allocators, i);

      if (a->device_id == device_id && g_strcmp0 (a->kind, "pytorch") == 0)
        return a->id;
    }
  return 0;
}

static int
finding_rank (const VsFinding *f)
{
  switch (f->kind)
    {
    case VS_FINDING_GROWTH_PER_ITERATION:
      /* Growth that goes on would exhaust any cap: the root cause of a
       * failure it comes with, so it comes first. */
      return 0;
    case VS_FINDING_OOM_DEVICE_FULL:
    case VS_FINDING_OOM_ALLOCATOR_LIMIT:
    case VS_FINDING_OOM_FRAGMENTATION:
      return 1;
    case VS_FINDING_OTHER_PROCESS:
      return 2;
    case VS_FINDING_FORWARD_WITHOUT_BACKWARD:
      return 2;
    case VS_FINDING_LEAK_AT_EXIT:
      return 3;
    case VS_FINDING_FRAGMENTATION:
      return 4;
    case VS_FINDING_OUTSIDE_ALLOCATOR:
    default:
      return 5;
    }
}

static gint
finding_cmp (gconstpointer a, gconstpointer b)
{
  const VsFinding *x = *(VsFinding *const *)a, *y = *(VsFinding *const *)b;
  int rx = finding_rank (x), ry = finding_rank (y);

  if (rx != ry)
    return rx < ry ? -1 : 1;
  if (x->device_id != y->device_id)
    return x->device_id < y->device_id ? -1 : 1;
  return 0;
}

static gboolean
diagnose_device (VsTrace *trace, const VsDeviceInfo *device, VsDiagnosis *dx, GError **error)
{
  VsDeviceDiagnosis *dd = g_new0 (VsDeviceDiagnosis, 1);
  g_autoptr (GArray) blocks = NULL; /* live at the peak of allocated memory */
  guint first;

  dd->device = device;
  vs_allocator_settings_read (trace, device->id, &dd->settings);
  if (!vs_summary_get (trace, device->id, 0, &dd->all, NULL))
    {
      device_diagnosis_free (dd);
      return TRUE; /* nothing recorded on this device */
    }
  g_ptr_array_add (dx->devices, dd);
  dd->allocator_id = pytorch_allocator (trace, device->id);
  dd->allocator = dd->all;
  if (dd->allocator_id != 0
      && !vs_summary_get (trace, device->id, dd->allocator_id, &dd->allocator, error))
    return FALSE;
  dd->lower_peak_saving = VS_UNKNOWN;
  dd->autocast = uses_autocast (trace);
  if (dd->all.peak_allocated_seq != VS_UNKNOWN)
    {
      /* Read once: roles, sites and unused activations all look at them. */
      blocks = vs_live_blocks (trace, device->id, 0, dd->all.peak_allocated_seq, error);
      if (blocks == NULL
          || !vs_roles_of_blocks (trace, device->id, 0, dd->all.peak_allocated_seq, blocks,
                                  &dd->roles, error))
        return FALSE;
      dd->sites = vs_group_blocks (trace, blocks, VS_GROUP_BY_SITE, error);
      if (dd->sites == NULL)
        return FALSE;
      /* Advice for a peak worth lowering only. */
      if (dd->all.peak_allocated_bytes >= 256 * MiB)
        {
          g_autofree char *when = vs_format_duration (dd->all.peak_allocated_time_ns);
          g_autofree char *at = g_strdup_printf ("at the peak (%s)", when);

          dd->lower_peak
              = vs_diagnose_role_remedy (&dd->roles, at, dd->autocast, &dd->lower_peak_saving);
        }
    }
  dd->iterations = vs_iterations_find (trace, device->id, dd->allocator_id, error);
  if (dd->iterations == NULL || !vs_growth_judge (trace, dd->iterations, &dd->growth, error))
    return FALSE;

  first = dx->findings->len;
  if (!vs_diagnose_measure_outside (trace, dd, error)
      || !vs_diagnose_failures (trace, dd, dx->findings, error))
    return FALSE;
  vs_diagnose_growth (trace, dd, dx->findings);
  if (!vs_diagnose_pool_growth (trace, dd, dx->findings, error)
      || !vs_diagnose_unused_activations (trace, dd, blocks, dx->findings, error)
      || !vs_diagnose_leaks (trace, dd, dx->findings, error)
      || !vs_diagnose_fragmentation (trace, dd, dx->findings, error)
      || !vs_diagnose_outside (trace, dd, dx->findings, error)
      || !vs_diagnose_whatif (trace, dd, dx->findings, first, error)
      || !vs_diagnose_predict (trace, dd, dx->findings, first, error))
    return FALSE;
  return TRUE;
}

VsDiagnosis *
vs_diagnose (VsTrace *trace, gint64 device_id, GError **error)
{
  g_autoptr (VsDiagnosis) dx = g_new0 (VsDiagnosis, 1);
  const GPtrArray *devices;

  g_return_val_if_fail (trace != NULL, NULL);
  dx->devices = g_ptr_array_new_with_free_func (device_diagnosis_free);
  dx->findings = g_ptr_array_new_with_free_func (finding_free);
  devices = vs_trace_get_devices (trace);
  for (guint i = 0; i < devices->len; i++)
    {
      const VsDeviceInfo *d = g_ptr_array_index (devices, i);

      if (device_id != 0 && d->id != device_id)
        continue;
      if (!diagnose_device (trace, d, dx, error))
        return NULL;
    }
  g_ptr_array_sort (dx->findings, finding_cmp);
  return g_steal_pointer (&dx);
}

VsTable *
vs_diagnosis_table (VsTrace *trace, const VsDiagnosis *dx)
{
  VsTable *t = vs_table_new ("Findings: what failed and why, growth per iteration, leaks, "
                             "fragmentation, memory outside the allocators and other processes, "
                             "each with its evidence and remedy.");

  g_return_val_if_fail (trace != NULL && dx != NULL, NULL);
  vs_table_add_column (t, "finding", VS_COLUMN_TEXT);
  vs_table_add_column (t, "device", VS_COLUMN_INT);
  vs_table_add_column (t, "allocator", VS_COLUMN_TEXT);
  vs_table_add_column (t, "bytes", VS_COLUMN_BYTES);
  vs_table_add_column (t, "count", VS_COLUMN_INT);
  vs_table_add_column (t, "time_ns", VS_COLUMN_TIME);
  vs_table_add_column (t, "site", VS_COLUMN_TEXT);
  vs_table_add_column (t, "evidence", VS_COLUMN_TEXT);
  vs_table_add_column (t, "remedy", VS_COLUMN_TEXT);
  for (guint i = 0; i < dx->findings->len; i++)
    {
      const VsFinding *f = g_ptr_array_index (dx->findings, i);
      const VsDeviceInfo *d = vs_trace_lookup_device (trace, f->device_id);
      guint c = 0;

      vs_table_add_row (t);
      vs_table_set_text (t, c++, vs_finding_name (f->kind));
      vs_table_set_int (t, c++, d != NULL ? d->idx : VS_UNKNOWN);
      vs_table_set_text (t, c++, vs_trace_allocator_name (trace, f->allocator_id));
      vs_table_set_int (t, c++, f->bytes);
      vs_table_set_int (t, c++, f->count);
      vs_table_set_int (t, c++, f->time_ns);
      vs_table_set_text (t, c++, f->site);
      vs_table_set_text (t, c++, f->evidence);
      vs_table_set_text (t, c++, f->remedy);
    }
  return t;
}

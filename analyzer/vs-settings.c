/* SPDX-License-Identifier: MIT */
/* vs-settings.c — reading an allocator's configuration from meta and the
 * allocator table (see vs-settings.h).  The JSON texts are searched for
 * the one key needed, so no JSON parser is required.
 */
#include "vs-settings.h"
#include "vs-format.h"
#include "vs-trace-private.h"

#include <stdlib.h>
#include <string.h>

/* 1 when json holds "key": true, 0 for false, -1 when absent. */
static int
json_bool (const char *json, const char *key)
{
  g_autofree char *quoted = g_strdup_printf ("\"%s\"", key);
  const char *p = json != NULL ? strstr (json, quoted) : NULL;

  if (p == NULL)
    return -1;
  p += strlen (quoted);
  while (*p == ' ' || *p == ':')
    p++;
  if (g_str_has_prefix (p, "true") || g_str_has_prefix (p, "True") || *p == '1')
    return 1;
  if (g_str_has_prefix (p, "false") || g_str_has_prefix (p, "False") || *p == '0')
    return 0;
  return -1;
}

/* 1 or 0 when conf (PYTORCH_CUDA_ALLOC_CONF syntax) sets expandable
 * segments, -1 when it does not say. */
static int
conf_expandable (const char *conf)
{
  g_autofree char *lower = conf != NULL ? g_ascii_strdown (conf, -1) : NULL;
  const char *p = lower != NULL ? strstr (lower, "expandable_segments") : NULL;

  if (p == NULL)
    return -1;
  p += strlen ("expandable_segments");
  while (*p == ' ' || *p == ':')
    p++;
  return g_str_has_prefix (p, "true") ? 1 : g_str_has_prefix (p, "false") ? 0 : -1;
}

void
vs_allocator_settings_read (VsTrace *trace, gint64 device_id, VsAllocatorSettings *out)
{
  static const char *settings_sql
      = "SELECT settings FROM allocator WHERE device_id = ?1 AND kind = 'pytorch'"
        " ORDER BY id LIMIT 1";
  const VsDeviceInfo *d = vs_trace_lookup_device (trace, device_id);
  g_autofree char *expandable = vs_trace_dup_meta (trace, "pytorch.expandable_segments");
  g_autofree char *json = vs_trace_dup_meta (trace, "pytorch.allocator_settings");
  g_autofree char *row_settings = NULL;
  g_autofree char *fraction = NULL;
  sqlite3_stmt *stmt;

  memset (out, 0, sizeof *out);
  out->expandable_segments = -1;
  out->memory_fraction = -1;
  out->limit_bytes = VS_UNKNOWN;
  stmt = vs_trace_statement (trace, settings_sql, NULL);
  if (stmt != NULL)
    {
      sqlite3_bind_int64 (stmt, 1, device_id);
      if (sqlite3_step (stmt) == SQLITE_ROW)
        {
          out->pytorch = TRUE;
          row_settings = vs_column_dup (stmt, 0);
        }
      sqlite3_reset (stmt);
    }
  out->alloc_conf = vs_trace_dup_meta (trace, "pytorch.alloc_conf");
  if (expandable != NULL)
    out->expandable_segments = strcmp (expandable, "1") == 0 ? 1 : 0;
  if (out->expandable_segments < 0)
    out->expandable_segments = json_bool (json, "expandable_segments");
  if (out->expandable_segments < 0)
    out->expandable_segments = json_bool (row_settings, "expandable_segments");
  if (out->expandable_segments < 0)
    out->expandable_segments = conf_expandable (out->alloc_conf);
  if (d != NULL)
    {
      g_autofree char *key = g_strdup_printf ("pytorch.memory_fraction.%" G_GINT64_FORMAT, d->idx);

      fraction = vs_trace_dup_meta (trace, key);
    }
  if (fraction != NULL)
    {
      char *end = NULL;
      double f = g_ascii_strtod (fraction, &end);

      if (end != fraction && f > 0 && f <= 1)
        {
          out->memory_fraction = f;
          if (d != NULL && d->total_bytes != VS_UNKNOWN)
            out->limit_bytes = (gint64)(f * (double)d->total_bytes);
        }
    }
}

void
vs_allocator_settings_clear (VsAllocatorSettings *s)
{
  g_clear_pointer (&s->alloc_conf, g_free);
}

char *
vs_allocator_settings_describe (const VsAllocatorSettings *s)
{
  GString *out = g_string_new (NULL);

  if (s->expandable_segments >= 0)
    g_string_append_printf (out, "expandable_segments %s", s->expandable_segments ? "on" : "off");
  if (s->memory_fraction >= 1)
    {
      if (out->len > 0)
        g_string_append (out, ", ");
      g_string_append (out, "no memory fraction cap");
    }
  else if (s->memory_fraction > 0)
    {
      if (out->len > 0)
        g_string_append (out, ", ");
      g_string_append_printf (out, "memory fraction %.3g", s->memory_fraction);
      if (s->limit_bytes != VS_UNKNOWN)
        {
          g_autofree char *limit = vs_format_bytes (s->limit_bytes);

          g_string_append_printf (out, " = limit %s", limit);
        }
    }
  if (s->alloc_conf != NULL && s->alloc_conf[0] != '\0')
    {
      if (out->len > 0)
        g_string_append (out, ", ");
      g_string_append_printf (out, "PYTORCH_CUDA_ALLOC_CONF=%s", s->alloc_conf);
    }
  if (out->len == 0)
    {
      g_string_free (out, TRUE);
      return NULL;
    }
  return g_string_free (out, FALSE);
}

/* SPDX-License-Identifier: MIT */
/* vs-alloc-conf.c — PyTorch caching-allocator settings (see vs-alloc-conf.h).
 *
 * The parsing and the checks follow c10/cuda/CUDAAllocatorConfig.cpp (and
 * its successor c10/core/AllocatorConfig.cpp): comma-separated key:value
 * pairs, values in MiB for the *_mb options, roundup_power2_divisions as
 * one power of two for every interval or a bracketed list of
 * "interval-start-in-MiB:divisions" pairs where the first pair also covers
 * the intervals below it and ">" every interval after the last one named.
 */
#include "vs-alloc-conf.h"

#include <string.h>

#define MiB (1024LL * 1024)

void
vs_alloc_conf_init (VsAllocConf *conf)
{
  g_return_if_fail (conf != NULL);
  memset (conf, 0, sizeof *conf);
  conf->max_split_size = G_MAXINT64;
  conf->max_non_split_rounding = VS_CA_LARGE_BUFFER;
}

static gboolean fail (GError **error, const char *fmt, ...) G_GNUC_PRINTF (2, 3);

static gboolean
fail (GError **error, const char *fmt, ...)
{
  va_list ap;
  va_start (ap, fmt);
  g_autofree char *msg = g_strdup_vprintf (fmt, ap);
  va_end (ap);
  g_set_error_literal (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE, msg);
  return FALSE;
}

/* value as a non-negative decimal integer (no sign, no trailing text). */
static gboolean
parse_uint (const char *value, guint64 *out)
{
  return value[0] != '\0' && g_ascii_string_to_unsigned (value, 10, 0, G_MAXUINT64, out, NULL);
}

static gboolean
is_pow2 (guint64 v)
{
  return v != 0 && (v & (v - 1)) == 0;
}

/* floor(log2 (v)) for v > 0. */
static guint
log2_floor (guint64 v)
{
  return 63 - (guint)__builtin_clzll (v);
}

/* max_split_size_mb and max_non_split_rounding_mb: MiB, more than 20. */
static gboolean
parse_mb (const char *key, const char *value, gint64 *out, GError **error)
{
  guint64 v;

  if (!parse_uint (value, &v))
    return fail (error, "allocator option %s takes a number of MiB, not '%s'", key, value);
  if (v <= (guint64)(VS_CA_LARGE_BUFFER / MiB))
    return fail (error, "allocator option %s too small, must be > %lld", key,
                 VS_CA_LARGE_BUFFER / MiB);
  *out = v >= (guint64)(G_MAXINT64 / MiB) ? G_MAXINT64 : (gint64)v * MiB;
  return TRUE;
}

static gboolean
parse_divisions (const char *value, VsAllocConf *conf, GError **error)
{
  guint64 v;

  if (value[0] != '[')
    {
      if (!parse_uint (value, &v) || !is_pow2 (v))
        return fail (error, "roundup_power2_divisions must be a power of 2, not '%s'", value);
      for (int i = 0; i < VS_CA_ROUNDUP_INTERVALS; i++)
        conf->roundup_power2_divisions[i] = (guint)v;
      return TRUE;
    }
  gsize len = strlen (value);
  if (len < 2 || value[len - 1] != ']')
    return fail (error, "roundup_power2_divisions list '%s' is not closed by ']'", value);
  g_autofree char *inner = g_strndup (value + 1, len - 2);
  g_auto (GStrv) pairs = g_strsplit (inner, ",", -1);
  gboolean first = TRUE;
  guint last = 0;
  for (char **p = pairs; *p != NULL; p++)
    {
      g_auto (GStrv) kv = g_strsplit (g_strstrip (*p), ":", 2);
      guint64 div;
      if (g_strv_length (kv) != 2 || !parse_uint (g_strstrip (kv[1]), &div) || !is_pow2 (div))
        return fail (error, "roundup_power2_divisions entry '%s' is not INTERVAL:POWER_OF_2", *p);
      const char *key = g_strstrip (kv[0]);
      if (strcmp (key, ">") == 0)
        {
          for (guint i = first ? 0 : last + 1; i < VS_CA_ROUNDUP_INTERVALS; i++)
            conf->roundup_power2_divisions[i] = (guint)div;
          continue;
        }
      guint64 mb;
      if (!parse_uint (key, &mb) || !is_pow2 (mb))
        return fail (error, "roundup_power2_divisions interval '%s' must be a power of 2", key);
      guint index = MIN (log2_floor (mb), VS_CA_ROUNDUP_INTERVALS - 1);
      if (first)
        for (guint i = 0; i < index; i++)
          conf->roundup_power2_divisions[i] = (guint)div;
      first = FALSE;
      conf->roundup_power2_divisions[index] = (guint)div;
      last = index;
    }
  return TRUE;
}

gboolean
vs_alloc_conf_parse (const char *text, VsAllocConf *conf, GError **error)
{
  g_return_val_if_fail (text != NULL && conf != NULL, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  vs_alloc_conf_init (conf);
  /* Split on commas outside brackets. */
  g_autoptr (GPtrArray) items = g_ptr_array_new_with_free_func (g_free);
  const char *start = text;
  int depth = 0;
  for (const char *c = text;; c++)
    {
      if (*c == '[')
        depth++;
      else if (*c == ']')
        depth--;
      if (*c == '\0' || (*c == ',' && depth == 0))
        {
          g_ptr_array_add (items, g_strndup (start, c - start));
          if (*c == '\0')
            break;
          start = c + 1;
        }
    }
  for (guint i = 0; i < items->len; i++)
    {
      char *item = g_strstrip ((char *)g_ptr_array_index (items, i));
      if (item[0] == '\0')
        continue;
      char *colon = strchr (item, ':');
      if (colon == NULL)
        return fail (error, "allocator option '%s' has no ':VALUE'", item);
      *colon = '\0';
      const char *key = g_strstrip (item);
      const char *value = g_strstrip (colon + 1);

      if (strcmp (key, "max_split_size_mb") == 0)
        {
          if (!parse_mb (key, value, &conf->max_split_size, error))
            return FALSE;
        }
      else if (strcmp (key, "max_non_split_rounding_mb") == 0)
        {
          if (!parse_mb (key, value, &conf->max_non_split_rounding, error))
            return FALSE;
        }
      else if (strcmp (key, "roundup_power2_divisions") == 0)
        {
          if (!parse_divisions (value, conf, error))
            return FALSE;
        }
      else if (strcmp (key, "garbage_collection_threshold") == 0)
        {
          char *end = NULL;
          double v = g_ascii_strtod (value, &end);
          if (value[0] == '\0' || end == NULL || *end != '\0' || !(v > 0.0) || !(v < 1.0))
            return fail (error,
                         "garbage_collection_threshold must be a number between 0 and 1 "
                         "(exclusive), not '%s'",
                         value);
          conf->garbage_collection_threshold = v;
        }
      else if (strcmp (key, "expandable_segments") == 0)
        {
          if (strcmp (value, "True") == 0)
            conf->expandable_segments = TRUE;
          else if (strcmp (value, "False") == 0)
            conf->expandable_segments = FALSE;
          else
            return fail (error, "expandable_segments must be True or False, not '%s'", value);
        }
      else if (strcmp (key, "backend") == 0)
        {
          if (strcmp (value, "native") != 0)
            return fail (error,
                         "backend:%s keeps no caching-allocator segments to replay "
                         "(only backend:native can be modelled)",
                         value);
        }
      else if (strcmp (key, "release_lock_on_cudamalloc") == 0 || g_str_has_prefix (key, "pinned_")
               || strcmp (key, "graph_capture_record_stream_reuse") == 0)
        ; /* speed or host memory only */
      else
        return fail (error, "unknown allocator option '%s'", key);
    }
  return TRUE;
}

/* The value after "key": in a JSON object, or NULL.  Good enough for the
 * flat objects PyTorch writes (keys are unique and never nested in
 * strings). */
static const char *
json_value (const char *json, const char *key)
{
  g_autofree char *needle = g_strdup_printf ("\"%s\"", key);
  const char *p = strstr (json, needle);
  if (p == NULL)
    return NULL;
  p += strlen (needle);
  while (g_ascii_isspace (*p))
    p++;
  if (*p != ':')
    return NULL;
  p++;
  while (g_ascii_isspace (*p))
    p++;
  return p;
}

/* A JSON string starting at p (at its opening quote), unescaped. */
static char *
json_string (const char *p)
{
  if (p == NULL || *p != '"')
    return NULL;
  GString *s = g_string_new (NULL);
  for (p++; *p != '\0' && *p != '"'; p++)
    {
      if (*p == '\\' && p[1] != '\0')
        p++;
      g_string_append_c (s, *p);
    }
  return g_string_free (s, FALSE);
}

gboolean
vs_alloc_conf_from_settings (const char *settings, VsAllocConf *conf, GError **error)
{
  g_return_val_if_fail (conf != NULL, FALSE);

  vs_alloc_conf_init (conf);
  if (settings == NULL)
    return TRUE;
  while (g_ascii_isspace (*settings))
    settings++;
  if (settings[0] != '{')
    return vs_alloc_conf_parse (settings, conf, error);

  g_autofree char *env = json_string (json_value (settings, "PYTORCH_CUDA_ALLOC_CONF"));
  if (env != NULL && !vs_alloc_conf_parse (env, conf, error))
    return FALSE;
  const char *v;
  if ((v = json_value (settings, "max_split_size")) != NULL)
    {
      gint64 m = g_ascii_strtoll (v, NULL, 10);
      conf->max_split_size = m <= 0 ? G_MAXINT64 : m;
    }
  if ((v = json_value (settings, "garbage_collection_threshold")) != NULL)
    conf->garbage_collection_threshold = g_ascii_strtod (v, NULL);
  if ((v = json_value (settings, "expandable_segments")) != NULL)
    conf->expandable_segments = g_str_has_prefix (v, "true");
  if ((v = json_value (settings, "roundup_power2_divisions")) != NULL && *v == '{')
    for (int i = 0; i < VS_CA_ROUNDUP_INTERVALS; i++)
      {
        g_autofree char *k = g_strdup_printf ("%lld", 1LL << i);
        const char *d = json_value (v, k);
        if (d != NULL)
          conf->roundup_power2_divisions[i] = (guint)g_ascii_strtoull (d, NULL, 10);
      }
  return TRUE;
}

char *
vs_alloc_conf_to_string (const VsAllocConf *conf)
{
  VsAllocConf def;
  GString *s = g_string_new (NULL);

  g_return_val_if_fail (conf != NULL, NULL);
  vs_alloc_conf_init (&def);
#define SEP() (s->len ? "," : "")
  if (conf->expandable_segments)
    g_string_append_printf (s, "%sexpandable_segments:True", SEP ());
  if (conf->max_split_size != def.max_split_size)
    g_string_append_printf (s, "%smax_split_size_mb:%" G_GINT64_FORMAT, SEP (),
                            (gint64)(conf->max_split_size / MiB));
  if (conf->max_non_split_rounding != def.max_non_split_rounding)
    g_string_append_printf (s, "%smax_non_split_rounding_mb:%" G_GINT64_FORMAT, SEP (),
                            (gint64)(conf->max_non_split_rounding / MiB));
  if (conf->garbage_collection_threshold > 0.0)
    g_string_append_printf (s, "%sgarbage_collection_threshold:%g", SEP (),
                            conf->garbage_collection_threshold);
  gboolean uniform = TRUE, any = FALSE;
  for (int i = 0; i < VS_CA_ROUNDUP_INTERVALS; i++)
    {
      uniform = uniform && conf->roundup_power2_divisions[i] == conf->roundup_power2_divisions[0];
      any = any || conf->roundup_power2_divisions[i] > 1;
    }
  if (any && uniform)
    g_string_append_printf (s, "%sroundup_power2_divisions:%u", SEP (),
                            conf->roundup_power2_divisions[0]);
  else if (any)
    {
      g_string_append_printf (s, "%sroundup_power2_divisions:[", SEP ());
      for (int i = 0; i < VS_CA_ROUNDUP_INTERVALS; i++)
        g_string_append_printf (s, "%s%lld:%u", i ? "," : "", 1LL << i,
                                conf->roundup_power2_divisions[i]);
      g_string_append_c (s, ']');
    }
#undef SEP
  return g_string_free (s, FALSE);
}

/* roundup_power2_next_division(): size rounded up to the next of
 * `divisions` equal steps between the powers of two around it. */
static gint64
roundup_power2_next_division (gint64 size, guint64 divisions)
{
  guint64 s = (guint64)size;
  if (is_pow2 (s))
    return size;
  guint64 floor2 = 1ULL << log2_floor (s);
  guint64 step = floor2 >> log2_floor (divisions);
  if (step == 0)
    return (gint64)(floor2 << 1);
  guint64 down = s & ~(step - 1);
  return (gint64)(down == s ? s : down + step);
}

gint64
vs_alloc_conf_round_size (const VsAllocConf *conf, gint64 size)
{
  g_return_val_if_fail (conf != NULL, size);
  if (size < VS_CA_MIN_BLOCK_SIZE)
    return VS_CA_MIN_BLOCK_SIZE;
  /* roundup_power2_divisions(size): the interval of size's power of two,
   * counted from 1 MiB (sizes below share the first interval). */
  guint log_size = log2_floor ((guint64)size);
  guint index = log_size > 20 ? log_size - 20 : 0;
  guint divisions = conf->roundup_power2_divisions[MIN (index, VS_CA_ROUNDUP_INTERVALS - 1)];
  if (divisions > 1 && size > VS_CA_MIN_BLOCK_SIZE * (gint64)divisions)
    return roundup_power2_next_division (size, divisions);
  return VS_CA_MIN_BLOCK_SIZE * ((size + VS_CA_MIN_BLOCK_SIZE - 1) / VS_CA_MIN_BLOCK_SIZE);
}

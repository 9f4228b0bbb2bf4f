/* SPDX-License-Identifier: MIT */
/* vs-compare-item.c — a comparison table row (see vs-compare-item.h). */
#include "vs-compare-item.h"

#include <glib/gi18n.h>
#include <string.h>

#include "vs-diagnosis-pane.h"

struct _VsCompareItem
{
  GObject parent_instance;
  char *section, *name;
  gint64 device, a, b, delta;
  double percent;
  gboolean is_bytes;
};

enum
{
  PROP_0,
  PROP_SECTION,
  PROP_NAME,
  PROP_DEVICE,
  PROP_A,
  PROP_B,
  PROP_DELTA,
  PROP_PERCENT,
  PROP_IS_BYTES,
  N_PROPS
};

static GParamSpec *props[N_PROPS];

G_DEFINE_FINAL_TYPE (VsCompareItem, vs_compare_item, G_TYPE_OBJECT)

static const char *
section_label (const char *section)
{
  static const struct
  {
    const char *name, *label;
  } sections[] = {
    { "peak", N_("Peak") },         { "role", N_("Role") },
    { "site", N_("Site") },         { "fragmentation", N_("Fragmentation") },
    { "failures", N_("Failures") }, { "finding", N_("Finding") },
  };

  for (guint i = 0; i < G_N_ELEMENTS (sections); i++)
    if (strcmp (sections[i].name, section) == 0)
      return _(sections[i].label);
  return section;
}

/* See vs-compare-item.h. */
char *
vs_compare_row_label (const char *section, const char *name)
{
  static const struct
  {
    const char *name, *label;
  } names[] = {
    { "peak_allocated_bytes", N_("Peak allocated") },
    { "peak_reserved_bytes", N_("Peak reserved") },
    { "peak_device_bytes", N_("Peak device memory") },
    { "parameters", N_("Parameters") },
    { "gradients", N_("Gradients") },
    { "optimizer-state", N_("Optimizer state") },
    { "activations", N_("Activations") },
    { "other", N_("Other") },
    { "peak_reserved_minus_allocated_bytes", N_("Peak reserved minus peak allocated") },
    { "failed_alloc_count", N_("Failed allocations") },
  };

  g_return_val_if_fail (section != NULL && name != NULL, NULL);
  if (strcmp (section, "site") == 0)
    return g_strdup (name);
  if (strcmp (section, "finding") == 0)
    for (VsFindingKind k = 0; k < VS_N_FINDINGS; k++)
      if (strcmp (vs_finding_name (k), name) == 0)
        return g_strdup (vs_finding_title (k));
  for (guint i = 0; i < G_N_ELEMENTS (names); i++)
    if (strcmp (names[i].name, name) == 0)
      return g_strdup (_(names[i].label));
  return g_strdup (name);
}

/* See vs-compare-item.h. */
VsCompareItem *
vs_compare_item_new (const VsDiffRow *r)
{
  VsCompareItem *self = g_object_new (VS_TYPE_COMPARE_ITEM, NULL);

  g_return_val_if_fail (r != NULL, self);
  self->section = g_strdup (section_label (r->section));
  self->name = vs_compare_row_label (r->section, r->name);
  self->device = r->device;
  self->a = r->a;
  self->b = r->b;
  self->delta = r->delta;
  self->is_bytes = r->is_bytes;
  /* Sorted numerically: unknown lowest, new (A held none) highest. */
  if (r->delta == VS_UNKNOWN)
    self->percent = VS_COMPARE_PERCENT_UNKNOWN;
  else if (r->a == 0)
    self->percent = r->b == 0 ? 0 : VS_COMPARE_PERCENT_NEW;
  else
    self->percent = 100.0 * (double)r->delta / (double)r->a;
  return self;
}

const char *
vs_compare_item_get_name (VsCompareItem *self)
{
  g_return_val_if_fail (VS_IS_COMPARE_ITEM (self), NULL);
  return self->name;
}

static void
vs_compare_item_get_property (GObject *object, guint id, GValue *value, GParamSpec *pspec)
{
  VsCompareItem *self = VS_COMPARE_ITEM (object);

  switch (id)
    {
    case PROP_SECTION:
      g_value_set_string (value, self->section);
      break;
    case PROP_NAME:
      g_value_set_string (value, self->name);
      break;
    case PROP_DEVICE:
      g_value_set_int64 (value, self->device);
      break;
    case PROP_A:
      g_value_set_int64 (value, self->a);
      break;
    case PROP_B:
      g_value_set_int64 (value, self->b);
      break;
    case PROP_DELTA:
      g_value_set_int64 (value, self->delta);
      break;
    case PROP_PERCENT:
      g_value_set_double (value, self->percent);
      break;
    case PROP_IS_BYTES:
      g_value_set_boolean (value, self->is_bytes);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, id, pspec);
    }
}

static void
vs_compare_item_finalize (GObject *object)
{
  VsCompareItem *self = VS_COMPARE_ITEM (object);

  g_free (self->section);
  g_free (self->name);
  G_OBJECT_CLASS (vs_compare_item_parent_class)->finalize (object);
}

static void
vs_compare_item_class_init (VsCompareItemClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GParamFlags f = G_PARAM_READABLE | G_PARAM_STATIC_STRINGS;

  object_class->get_property = vs_compare_item_get_property;
  object_class->finalize = vs_compare_item_finalize;
  props[PROP_SECTION] = g_param_spec_string ("section", NULL, NULL, NULL, f);
  props[PROP_NAME] = g_param_spec_string ("name", NULL, NULL, NULL, f);
  props[PROP_DEVICE] = g_param_spec_int64 ("device", NULL, NULL, G_MININT64, G_MAXINT64, 0, f);
  props[PROP_A] = g_param_spec_int64 ("a", NULL, NULL, G_MININT64, G_MAXINT64, 0, f);
  props[PROP_B] = g_param_spec_int64 ("b", NULL, NULL, G_MININT64, G_MAXINT64, 0, f);
  props[PROP_DELTA] = g_param_spec_int64 ("delta", NULL, NULL, G_MININT64, G_MAXINT64, 0, f);
  props[PROP_PERCENT]
      = g_param_spec_double ("percent", NULL, NULL, -G_MAXDOUBLE, G_MAXDOUBLE, 0, f);
  props[PROP_IS_BYTES] = g_param_spec_boolean ("is-bytes", NULL, NULL, FALSE, f);
  g_object_class_install_properties (object_class, N_PROPS, props);
}

static void
vs_compare_item_init (VsCompareItem *self)
{
}

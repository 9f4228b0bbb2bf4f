/* SPDX-License-Identifier: MIT */
/* vs-compare-item.h — one row of the comparison table: a diff row
 * (vs-diff.h) with human labels, as GObject properties the columns'
 * templates and sorters name: "section" and "name" (words, not CSV
 * names), "device", "a", "b", "delta" (B − A; VS_UNKNOWN where either is
 * unknown), "percent" (the delta over A, in %;
 * VS_COMPARE_PERCENT_NEW where A held nothing and B does,
 * VS_COMPARE_PERCENT_UNKNOWN where either is unknown) and "is-bytes".
 */
#pragma once

#include <glib-object.h>

#include "vs-analyzer.h"

G_BEGIN_DECLS

#define VS_COMPARE_PERCENT_UNKNOWN (-G_MAXDOUBLE)
#define VS_COMPARE_PERCENT_NEW G_MAXDOUBLE

#define VS_TYPE_COMPARE_ITEM (vs_compare_item_get_type ())
G_DECLARE_FINAL_TYPE (VsCompareItem, vs_compare_item, VS, COMPARE_ITEM, GObject)

/* The item for diff row r (copied). */
VsCompareItem *vs_compare_item_new (const VsDiffRow *r);

const char *vs_compare_item_get_name (VsCompareItem *self);

/* A diff row's name in words ("Peak allocated", "Optimizer state", a
 * finding's title; a site as it is).  Newly allocated. */
char *vs_compare_row_label (const char *section, const char *name);

G_END_DECLS

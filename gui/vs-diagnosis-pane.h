/* SPDX-License-Identifier: MIT */
/* vs-diagnosis-pane.h — the answers first: the trace's findings (the
 * analyzer's vs_diagnose, as `vramscope report FILE diagnose` prints them),
 * each with its evidence, remedy and expected saving, above the facts of
 * each device's peak (by role and by user site); "Diagnosing…" until the
 * document's diagnosis is read.
 *
 * Signal "finding-activated" (device_id, time_ns, site): the user asked to
 * see a finding — its instant (VS_UNKNOWN when it has none) and its user
 * site (NULL when none). */
#pragma once

#include "vs-pane.h"

G_BEGIN_DECLS

#define VS_TYPE_DIAGNOSIS_PANE (vs_diagnosis_pane_get_type ())
G_DECLARE_FINAL_TYPE (VsDiagnosisPane, vs_diagnosis_pane, VS, DIAGNOSIS_PANE, VsPane)

/* Lists document's diagnosis (NULL clears): the "document" property. */
void vs_diagnosis_pane_set_document (VsDiagnosisPane *self, VsDocument *document);

/* Whether it says "Diagnosing…": the document's diagnosis is still being
 * read (tests). */
gboolean vs_diagnosis_pane_is_waiting (VsDiagnosisPane *self);

/* The number of findings listed (tests). */
guint vs_diagnosis_pane_get_n_findings (VsDiagnosisPane *self);

/* Activates the finding at index, as its button does (tests).  Returns
 * FALSE when there is no such finding. */
gboolean vs_diagnosis_pane_activate (VsDiagnosisPane *self, guint index);

/* A finding's title in words ("Memory grows every iteration"); static. */
const char *vs_finding_title (VsFindingKind kind);

G_END_DECLS

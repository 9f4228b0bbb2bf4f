/* SPDX-License-Identifier: MIT */
/* test-diagnosis-load.c — a trace is loaded in two phases: shown first,
 * diagnosed after, in a real window.
 *
 * Proves that:
 * - when a document is shown its diagnosis is not known yet and the
 *   Diagnosis pane says "Diagnosing…" and nothing else; that state is then
 *   replaced by the findings, those of vs_diagnose on the file opened
 *   anew, and each device's worst fragmentation is vs_fragmentation_worst's;
 * - the pane never says "No problem found" except for a document diagnosed
 *   with no finding (so never for a trace with findings);
 * - opening another trace while the first is being diagnosed shows the
 *   second's diagnosis, never the first's;
 * - a document closed while it is being diagnosed is freed at once: the
 *   diagnosis being read holds no reference to it, and its end finds it
 *   gone.
 *
 * Environment: VS_DATA (tests/data).
 */
#include "vs-test-wait.h"
#include <adwaita.h>
#include <string.h>

#include "vs-diagnosis-pane.h"
#include "vs-test-window.h"
#include "vs-window-private.h"

#define WAIT_US (60 * G_USEC_PER_SEC)
#define wait_until(done, data) vs_test_wait_until ((done), (data), WAIT_US)

static VsWindow *window;
static VsDiagnosisPane *pane;

/* What the pane and the documents showed along a load. */
static guint shown;           /* documents shown */
static guint shown_waiting;   /* of those, shown with the pane waiting and no diagnosis */
static guint no_problem;      /* times the pane said "No problem found" */
static guint no_problem_bad;  /* of those, said of a document not diagnosed, or with findings */
static VsDocument *first_doc; /* a weak pointer: the document shown first */
static GFile *then_open;      /* opened as soon as a document is shown (once) */

static VsSession *
session (void)
{
  return vs_window_get_session (window);
}

static gboolean
open_next (gpointer data)
{
  g_autoptr (GFile) file = g_steal_pointer (&then_open);

  vs_window_open (window, file);
  return G_SOURCE_REMOVE;
}

/* The session's document changed: the window has just shown it. */
static void
on_document (VsSession *s, GParamSpec *pspec, gpointer data)
{
  VsDocument *doc = vs_session_get_document (s);

  if (doc == NULL)
    return;
  shown++;
  if (vs_diagnosis_pane_is_waiting (pane) && !vs_document_is_diagnosed (doc)
      && vs_document_get_diagnosis (doc) == NULL && vs_diagnosis_pane_get_n_findings (pane) == 0)
    shown_waiting++;
  if (first_doc == NULL)
    g_set_weak_pointer (&first_doc, doc);
  if (then_open != NULL)
    g_idle_add (open_next, NULL);
}

/* A label of the pane changed: "No problem found" only of a document
 * diagnosed with no finding. */
static void
on_label (GtkLabel *label, GParamSpec *pspec, gpointer data)
{
  VsDocument *doc = vs_session_get_document (session ());

  if (strstr (gtk_label_get_text (label), "No problem found") == NULL)
    return;
  no_problem++;
  if (doc == NULL || !vs_document_is_diagnosed (doc) || vs_document_get_diagnosis (doc) == NULL
      || vs_document_get_diagnosis (doc)->findings->len > 0)
    no_problem_bad++;
}

static void
watch_labels (GtkWidget *w)
{
  for (GtkWidget *c = gtk_widget_get_first_child (w); c; c = gtk_widget_get_next_sibling (c))
    {
      if (GTK_IS_LABEL (c))
        g_signal_connect (c, "notify::label", G_CALLBACK (on_label), NULL);
      watch_labels (c);
    }
}

static void
reset_counts (void)
{
  shown = shown_waiting = no_problem = no_problem_bad = 0;
  g_clear_weak_pointer (&first_doc);
}

static gboolean
settled_on (gpointer data)
{
  VsDocument *doc = vs_session_get_document (session ());

  return doc != NULL && vs_window_get_settled (window)
         && g_file_equal (vs_document_get_file (doc), data);
}

static gboolean
freed (gpointer data)
{
  return first_doc == NULL;
}

static char *
data_path (const char *name)
{
  return g_build_filename (g_getenv ("VS_DATA"), "diagnose", name, NULL);
}

/* The findings vs_diagnose gives path opened anew. */
static VsDiagnosis *
expected_diagnosis (const char *path, VsTrace **trace)
{
  g_autoptr (GError) error = NULL;
  VsDiagnosis *d;

  *trace = vs_trace_open (path, &error);
  g_assert_no_error (error);
  d = vs_diagnose (*trace, 0, &error);
  g_assert_no_error (error);
  return d;
}

/* A trace with findings (fragmentation and a failure): "Diagnosing…"
 * first, then exactly the analyzer's findings and worst fragmentation. */
static void
test_findings_follow (void)
{
  g_autofree char *path = data_path ("torch-frag-mixed.db");
  g_autoptr (GFile) file = g_file_new_for_path (path);
  g_autoptr (VsTrace) trace = NULL;
  g_autoptr (VsDiagnosis) expected = expected_diagnosis (path, &trace);
  VsDocument *doc;
  GPtrArray *devices;
  gboolean hurt = FALSE;

  g_assert_cmpuint (expected->findings->len, >, 0);
  reset_counts ();
  vs_window_open (window, file);
  g_assert_true (wait_until (settled_on, file));
  doc = vs_session_get_document (session ());
  /* Shown once, waiting for its diagnosis; then the findings. */
  g_assert_cmpuint (shown, ==, 1);
  g_assert_cmpuint (shown_waiting, ==, 1);
  g_assert_true (vs_document_is_diagnosed (doc));
  g_assert_null (vs_document_get_diagnosis_error (doc));
  g_assert_false (vs_diagnosis_pane_is_waiting (pane));
  g_assert_cmpuint (vs_diagnosis_pane_get_n_findings (pane), ==, expected->findings->len);
  for (guint i = 0; i < expected->findings->len; i++)
    {
      const VsFinding *e = g_ptr_array_index (expected->findings, i);
      const VsFinding *f = g_ptr_array_index (vs_document_get_diagnosis (doc)->findings, i);

      g_assert_cmpint (f->kind, ==, e->kind);
      g_assert_cmpint (f->bytes, ==, e->bytes);
      g_assert_cmpstr (f->evidence, ==, e->evidence);
    }
  g_assert_cmpuint (no_problem, ==, 0);
  /* Each device's worst fragmentation, as the analyzer finds it. */
  devices = vs_document_get_devices (doc);
  for (guint i = 0; i < devices->len; i++)
    {
      const VsDocumentDevice *d = g_ptr_array_index (devices, i);
      g_autoptr (GError) error = NULL;
      VsFragmentation f;

      g_assert_true (vs_fragmentation_worst (trace, d->id, 0, &f, &error));
      g_assert_cmpint (d->worst_fragmentation_ns, ==,
                       f.seq > 0 && f.free_bytes > 0 ? f.time_ns : VS_UNKNOWN);
      hurt |= d->fragmentation_hurt;
    }
  /* The trace's fragmentation hurt (a finding says so). */
  g_assert_true (hurt);
}

/* Another trace opened as soon as the first is shown: the second,
 * healthy, says "No problem found" once diagnosed, and only then. */
static void
test_reopen_while_diagnosing (void)
{
  g_autoptr (GFile) first = vs_test_data_file ("diagnose/torch-frag-mixed.db");
  g_autofree char *healthy = data_path ("torch-healthy.db");
  g_autoptr (GFile) second = g_file_new_for_path (healthy);
  g_autoptr (VsTrace) trace = NULL;
  g_autoptr (VsDiagnosis) expected = expected_diagnosis (healthy, &trace);

  g_assert_cmpuint (expected->findings->len, ==, 0);
  /* Away from the trace of the test before. */
  reset_counts ();
  then_open = g_object_ref (second);
  vs_window_open (window, first);
  g_assert_true (wait_until (settled_on, second));
  g_assert_cmpuint (shown, ==, 2);
  g_assert_cmpuint (shown_waiting, ==, 2);
  g_assert_false (vs_diagnosis_pane_is_waiting (pane));
  g_assert_cmpuint (vs_diagnosis_pane_get_n_findings (pane), ==, 0);
  g_assert_cmpuint (no_problem, >=, 1);
  g_assert_cmpuint (no_problem_bad, ==, 0);
}

static gboolean
never (gpointer data)
{
  return FALSE;
}

/* A document closed while its diagnosis is read is freed at once. */
static void
test_close_while_diagnosing (void)
{
  g_autofree char *path = data_path ("torch-frag-mixed.db");
  VsDocument *doc = vs_test_document_load (path);

  /* Delivered without its diagnosis, which it reads when asked. */
  g_assert_false (vs_document_is_diagnosed (doc));
  g_assert_null (vs_document_get_diagnosis (doc));
  vs_document_diagnose (doc);
  g_assert_false (vs_document_is_diagnosed (doc));
  g_set_weak_pointer (&first_doc, doc);
  g_object_unref (doc);
  g_assert_true (freed (NULL));
  /* The worker's end, on the main loop, finds nothing to fill. */
  vs_test_wait_until (never, NULL, 2 * G_USEC_PER_SEC);
}

int
main (int argc, char **argv)
{
  vs_test_home_enter ("vs-diagnosis-load-XXXXXX");
  g_test_init (&argc, &argv, NULL);
  window = vs_test_window_new (1024, 768);
  pane = VS_DIAGNOSIS_PANE (adw_view_stack_get_child_by_name (window->pane_stack, "diagnosis"));
  g_assert_nonnull (pane);
  watch_labels (GTK_WIDGET (pane));
  g_signal_connect (session (), "notify::document", G_CALLBACK (on_document), NULL);

  g_test_add_func ("/diagnosis-load/findings-follow", test_findings_follow);
  g_test_add_func ("/diagnosis-load/reopen-while-diagnosing", test_reopen_while_diagnosing);
  g_test_add_func ("/diagnosis-load/close-while-diagnosing", test_close_while_diagnosing);
  return vs_test_window_finish (g_test_run ());
}

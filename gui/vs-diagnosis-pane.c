/* SPDX-License-Identifier: MIT */
/* vs-diagnosis-pane.c — the findings of the trace and each device's peak.
 *
 * Everything shown is the analyzer's vs_diagnose(), which the document
 * reads after the trace is shown (vs_document_diagnose): until it is
 * known the pane says "Diagnosing…" and nothing else.  Then one expander row per finding, its title in words and the
 * finding's fixed name, and inside it the evidence, the remedy and the
 * expected saving; a locate button asks the window to show the finding's
 * instant and site ("finding-activated").  Below, one row per device: its
 * peaks, the bytes by role and the largest user sites at the peak of
 * allocated memory.
 */
#include "vs-diagnosis-pane.h"

#include <adwaita.h>
#include <glib/gi18n.h>

#include "vs-detail-row.h"

#include "vs-document.h"

struct _VsDiagnosisPane
{
  VsPane parent_instance;

  VsDocument *document;
  gulong diagnosed_handler; /* on document's notify::diagnosed */

  GtkWidget *waiting;
  GtkSpinner *spinner;
  GtkLabel *headline;
  GtkWidget *peak_heading;
  GtkListBox *findings_box;
  GtkListBox *devices_box;
  guint n_findings;
};

enum
{
  FINDING_ACTIVATED,
  N_SIGNALS
};
static guint signals[N_SIGNALS];

enum
{
  PROP_0,
  PROP_DOCUMENT,
  N_PROPS
};
static GParamSpec *props[N_PROPS];

G_DEFINE_FINAL_TYPE (VsDiagnosisPane, vs_diagnosis_pane, VS_TYPE_PANE)

/* See vs-diagnosis-pane.h. */
const char *
vs_finding_title (VsFindingKind kind)
{
  switch (kind)
    {
    case VS_FINDING_OOM_DEVICE_FULL:
      return _("Out of memory: the device was full");
    case VS_FINDING_OOM_ALLOCATOR_LIMIT:
      return _("Out of memory: the allocator’s limit refused");
    case VS_FINDING_OOM_FRAGMENTATION:
      return _("Out of memory: free memory too fragmented");
    case VS_FINDING_FRAGMENTATION:
      return _("Fragmentation at the peak");
    case VS_FINDING_GROWTH_PER_ITERATION:
      return _("Memory grows every iteration");
    case VS_FINDING_LEAK_AT_EXIT:
      return _("Memory still allocated at exit");
    case VS_FINDING_OUTSIDE_ALLOCATOR:
      return _("Memory held outside the allocator");
    case VS_FINDING_OTHER_PROCESS:
      return _("Memory used by other processes");
    case VS_FINDING_FORWARD_WITHOUT_BACKWARD:
      return _("Forward pass kept for no backward pass");
    case VS_N_FINDINGS:
    default:
      g_assert_not_reached ();
    }
}

static gint64
device_idx (VsDocument *doc, gint64 device_id)
{
  GPtrArray *devices = vs_document_get_devices (doc);

  for (guint i = 0; i < devices->len; i++)
    {
      const VsDocumentDevice *d = g_ptr_array_index (devices, i);
      if (d->id == device_id)
        return d->idx;
    }
  return -1;
}

/* A heading over body text inside an expander row: what the user reads
 * and acts on, not a dim caption. */
static void
add_detail (AdwExpanderRow *row, const char *title, const char *text, const char *name)
{
  adw_expander_row_add_row (row, vs_detail_row_new (title, text, name));
}

static void
on_locate_clicked (GtkButton *button, VsDiagnosisPane *self)
{
  /* The button keeps index + 1. */
  vs_diagnosis_pane_activate (
      self, GPOINTER_TO_UINT (g_object_get_data (G_OBJECT (button), "index")) - 1);
}

static GtkWidget *
make_finding_row (VsDiagnosisPane *self, const VsFinding *f, guint index)
{
  GtkWidget *row = adw_expander_row_new ();
  g_autoptr (GString) sub = g_string_new (vs_finding_name (f->kind));
  g_autofree char *bytes = vs_format_bytes (f->bytes);
  gint64 idx = device_idx (self->document, f->device_id);

  g_string_append_printf (sub, " · %s", bytes);
  if (f->count != VS_UNKNOWN && f->run_count != VS_UNKNOWN)
    g_string_append_printf (sub, _(" · ×%" G_GINT64_FORMAT " of %" G_GINT64_FORMAT " in the run"),
                            f->count, f->run_count);
  else if (f->count != VS_UNKNOWN && f->count > 1)
    g_string_append_printf (sub, " · ×%" G_GINT64_FORMAT, f->count);
  if (idx >= 0)
    g_string_append_printf (sub, _(" · GPU %" G_GINT64_FORMAT), idx);
  if (f->site != NULL)
    g_string_append_printf (sub, " · %s", f->site);
  {
    g_autofree char *esc_t = g_markup_escape_text (vs_finding_title (f->kind), -1);
    g_autofree char *esc_s = g_markup_escape_text (sub->str, -1);

    adw_preferences_row_set_title (ADW_PREFERENCES_ROW (row), esc_t);
    adw_expander_row_set_subtitle (ADW_EXPANDER_ROW (row), esc_s);
  }
  {
    /* Failures in red, the rest in the warning colour: the icon only, the
     * text stays readable. */
    gboolean failure = f->kind <= VS_FINDING_OOM_FRAGMENTATION;
    GtkWidget *icon = gtk_image_new_from_icon_name (failure ? "dialog-error-symbolic"
                                                            : "dialog-warning-symbolic");

    gtk_widget_add_css_class (icon, failure ? "error" : "warning");
    adw_expander_row_add_prefix (ADW_EXPANDER_ROW (row), icon);
  }
  if (f->time_ns != VS_UNKNOWN || f->site != NULL)
    {
      GtkWidget *show = gtk_button_new_from_icon_name ("find-location-symbolic");

      g_object_set_data (G_OBJECT (show), "index", GUINT_TO_POINTER (index + 1));
      gtk_widget_set_tooltip_text (show, _("Show its instant on the timeline and its site in "
                                           "Attribution"));
      gtk_widget_set_valign (show, GTK_ALIGN_CENTER);
      gtk_widget_add_css_class (show, "flat");
      g_signal_connect (show, "clicked", G_CALLBACK (on_locate_clicked), self);
      adw_expander_row_add_action (ADW_EXPANDER_ROW (row), show);
    }
  /* Open: the answer is the evidence and the remedy. */
  adw_expander_row_set_expanded (ADW_EXPANDER_ROW (row), TRUE);
  add_detail (ADW_EXPANDER_ROW (row), _("Evidence"), f->evidence, "evidence");
  if (f->remedy != NULL)
    add_detail (ADW_EXPANDER_ROW (row), _("Remedy"), f->remedy, "remedy");
  if (f->saving_bytes != VS_UNKNOWN)
    {
      g_autofree char *saving = vs_format_bytes (f->saving_bytes);
      add_detail (ADW_EXPANDER_ROW (row), _("Expected saving"), saving, "saving");
    }
  return row;
}

/* Each device's peak: peaks, bytes by role, largest user sites and how to
 * lower the peak. */
static GtkWidget *
make_device_row (VsDiagnosisPane *self, const VsDeviceDiagnosis *dd, gboolean expanded)
{
  GtkWidget *row = adw_expander_row_new ();
  g_autofree char *alloc = vs_format_bytes (dd->all.peak_allocated_bytes);
  g_autofree char *res = vs_format_bytes (dd->all.peak_reserved_bytes);
  g_autofree char *title = NULL;
  g_autofree char *sub = NULL;
  g_autoptr (GString) roles = g_string_new (NULL);
  g_autoptr (GString) sites = g_string_new (NULL);

  title = dd->device->name != NULL ? g_strdup_printf (_("GPU %" G_GINT64_FORMAT " · %s"),
                                                      dd->device->idx, dd->device->name)
                                   : g_strdup_printf (_("GPU %" G_GINT64_FORMAT), dd->device->idx);
  sub = g_strdup_printf (_("peak allocated %s · peak reserved %s"), alloc, res);
  {
    g_autofree char *esc_t = g_markup_escape_text (title, -1);
    g_autofree char *esc_s = g_markup_escape_text (sub, -1);

    adw_preferences_row_set_title (ADW_PREFERENCES_ROW (row), esc_t);
    adw_expander_row_set_subtitle (ADW_EXPANDER_ROW (row), esc_s);
  }
  for (guint r = 0; r < VS_N_ROLES; r++)
    if (dd->roles.bytes[r] > 0)
      {
        g_autofree char *b = vs_format_bytes (dd->roles.bytes[r]);
        g_string_append_printf (roles, "%s%s %s", roles->len ? " · " : "", vs_role_name (r), b);
      }
  if (roles->len > 0)
    add_detail (ADW_EXPANDER_ROW (row), _("By role"), roles->str, "roles");
  for (guint i = 0; dd->sites != NULL && i < dd->sites->len && i < 5; i++)
    {
      const VsGroup *g = &g_array_index (dd->sites, VsGroup, i);
      g_autofree char *b = vs_format_bytes (g->bytes);

      g_string_append_printf (sites, "%s%s  %s", sites->len ? "\n" : "", b,
                              g->site != NULL && *g->site ? g->site : _("(no stack)"));
    }
  if (sites->len > 0)
    add_detail (ADW_EXPANDER_ROW (row), _("Largest user sites"), sites->str, "sites");
  if (dd->lower_peak != NULL)
    add_detail (ADW_EXPANDER_ROW (row), _("To lower the peak"), dd->lower_peak, "lower-peak");
  adw_expander_row_set_expanded (ADW_EXPANDER_ROW (row), expanded);
  return row;
}

static void
clear_box (GtkListBox *box)
{
  GtkWidget *child;

  while ((child = gtk_widget_get_first_child (GTK_WIDGET (box))))
    gtk_list_box_remove (box, child);
}

static void
vs_diagnosis_pane_get_property (GObject *object, guint prop_id, GValue *value, GParamSpec *pspec)
{
  VsDiagnosisPane *self = VS_DIAGNOSIS_PANE (object);

  switch (prop_id)
    {
    case PROP_DOCUMENT:
      g_value_set_object (value, self->document);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
vs_diagnosis_pane_set_property (GObject *object, guint prop_id, const GValue *value,
                                GParamSpec *pspec)
{
  VsDiagnosisPane *self = VS_DIAGNOSIS_PANE (object);

  switch (prop_id)
    {
    case PROP_DOCUMENT:
      vs_diagnosis_pane_set_document (self, g_value_get_object (value));
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
vs_diagnosis_pane_dispose (GObject *object)
{
  VsDiagnosisPane *self = VS_DIAGNOSIS_PANE (object);

  if (self->document != NULL)
    g_clear_signal_handler (&self->diagnosed_handler, self->document);
  g_clear_object (&self->document);
  gtk_widget_dispose_template (GTK_WIDGET (self), VS_TYPE_DIAGNOSIS_PANE);
  G_OBJECT_CLASS (vs_diagnosis_pane_parent_class)->dispose (object);
}

static void
vs_diagnosis_pane_class_init (VsDiagnosisPaneClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  object_class->get_property = vs_diagnosis_pane_get_property;
  object_class->set_property = vs_diagnosis_pane_set_property;
  object_class->dispose = vs_diagnosis_pane_dispose;
  /* The document whose diagnosis is listed; setting it (even the same
   * one, read again) lists it anew. */
  props[PROP_DOCUMENT]
      = g_param_spec_object ("document", NULL, NULL, VS_TYPE_DOCUMENT,
                             G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  g_object_class_install_properties (object_class, N_PROPS, props);

  gtk_widget_class_set_template_from_resource (widget_class,
                                               "/org/vramscope/View/vs-diagnosis-pane.ui");
  gtk_widget_class_bind_template_child (widget_class, VsDiagnosisPane, waiting);
  gtk_widget_class_bind_template_child (widget_class, VsDiagnosisPane, spinner);
  gtk_widget_class_bind_template_child (widget_class, VsDiagnosisPane, headline);
  gtk_widget_class_bind_template_child (widget_class, VsDiagnosisPane, peak_heading);
  gtk_widget_class_bind_template_child (widget_class, VsDiagnosisPane, findings_box);
  gtk_widget_class_bind_template_child (widget_class, VsDiagnosisPane, devices_box);
  /* The user asked to see a finding: its device, instant (VS_UNKNOWN if
   * none) and user site (NULL if none). */
  signals[FINDING_ACTIVATED]
      = g_signal_new ("finding-activated", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST, 0, NULL,
                      NULL, NULL, G_TYPE_NONE, 3, G_TYPE_INT64, G_TYPE_INT64, G_TYPE_STRING);
}

static void
vs_diagnosis_pane_init (VsDiagnosisPane *self)
{
  gtk_widget_init_template (GTK_WIDGET (self));
}

/* Shows "Diagnosing…" alone while the document's diagnosis is not
 * known: no finding and no "No problem found" before it is. */
static void
show_waiting (VsDiagnosisPane *self, gboolean waiting)
{
  gtk_widget_set_visible (self->waiting, waiting);
  gtk_spinner_set_spinning (self->spinner, waiting);
  gtk_widget_set_visible (GTK_WIDGET (self->headline), !waiting);
  gtk_widget_set_visible (self->peak_heading, !waiting);
  gtk_widget_set_visible (GTK_WIDGET (self->devices_box), !waiting);
  if (waiting)
    gtk_widget_set_visible (GTK_WIDGET (self->findings_box), FALSE);
}

/* Lists the document's diagnosis anew. */
static void
update (VsDiagnosisPane *self)
{
  VsDocument *document = self->document;
  const VsDiagnosis *diagnosis;

  g_assert (self->findings_box != NULL); /* the template is built */
  clear_box (self->findings_box);
  clear_box (self->devices_box);
  self->n_findings = 0;
  show_waiting (self, document != NULL && !vs_document_is_diagnosed (document));
  if (document != NULL && vs_document_get_diagnosis_error (document) != NULL)
    {
      g_autofree char *text = g_strdup_printf (_("The diagnosis failed: %s"),
                                               vs_document_get_diagnosis_error (document));
      gtk_label_set_text (self->headline, text);
      gtk_widget_set_visible (self->peak_heading, FALSE);
      return;
    }
  diagnosis = document != NULL ? vs_document_get_diagnosis (document) : NULL;
  if (diagnosis == NULL)
    {
      gtk_label_set_text (self->headline, "");
      return;
    }
  for (guint i = 0; i < diagnosis->findings->len; i++)
    {
      const VsFinding *f = g_ptr_array_index (diagnosis->findings, i);

      gtk_list_box_append (self->findings_box, make_finding_row (self, f, i));
      self->n_findings++;
    }
  for (guint i = 0; i < diagnosis->devices->len; i++)
    {
      const VsDeviceDiagnosis *dd = g_ptr_array_index (diagnosis->devices, i);

      if (dd != NULL && dd->device != NULL)
        gtk_list_box_append (self->devices_box,
                             make_device_row (self, dd, diagnosis->findings->len == 0));
    }
  gtk_widget_set_visible (GTK_WIDGET (self->findings_box), self->n_findings > 0);
  if (self->n_findings == 0)
    gtk_label_set_text (self->headline,
                        _("No problem found: no failure, no growth per iteration, no leak, "
                          "no fragmentation or memory outside the allocator that matters."));
  else
    {
      g_autofree char *text
          = g_strdup_printf (g_dngettext (NULL, "%u finding, the most severe first",
                                          "%u findings, the most severe first", self->n_findings),
                             self->n_findings);
      gtk_label_set_text (self->headline, text);
    }
}

static void
on_diagnosed (VsDocument *document, GParamSpec *pspec, VsDiagnosisPane *self)
{
  update (self);
}

/* See vs-diagnosis-pane.h. */
void
vs_diagnosis_pane_set_document (VsDiagnosisPane *self, VsDocument *document)
{
  g_return_if_fail (VS_IS_DIAGNOSIS_PANE (self));
  g_return_if_fail (document == NULL || VS_IS_DOCUMENT (document));

  if (self->document != document)
    {
      if (self->document != NULL)
        g_clear_signal_handler (&self->diagnosed_handler, self->document);
      g_set_object (&self->document, document);
      if (document != NULL)
        self->diagnosed_handler
            = g_signal_connect (document, "notify::diagnosed", G_CALLBACK (on_diagnosed), self);
      g_object_notify_by_pspec (G_OBJECT (self), props[PROP_DOCUMENT]);
    }
  update (self);
}

/* See vs-diagnosis-pane.h. */
gboolean
vs_diagnosis_pane_is_waiting (VsDiagnosisPane *self)
{
  g_return_val_if_fail (VS_IS_DIAGNOSIS_PANE (self), FALSE);
  return gtk_widget_get_visible (self->waiting);
}

/* See vs-diagnosis-pane.h. */
guint
vs_diagnosis_pane_get_n_findings (VsDiagnosisPane *self)
{
  g_return_val_if_fail (VS_IS_DIAGNOSIS_PANE (self), 0);
  return self->n_findings;
}

/* See vs-diagnosis-pane.h. */
gboolean
vs_diagnosis_pane_activate (VsDiagnosisPane *self, guint index)
{
  const VsDiagnosis *diagnosis;
  const VsFinding *f;

  g_return_val_if_fail (VS_IS_DIAGNOSIS_PANE (self), FALSE);
  diagnosis = self->document != NULL ? vs_document_get_diagnosis (self->document) : NULL;
  if (diagnosis == NULL || index >= diagnosis->findings->len)
    return FALSE;
  f = g_ptr_array_index (diagnosis->findings, index);
  g_signal_emit (self, signals[FINDING_ACTIVATED], 0, f->device_id, f->time_ns, f->site);
  return TRUE;
}

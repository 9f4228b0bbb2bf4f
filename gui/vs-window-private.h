/* SPDX-License-Identifier: MIT */
/* vs-window-private.h — what the window's files share: its fields and the
 * functions its timeline and follow parts call.
 */
#pragma once

#include "vs-window.h"

#include "vs-allocations-pane.h"
#include "vs-attribution-pane.h"
#include "vs-compare-pane.h"
#include "vs-diagnosis-pane.h"
#include "vs-document.h"
#include "vs-flame-pane.h"
#include "vs-fragmentation-view.h"
#include "vs-memory-chart.h"
#include "vs-oom-pane.h"
#include "vs-query-slot.h"
#include "vs-session.h"
#include "vs-state-pane.h"

G_BEGIN_DECLS

/* One device's timeline and the query that keeps its data current. */
typedef struct
{
  VsMemoryChart *chart;
  gint64 device_id;
  VsQuerySlot query;
  guint width; /* plot width the last query was made for */
} VsChartSlot;

struct _VsWindow
{
  AdwApplicationWindow parent_instance;

  /* What is shown, shared with the panes (they bind its properties). */
  VsSession *session;

  /* Template children. */
  AdwWindowTitle *window_title;
  AdwToastOverlay *toast_overlay;
  GtkMenuButton *recent_button;
  GtkWidget *zoom_box;
  GtkWidget *follow_button;
  GtkStack *main_stack;
  GtkLabel *loading_label;
  GtkProgressBar *progress_bar;
  AdwStatusPage *error_page;
  GtkPaned *paned;
  GtkBox *charts_box;
  GtkLabel *instant_label;
  AdwViewStack *pane_stack;
  AdwViewStackPage *oom_page;
  VsAttributionPane *attribution_pane;
  VsStatePane *state_pane;
  GtkMenuButton *whatif_button;
  GtkBox *whatif_presets;
  GtkEntry *whatif_entry;
  GtkLabel *whatif_error;
  GtkLabel *whatif_label;
  GtkProgressBar *whatif_progress;
  GtkWidget *whatif_cancel;
  GtkWidget *whatif_clear;

  /* The what-if replay running (NULL: none); whatif_serial drops the
   * result of one replaced by a newer choice. */
  GCancellable *whatif_cancellable;
  guint whatif_serial;
  char *whatif_pending; /* chosen before a trace was shown (vs_window_choose_whatif) */
  gint64 whatif_pending_limit;

  /* Loading and the timelines' queries.  generation changes with every
   * document, so late results for an earlier one are dropped. */
  GCancellable *cancellable;
  guint generation;
  /* The load in progress: a newer open cancels it, and load_serial drops
   * a result that arrives after that.  The shown document stays until a
   * load succeeds. */
  GCancellable *load_cancellable;
  guint load_serial;
  GArray *slots;        /* VsChartSlot */
  gboolean fit_pending; /* initial view not yet fitted to the activity */

  /* "settled": a trace is shown and nothing is being fetched.  "error":
   * the last failure, NULL when none. */
  gboolean settled;
  char *error;

  /* The comparison shown (NULL: none; vs-window-compare.c) and its pane;
   * the text of the last one made (NULL until one was); comparing counts
   * while one is made; a file chosen before a trace was shown. */
  VsComparison *comparison;
  AdwViewStackPage *compare_page;
  VsComparePane *compare_pane;
  char *comparison_text;
  guint comparing;
  GCancellable *compare_cancellable;
  GFile *compare_pending;

  /* Following a recording ("following"). */
  guint follow_source;
  gboolean refresh_in_flight;
};

/* Builds one timeline per device of the session's document. */
void vs_window_add_timelines (VsWindow *self);
/* Removes every timeline. */
void vs_window_clear_timelines (VsWindow *self);
/* Fetches what each timeline misses for the visible range. */
void vs_window_request_all_charts (VsWindow *self);
/* Marks every timeline's data stale (the document was read again) and
 * gives the charts the document's new duration. */
void vs_window_invalidate_timelines (VsWindow *self);
/* Makes the timelines fetch their data when the session's visible range
 * changes (once, at init; each timeline binds the session's visible range,
 * selection and instant when it is added). */
void vs_window_init_timelines (VsWindow *self);
/* Recomputes "settled". */
void vs_window_update_settled (VsWindow *self);
/* Shows the number of failed allocations on the pane switcher. */
void vs_window_update_oom_badge (VsWindow *self);
/* A load error: the error page, and the "error" property. */
void vs_window_show_error (VsWindow *self, const char *message);
/* Sets the "error" property (the trace stays shown). */
void vs_window_set_error (VsWindow *self, const char *message);
/* Starts or stops following the recording ("following"). */
void vs_window_set_following (VsWindow *self, gboolean on);
/* Installs the what-if actions and binds its template children. */
void vs_window_whatif_class_init (GtkWidgetClass *widget_class);
/* Stops any replay and offers the what-if settings for the session's
 * document (none: the control is insensitive and says why). */
void vs_window_whatif_reset (VsWindow *self);
/* The document's diagnosis was read: the presets it adds are offered. */
void vs_window_whatif_diagnosed (VsWindow *self);

/* Installs the comparison's actions (vs-window-compare.c). */
void vs_window_compare_class_init (GtkWidgetClass *widget_class);
/* Ends any comparison (the document changes). */
void vs_window_compare_clear (VsWindow *self);
/* Starts the comparison chosen before the trace was shown, if any. */
void vs_window_compare_start_pending (VsWindow *self);

/* A what-if asked for (a replay, a prediction at another batch): the
 * window, the document it was asked of, the legend of its lines, and the
 * window's whatif_serial then (a replay's; 0 for a prediction). */
typedef struct
{
  VsWindow *self;
  guint serial;
  VsDocument *document;
  char *legend;
} VsWhatifRequest;

/* A request of self (referenced) for document (referenced), taking
 * legend; serial 0. */
VsWhatifRequest *vs_whatif_request_new (VsWindow *self, VsDocument *document, char *legend);
/* Frees a request of vs_whatif_request_new(). */
void vs_whatif_request_free (VsWhatifRequest *r);

/* Appends the batch field to the What If… popover (vs-window-whatif-batch.c). */
void vs_window_whatif_add_batch (VsWindow *self);
/* Whether a replay is running. */
gboolean vs_window_whatif_is_running (VsWindow *self);

G_END_DECLS

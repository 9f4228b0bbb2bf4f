/* vs-window-private.h — what the window's files share: its fields and the
 * functions its screenshot and follow parts call.
 */
#pragma once

#include "vs-window.h"

#include "vs-allocations-pane.h"
#include "vs-attribution-pane.h"
#include "vs-document.h"
#include "vs-flame-graph.h"
#include "vs-fragmentation-view.h"
#include "vs-memory-chart.h"
#include "vs-oom-pane.h"

G_BEGIN_DECLS

typedef struct
{
  VsMemoryChart *chart;
  gint64 device_id;
  gboolean in_flight;
  gboolean dirty;
  gboolean loaded; /* has received data for the current document */
  guint width;     /* plot width the last query was made for */
} ChartSlot;

struct _VsWindow
{
  AdwApplicationWindow parent_instance;

  /* Template children. */
  AdwWindowTitle *window_title;
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
  VsFlameGraph *flame_graph;
  VsAllocationsPane *allocations_pane;
  VsFragmentationView *fragmentation_view;
  VsOomPane *oom_pane;

  /* The open trace.  generation changes with every document, so late
   * results for an earlier one are dropped. */
  VsDocument *doc;
  GCancellable *cancellable;
  guint generation;
  GArray *slots;        /* ChartSlot */
  gint64 v0, v1;        /* shared visible range */
  gboolean fit_pending; /* initial view not yet fitted to the activity */

  /* The selected instant (< 0: the peak) on instant_device, and range. */
  gint64 instant_t;
  gint64 instant_device;
  gint64 range_a, range_b;
  gboolean instant_in_flight, instant_dirty, instant_loaded;
  VsInstant *instant;

  /* Screenshot mode. */
  char *screenshot_path;
  gboolean screenshot_scheduled;
  guint screenshot_tries;
  int screenshot_width, screenshot_height; /* 0: as the window is */
  guint resize_tries;
  gboolean failed;

  /* Following a recording. */
  guint follow_source;
  gboolean refresh_in_flight;
};

/* Applies the visible range [v0, v1) to every timeline and fetches the
 * data they miss. */
void vs_window_set_view (VsWindow *self, gint64 v0, gint64 v1);
/* Fetches what each timeline misses for the current view. */
void vs_window_request_all_charts (VsWindow *self);
/* Fetches the state at the selected instant (or range). */
void vs_window_request_instant (VsWindow *self);
/* Shows the number of failed allocations on the pane switcher. */
void vs_window_update_oom_badge (VsWindow *self);
/* A load error: in the window, or on stderr and exit 1 when taking a
 * screenshot. */
void vs_window_show_error (VsWindow *self, const char *message);
/* Saves the screenshot after the next frame once everything is loaded
 * (screenshot mode only; does nothing otherwise). */
void vs_window_maybe_screenshot (VsWindow *self);
/* Starts or stops following the recording. */
void vs_window_set_following (VsWindow *self, gboolean on);

G_END_DECLS

/* SPDX-License-Identifier: MIT */
/* vs-state-pane.c — the Fragmentation pane: the segment map at the
 * selected instant, stepped event by event (see vs-state-pane.h).
 *
 * The events around the instant are loaded in a worker thread
 * (vs_alloc_steps_load: a span of replay steps with its checkpoints);
 * stepping inside the span computes the state on the main thread from the
 * nearest checkpoint (vs_alloc_steps_state), which takes a fraction of a
 * frame, and hands it to the view as an instant of its own.  Past either
 * end of the span the events around the current one are loaded again.
 * The event's stack is rendered in a worker (the trace's stack cache is
 * the document's, under its lock) and shown when it arrives.
 *
 * Each step moves the timelines' instant marker at once ("step-time")
 * and, once stepping pauses, selects the latest step's time in the
 * session, so that Attribution and the timelines follow it with one query
 * however many steps came before; the session's instant that
 * answers is recognised (the session still has the step's time selected)
 * and neither draws nor steps again: the state drawn stays the step's,
 * computed once.
 */
#include "vs-state-pane.h"

#include <glib/gi18n.h>

#include <adwaita.h>

#include "vs-document.h"
#include "vs-session.h"
#include "vs-time-format.h"

struct _VsStatePane
{
  GtkBox parent_instance;

  VsSession *session;
  VsInstant *instant; /* the session's */
  VsFragmentationView *view;
  GtkLabel *event_label;
  GtkLabel *stack_label;
  GtkWidget *stack_scroller;

  gboolean stepping;
  gboolean keep_stepping; /* vs_state_pane_start_stepping(): every instant is stepped */
  gboolean loading;
  VsDocument *steps_document; /* what steps were read from */
  gint64 steps_device;
  VsAllocSteps *steps;
  gint index;         /* event shown; -1: the state before the span's first */
  VsInstant *stepped; /* the state drawn while stepping */
  /* A step selects its event's time in the session (the timelines' marker
   * and Attribution follow); the instant that comes back for it is not
   * stepped again.  select_on_show: the next state shown comes from a
   * step; selected_device/_t: what the last step selected (t < 0: none).
   * While the user steps, only the latest step's time is selected, once
   * no step came for SELECT_DELAY_MS (select_source: that wait;
   * pending_device/_t: what it will select); the timelines' marker moves
   * at once through "step-time". */
  gboolean select_on_show;
  gint64 selected_device, selected_t;
  guint select_source;
  gint64 pending_device, pending_t, step_time;
  GCancellable *cancellable;       /* the load in flight */
  GCancellable *stack_cancellable; /* the stack in flight */
  /* The stack the label shows (0: none recorded; -1: another text) and
   * the one being read (-1: none): a step whose event has the same stack
   * leaves the label as it is, without a new layout. */
  gint64 shown_stack, pending_stack;
};

enum
{
  PROP_0,
  PROP_SESSION,
  PROP_INSTANT,
  PROP_LOADING,
  PROP_SELECTING,
  PROP_STEP_TIME,
  N_PROPS
};

/* How long stepping must pause before the session's instant follows. */
#define SELECT_DELAY_MS 150
static GParamSpec *props[N_PROPS];

G_DEFINE_FINAL_TYPE (VsStatePane, vs_state_pane, GTK_TYPE_BOX)

static void update_actions (VsStatePane *self);

/* ----------------------------------------------------------- the event -- */

static const char *
kind_label (int kind)
{
  switch (kind)
    {
    case VS_ALLOC_STEP_ALLOC:
      return _("Block allocated");
    case VS_ALLOC_STEP_FREE:
      return _("Block freed");
    case VS_ALLOC_STEP_SEGMENT_ALLOC:
      return _("Segment allocated");
    case VS_ALLOC_STEP_SEGMENT_FREE:
      return _("Segment freed");
    case VS_ALLOC_STEP_SEGMENT_MAP:
      return _("Segment mapped");
    case VS_ALLOC_STEP_SEGMENT_UNMAP:
      return _("Segment unmapped");
    case VS_ALLOC_STEP_FAILURE:
      return _("Request failed");
    default:
      return _("Allocator event");
    }
}

/* The event in one line: what, how large, where, when. */
static char *
describe_step (const VsAllocStep *s)
{
  g_autofree char *size = vs_format_bytes (s->bytes);
  g_autofree char *when = s->time_ns != VS_UNKNOWN ? vs_format_time (s->time_ns) : g_strdup ("");

  if (s->kind == VS_ALLOC_STEP_FAILURE)
    return g_strdup_printf (_("%s: %s requested · at %s"), kind_label (s->kind), size, when);
  if (s->block_bytes != VS_UNKNOWN && s->block_bytes != s->bytes)
    {
      g_autofree char *block = vs_format_bytes (s->block_bytes);
      return g_strdup_printf (
          _("%s: %s requested (block %s) at 0x%" G_GINT64_MODIFIER "x · at %s"),
          kind_label (s->kind), size, block, (guint64)s->address, when);
    }
  return g_strdup_printf (_("%s: %s at 0x%" G_GINT64_MODIFIER "x · at %s"), kind_label (s->kind),
                          size, (guint64)s->address, when);
}

/* The most library frames listed under the user's own. */
#define LIBRARY_FRAMES 12

/* A stack as text: the user's own frames first, then the others,
 * innermost first in each. */
static char *
stack_text (const VsStackInfo *st)
{
  g_autofree const VsFrameInfo **frames = vs_stack_dup_frames (st);
  GString *user = g_string_new (NULL), *other = g_string_new (NULL);
  guint n_other = 0, n_user = 0;
  GString *out = g_string_new (NULL);

  for (guint i = 0; frames != NULL && i < st->depth; i++)
    {
      if (frames[i]->user_code)
        {
          g_string_append_printf (user, "  %s\n", frames[i]->text);
          n_user++;
        }
      else if (n_other++ < LIBRARY_FRAMES)
        g_string_append_printf (other, "  %s\n", frames[i]->text);
    }
  if (n_user > 0)
    g_string_append_printf (out, "%s\n%s", _("Your code:"), user->str);
  if (n_other > 0)
    {
      g_string_append_printf (out, "%s\n%s", _("Libraries and runtime:"), other->str);
      if (n_other > LIBRARY_FRAMES)
        g_string_append_printf (out,
                                ngettext ("  … and %u more frame\n", "  … and %u more frames\n",
                                          n_other - LIBRARY_FRAMES),
                                n_other - LIBRARY_FRAMES);
    }
  g_string_free (user, TRUE);
  g_string_free (other, TRUE);
  if (out->len > 0 && out->str[out->len - 1] == '\n')
    g_string_truncate (out, out->len - 1);
  return g_string_free (out, FALSE);
}

static void
stack_thread (GTask *task, gpointer source, gpointer data, GCancellable *cancellable)
{
  VsDocument *doc = source;
  gint64 stack_id = GPOINTER_TO_SIZE (data);
  g_autoptr (GError) error = NULL;
  VsTrace *trace = vs_document_lock_trace (doc);
  const VsStackInfo *st = vs_stack_get (trace, stack_id, &error);
  char *text = st != NULL ? stack_text (st) : NULL;

  vs_document_unlock_trace (doc);
  if (text == NULL)
    g_task_return_error (task, g_steal_pointer (&error));
  else
    g_task_return_pointer (task, text, g_free);
}

static void
on_stack (GObject *source, GAsyncResult *result, gpointer data)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *text = g_task_propagate_pointer (G_TASK (result), &error);
  VsStatePane *self;

  if (g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
    return;
  self = VS_STATE_PANE (data);
  self->shown_stack = text != NULL ? self->pending_stack : -1;
  self->pending_stack = -1;
  if (text == NULL)
    gtk_label_set_text (self->stack_label, error->message);
  else
    gtk_label_set_text (self->stack_label,
                        *text ? text : _("The trace has no stack for this event."));
  gtk_widget_set_visible (self->stack_scroller, TRUE);
}

/* Forgets which stack the label shows (its events are no longer those
 * held) and any stack being read. */
static void
forget_stack (VsStatePane *self)
{
  g_cancellable_cancel (self->stack_cancellable);
  g_clear_object (&self->stack_cancellable);
  self->shown_stack = -1;
  self->pending_stack = -1;
}

/* Reads the stack of the event shown in a worker; the stack shown or
 * being read already is left as it is. */
static void
fetch_stack (VsStatePane *self, gint64 stack_id)
{
  g_autoptr (GTask) task = NULL;

  stack_id = MAX (0, stack_id);
  if (stack_id == self->pending_stack)
    return;
  g_cancellable_cancel (self->stack_cancellable);
  g_clear_object (&self->stack_cancellable);
  self->pending_stack = -1;
  if (stack_id == self->shown_stack)
    {
      gtk_widget_set_visible (self->stack_scroller, TRUE);
      return;
    }
  if (stack_id == 0)
    {
      gtk_label_set_text (self->stack_label, _("The trace has no stack for this event."));
      gtk_widget_set_visible (self->stack_scroller, TRUE);
      self->shown_stack = 0;
      return;
    }
  self->pending_stack = stack_id;
  self->stack_cancellable = g_cancellable_new ();
  task = g_task_new (self->steps_document, self->stack_cancellable, on_stack, self);
  g_task_set_task_data (task, GSIZE_TO_POINTER (stack_id), NULL);
  g_task_set_return_on_cancel (task, TRUE);
  g_task_run_in_thread (task, stack_thread);
}

/* ------------------------------------------------------------- showing -- */

/* The event's line, in full in its tooltip (the label is one line, cut
 * at the end when the pane is narrow). */
static void
set_event_text (VsStatePane *self, const char *text)
{
  gtk_label_set_text (self->event_label, text);
  gtk_widget_set_tooltip_text (GTK_WIDGET (self->event_label), *text ? text : NULL);
}

/* The instant the view draws for the state after event index. */
static VsInstant *
instant_of (VsStatePane *self, gint index)
{
  g_autoptr (VsAllocState) st = vs_alloc_steps_state (self->steps, index);
  VsInstant *in = vs_instant_new (G_OBJECT (self->steps_document));

  in->device_id = self->steps_device;
  in->seq = st->seq;
  in->time_ns = st->frag.time_ns;
  in->have_fragmentation = TRUE;
  in->frag = st->frag;
  g_array_unref (in->gaps);
  g_array_unref (in->segments);
  in->gaps = g_steal_pointer (&st->gaps);
  in->segments = g_steal_pointer (&st->segments);
  in->blocks = g_steal_pointer (&st->blocks);
  return in;
}

/* Scrolls the map so that the row holding address shows (rows are
 * placed at once; a row added by this very state may wait a frame). */
static void
reveal (VsStatePane *self, gint64 address)
{
  GtkWidget *scroller = gtk_widget_get_ancestor (GTK_WIDGET (self->view), GTK_TYPE_SCROLLED_WINDOW);
  GtkAdjustment *adj;
  double x, y, page, value;

  if (scroller == NULL || !vs_fragmentation_view_locate (self->view, address, &x, &y))
    return;
  adj = gtk_scrolled_window_get_vadjustment (GTK_SCROLLED_WINDOW (scroller));
  page = gtk_adjustment_get_page_size (adj);
  value = gtk_adjustment_get_value (adj);
  if (y - 24 < value || y + 24 > value + page)
    gtk_adjustment_set_value (adj, y - page / 2);
}

/* After a step: selects the event's time on its device in the session,
 * so that the timelines mark it and Attribution shows that instant (an
 * event of unknown time leaves the selection). */
static gboolean
on_select_due (gpointer data)
{
  VsStatePane *self = data;

  self->select_source = 0;
  self->selected_device = self->pending_device;
  self->selected_t = self->pending_t;
  vs_session_select_instant (self->session, self->selected_device, self->selected_t);
  g_object_notify_by_pspec (G_OBJECT (self), props[PROP_SELECTING]);
  return G_SOURCE_REMOVE;
}

/* Drops the selection a step left waiting, if any. */
static void
cancel_select (VsStatePane *self)
{
  if (self->select_source == 0)
    return;
  g_clear_handle_id (&self->select_source, g_source_remove);
  g_object_notify_by_pspec (G_OBJECT (self), props[PROP_SELECTING]);
}

/* After a step: marks the event's time at once ("step-time") and selects
 * it on its device in the session once stepping pauses (SELECT_DELAY_MS
 * with no further step), so that only the latest step's instant is
 * queried (an event of unknown time leaves the selection). */
static void
select_step_time (VsStatePane *self)
{
  gint64 t = self->stepped->time_ns;
  gboolean was_waiting = self->select_source != 0;

  if (self->session == NULL || t == VS_UNKNOWN || t < 0)
    return;
  self->pending_device = self->stepped->device_id;
  self->pending_t = t;
  if (self->step_time != t)
    {
      self->step_time = t;
      g_object_notify_by_pspec (G_OBJECT (self), props[PROP_STEP_TIME]);
    }
  g_clear_handle_id (&self->select_source, g_source_remove);
  self->select_source = g_timeout_add (SELECT_DELAY_MS, on_select_due, self);
  if (!was_waiting)
    g_object_notify_by_pspec (G_OBJECT (self), props[PROP_SELECTING]);
}

/* Whether instant is the session's answer to the last step's selection
 * (or to an earlier step's, still selected while the last one's query
 * waits): the session still has that time selected on that device. */
static gboolean
is_own_selection (VsStatePane *self, VsInstant *instant)
{
  const VsTimeSpan *range;

  if (instant == NULL || self->session == NULL || !self->stepping || self->selected_t < 0)
    return FALSE;
  range = vs_session_get_selection (self->session);
  return range->end <= range->begin
         && vs_session_get_device (self->session) == self->selected_device
         && vs_session_get_selected_time (self->session) == self->selected_t
         && instant->device_id == self->selected_device;
}

/* Draws the state after the current event and says what it was. */
static void
show_current (VsStatePane *self)
{
  g_clear_pointer (&self->stepped, vs_instant_unref);
  self->stepped = instant_of (self, self->index);
  vs_fragmentation_view_set_instant (self->view, self->stepped);
  if (self->select_on_show)
    {
      self->select_on_show = FALSE;
      select_step_time (self);
    }
  if (self->index >= 0)
    {
      const VsAllocStep *s = vs_alloc_steps_get (self->steps, (guint)self->index);
      g_autofree char *line = describe_step (s);

      set_event_text (self, line);
      vs_fragmentation_view_set_mark (self->view, s->address,
                                      s->kind == VS_ALLOC_STEP_FAILURE ? 0
                                      : s->block_bytes != VS_UNKNOWN   ? s->block_bytes
                                                                       : s->bytes);
      if (s->kind != VS_ALLOC_STEP_FAILURE)
        reveal (self, s->address);
      fetch_stack (self, s->stack_id);
    }
  else
    {
      set_event_text (self, vs_alloc_steps_get_n (self->steps) == 0
                                ? _("No allocator event on this device")
                                : _("Before the first allocator event: what was live when the "
                                    "trace began"));
      vs_fragmentation_view_set_mark (self->view, 0, 0);
      g_cancellable_cancel (self->stack_cancellable);
      g_clear_object (&self->stack_cancellable);
      self->pending_stack = -1;
      gtk_widget_set_visible (self->stack_scroller, FALSE);
    }
  update_actions (self);
}

/* Shows the selected instant, not stepping. */
static void
show_instant (VsStatePane *self)
{
  self->stepping = FALSE;
  g_cancellable_cancel (self->stack_cancellable);
  g_clear_object (&self->stack_cancellable);
  self->pending_stack = -1;
  g_clear_pointer (&self->stepped, vs_instant_unref);
  vs_fragmentation_view_set_mark (self->view, 0, 0);
  vs_fragmentation_view_set_instant (self->view, self->instant);
  set_event_text (self, self->instant != NULL
                            ? _("Step through the allocator’s events from the selected instant "
                                "with [ and ]")
                            : "");
  gtk_widget_set_visible (self->stack_scroller, FALSE);
  update_actions (self);
}

/* ------------------------------------------------------------- loading -- */

typedef struct
{
  VsDocument *document;
  gint64 device_id, seq;
} LoadData;

static void
load_data_free (gpointer p)
{
  LoadData *d = p;
  g_object_unref (d->document);
  g_free (d);
}

static void
load_thread (GTask *task, gpointer source, gpointer data, GCancellable *cancellable)
{
  LoadData *d = data;
  GError *error = NULL;
  VsTrace *trace = vs_document_lock_trace (d->document);
  VsAllocSteps *steps = vs_alloc_steps_load (trace, d->device_id, d->seq, 0, &error);

  vs_document_unlock_trace (d->document);
  if (steps == NULL)
    g_task_return_error (task, error);
  else
    g_task_return_pointer (task, steps, (GDestroyNotify)vs_alloc_steps_free);
}

static void load_around (VsStatePane *self, gint64 seq, int move);

/* Moves by delta from the event anchored at seq (found in the span just
 * loaded, or the one held), loading the next span when the move leaves
 * this one. */
static void
move_from (VsStatePane *self, gint64 seq, int move)
{
  gint n = (gint)vs_alloc_steps_get_n (self->steps);
  gint64 from, to;
  gint i = vs_alloc_steps_find (self->steps, seq) + move;

  vs_alloc_steps_get_span (self->steps, &from, &to);
  if (i < 0 && vs_alloc_steps_has_before (self->steps) && move < 0)
    {
      load_around (self, from, 0); /* the last event at or before `from` */
      return;
    }
  if (i >= n && vs_alloc_steps_has_after (self->steps) && move > 0)
    {
      load_around (self, to, 1);
      return;
    }
  self->index = CLAMP (i, vs_alloc_steps_has_before (self->steps) && n > 0 ? 0 : -1, n - 1);
  show_current (self);
}

static void
on_loaded (GObject *source, GAsyncResult *result, gpointer data)
{
  g_autoptr (GError) error = NULL;
  VsAllocSteps *steps = g_task_propagate_pointer (G_TASK (result), &error);
  LoadData *d = g_task_get_task_data (G_TASK (result));
  int move = GPOINTER_TO_INT (g_object_get_data (G_OBJECT (result), "move"));
  VsStatePane *self;

  if (g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
    {
      g_clear_pointer (&steps, vs_alloc_steps_free);
      return;
    }
  self = VS_STATE_PANE (data);
  g_clear_object (&self->cancellable);
  self->loading = FALSE;
  if (steps == NULL)
    {
      g_autofree char *line
          = g_strdup_printf (_("The allocator’s events could not be read: %s"), error->message);
      self->select_on_show = FALSE;
      show_instant (self);
      set_event_text (self, line);
    }
  else
    {
      g_clear_pointer (&self->steps, vs_alloc_steps_free);
      if (self->steps_document != d->document)
        forget_stack (self);
      g_set_object (&self->steps_document, d->document);
      self->steps_device = d->device_id;
      self->steps = steps;
      move_from (self, d->seq, move);
    }
  g_object_notify_by_pspec (G_OBJECT (self), props[PROP_LOADING]);
}

/* Loads the events around step seq of the stepped device, then moves by
 * move from the last event at or before seq. */
static void
load_around (VsStatePane *self, gint64 seq, int move)
{
  g_autoptr (GTask) task = NULL;
  LoadData *d;
  gboolean was_loading = self->loading;

  g_cancellable_cancel (self->cancellable);
  g_clear_object (&self->cancellable);
  self->cancellable = g_cancellable_new ();
  d = g_new0 (LoadData, 1);
  d->document = g_object_ref (VS_DOCUMENT (self->instant->document));
  d->device_id = self->instant->device_id;
  d->seq = seq;
  task = g_task_new (NULL, self->cancellable, on_loaded, self);
  g_task_set_task_data (task, d, load_data_free);
  g_task_set_return_on_cancel (task, TRUE);
  g_object_set_data (G_OBJECT (task), "move", GINT_TO_POINTER (move));
  self->loading = TRUE;
  update_actions (self);
  g_task_run_in_thread (task, load_thread);
  if (!was_loading)
    g_object_notify_by_pspec (G_OBJECT (self), props[PROP_LOADING]);
}

/* Whether the events held are those of the instant's document and device. */
static gboolean
steps_fit_instant (VsStatePane *self)
{
  return self->steps != NULL && self->instant != NULL
         && self->steps_document == VS_DOCUMENT (self->instant->document)
         && self->steps_device == self->instant->device_id;
}

/* Moves from (anchor seq, move) in the span held when it covers seq,
 * else after loading the span around it. */
static void
go (VsStatePane *self, gint64 seq, int move)
{
  gint64 from, to;

  if (steps_fit_instant (self))
    {
      vs_alloc_steps_get_span (self->steps, &from, &to);
      if ((seq > from || !vs_alloc_steps_has_before (self->steps)) && seq <= to)
        {
          move_from (self, seq, move);
          return;
        }
    }
  load_around (self, seq, move);
}

/* See vs-state-pane.h. */
void
vs_state_pane_step (VsStatePane *self, int delta)
{
  g_return_if_fail (VS_IS_STATE_PANE (self));
  if (self->instant == NULL || self->loading)
    return;
  self->select_on_show = TRUE;
  if (!self->stepping)
    {
      self->stepping = TRUE;
      go (self, self->instant->seq, delta);
      return;
    }
  if (self->index >= 0)
    {
      gint64 seq = vs_alloc_steps_get (self->steps, (guint)self->index)->seq;
      gint n = (gint)vs_alloc_steps_get_n (self->steps);
      gint i = self->index + delta;

      /* Inside the span: no search (failures share their step's seq). */
      if (i >= 0 && i < n)
        {
          self->index = i;
          show_current (self);
          return;
        }
      go (self, seq, delta);
      return;
    }
  {
    gint64 from, to;
    vs_alloc_steps_get_span (self->steps, &from, &to);
    go (self, from, delta < 0 ? 0 : delta);
  }
}

/* See vs-state-pane.h. */
void
vs_state_pane_start_stepping (VsStatePane *self)
{
  g_return_if_fail (VS_IS_STATE_PANE (self));
  self->keep_stepping = TRUE;
  self->select_on_show = FALSE; /* the instant is already the selection */
  if (self->instant == NULL)
    return; /* once the instant comes */
  self->stepping = TRUE;
  go (self, self->instant->seq, 0);
}

/* ------------------------------------------------------------- actions -- */

static void
update_actions (VsStatePane *self)
{
  gboolean ready = self->instant != NULL && !self->loading;
  gboolean at_first = FALSE, at_last = FALSE;

  /* -1 (the state before the first event) is held only at the start. */
  if (self->stepping && self->steps != NULL && !self->loading)
    {
      at_first = self->index < 0;
      at_last = self->index >= (gint)vs_alloc_steps_get_n (self->steps) - 1
                && !vs_alloc_steps_has_after (self->steps);
    }
  gtk_widget_action_set_enabled (GTK_WIDGET (self), "state.previous", ready && !at_first);
  gtk_widget_action_set_enabled (GTK_WIDGET (self), "state.next", ready && !at_last);
}

static void
step_action (GtkWidget *widget, const char *name, GVariant *param)
{
  vs_state_pane_step (VS_STATE_PANE (widget), g_str_equal (name, "state.next") ? 1 : -1);
}

/* [ ] and Alt+arrows anywhere in the window while the pane is shown. */
static gboolean
on_step_key (GtkWidget *widget, GVariant *args, gpointer data)
{
  const char *action = GPOINTER_TO_INT (data) > 0 ? "state.next" : "state.previous";

  if (!gtk_widget_get_mapped (widget))
    return FALSE;
  gtk_widget_activate_action (widget, action, NULL);
  return TRUE;
}

/* ---------------------------------------------------------- properties -- */

static void
set_instant (VsStatePane *self, VsInstant *instant)
{

  gboolean own;

  if (instant == self->instant)
    return;
  own = is_own_selection (self, instant);
  if (instant != NULL)
    vs_instant_ref (instant);
  g_clear_pointer (&self->instant, vs_instant_unref);
  self->instant = instant;
  if (own)
    {
      /* The instant a step selected: the step's state stays drawn, the
       * position and any span being read stay. */
      g_object_notify_by_pspec (G_OBJECT (self), props[PROP_INSTANT]);
      return;
    }
  self->select_on_show = FALSE;
  self->selected_t = -1;
  cancel_select (self);
  g_cancellable_cancel (self->cancellable);
  if (self->loading)
    {
      self->loading = FALSE;
      g_object_notify_by_pspec (G_OBJECT (self), props[PROP_LOADING]);
    }
  g_object_notify_by_pspec (G_OBJECT (self), props[PROP_INSTANT]);
  /* Another instant: the map follows it; in stepping mode, with the
   * event at or before it. */
  show_instant (self);
  if (self->keep_stepping && instant != NULL)
    vs_state_pane_start_stepping (self);
}

static void
vs_state_pane_get_property (GObject *object, guint prop_id, GValue *value, GParamSpec *pspec)
{
  VsStatePane *self = VS_STATE_PANE (object);

  switch (prop_id)
    {
    case PROP_SESSION:
      g_value_set_object (value, self->session);
      break;
    case PROP_INSTANT:
      g_value_set_boxed (value, self->instant);
      break;
    case PROP_LOADING:
      g_value_set_boolean (value, self->loading);
      break;
    case PROP_SELECTING:
      g_value_set_boolean (value, self->select_source != 0);
      break;
    case PROP_STEP_TIME:
      g_value_set_int64 (value, self->step_time);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
vs_state_pane_set_property (GObject *object, guint prop_id, const GValue *value, GParamSpec *pspec)
{
  VsStatePane *self = VS_STATE_PANE (object);

  switch (prop_id)
    {
    case PROP_SESSION:
      if (g_set_object (&self->session, g_value_get_object (value)))
        g_object_notify_by_pspec (object, props[PROP_SESSION]);
      break;
    case PROP_INSTANT:
      set_instant (self, g_value_get_boxed (value));
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
vs_state_pane_dispose (GObject *object)
{
  VsStatePane *self = VS_STATE_PANE (object);

  g_clear_handle_id (&self->select_source, g_source_remove);
  g_cancellable_cancel (self->cancellable);
  g_cancellable_cancel (self->stack_cancellable);
  g_clear_object (&self->cancellable);
  g_clear_object (&self->stack_cancellable);
  g_clear_pointer (&self->steps, vs_alloc_steps_free);
  g_clear_pointer (&self->stepped, vs_instant_unref);
  g_clear_pointer (&self->instant, vs_instant_unref);
  g_clear_object (&self->steps_document);
  g_clear_object (&self->session);
  gtk_widget_dispose_template (GTK_WIDGET (self), VS_TYPE_STATE_PANE);
  G_OBJECT_CLASS (vs_state_pane_parent_class)->dispose (object);
}

static void
vs_state_pane_class_init (VsStatePaneClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);
  GParamFlags rw = G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS;

  object_class->dispose = vs_state_pane_dispose;
  object_class->get_property = vs_state_pane_get_property;
  object_class->set_property = vs_state_pane_set_property;
  /* The session whose instant is drawn (bound in the window's .ui). */
  props[PROP_SESSION] = g_param_spec_object ("session", NULL, NULL, VS_TYPE_SESSION, rw);
  /* The session's instant (bound in vs-state-pane.ui). */
  props[PROP_INSTANT] = g_param_spec_boxed ("instant", NULL, NULL, VS_TYPE_INSTANT, rw);
  /* Whether events are being read. */
  props[PROP_LOADING]
      = g_param_spec_boolean ("loading", NULL, NULL, FALSE,
                              G_PARAM_READABLE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  /* Whether a step's time waits to be selected in the session. */
  props[PROP_SELECTING]
      = g_param_spec_boolean ("selecting", NULL, NULL, FALSE,
                              G_PARAM_READABLE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  /* The time (ns) of the last stepped event, notified at each step before
   * the session follows (-1: none yet): the timelines mark it at once. */
  props[PROP_STEP_TIME]
      = g_param_spec_int64 ("step-time", NULL, NULL, -1, G_MAXINT64, -1,
                            G_PARAM_READABLE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  g_object_class_install_properties (object_class, N_PROPS, props);

  gtk_widget_class_set_template_from_resource (widget_class,
                                               "/org/vramscope/View/vs-state-pane.ui");
  gtk_widget_class_bind_template_child (widget_class, VsStatePane, view);
  gtk_widget_class_bind_template_child (widget_class, VsStatePane, event_label);
  gtk_widget_class_bind_template_child (widget_class, VsStatePane, stack_label);
  gtk_widget_class_bind_template_child (widget_class, VsStatePane, stack_scroller);
  gtk_widget_class_install_action (widget_class, "state.previous", NULL, step_action);
  gtk_widget_class_install_action (widget_class, "state.next", NULL, step_action);
  g_type_ensure (VS_TYPE_FRAGMENTATION_VIEW);
}

static void
vs_state_pane_init (VsStatePane *self)
{
  GtkEventController *keys = gtk_shortcut_controller_new ();

  gtk_widget_init_template (GTK_WIDGET (self));
  gtk_shortcut_controller_set_scope (GTK_SHORTCUT_CONTROLLER (keys), GTK_SHORTCUT_SCOPE_GLOBAL);
  gtk_shortcut_controller_add_shortcut (
      GTK_SHORTCUT_CONTROLLER (keys),
      gtk_shortcut_new (gtk_shortcut_trigger_parse_string ("bracketleft|<Alt>Left"),
                        gtk_callback_action_new (on_step_key, GINT_TO_POINTER (-1), NULL)));
  gtk_shortcut_controller_add_shortcut (
      GTK_SHORTCUT_CONTROLLER (keys),
      gtk_shortcut_new (gtk_shortcut_trigger_parse_string ("bracketright|<Alt>Right"),
                        gtk_callback_action_new (on_step_key, GINT_TO_POINTER (1), NULL)));
  gtk_widget_add_controller (GTK_WIDGET (self), keys);
  self->index = -1;
  self->selected_device = -1;
  self->selected_t = -1;
  self->pending_device = -1;
  self->pending_t = -1;
  self->step_time = -1;
  self->shown_stack = -1;
  self->pending_stack = -1;
  show_instant (self);
}

/* See vs-state-pane.h. */
gboolean
vs_state_pane_is_loading (VsStatePane *self)
{
  g_return_val_if_fail (VS_IS_STATE_PANE (self), FALSE);
  return self->loading;
}

/* See vs-state-pane.h. */
gboolean
vs_state_pane_is_selecting (VsStatePane *self)
{
  g_return_val_if_fail (VS_IS_STATE_PANE (self), FALSE);
  return self->select_source != 0;
}

/* See vs-state-pane.h. */
const VsAllocStep *
vs_state_pane_get_step (VsStatePane *self)
{
  g_return_val_if_fail (VS_IS_STATE_PANE (self), NULL);
  if (!self->stepping || self->steps == NULL || self->loading || self->index < 0)
    return NULL;
  return vs_alloc_steps_get (self->steps, (guint)self->index);
}

/* See vs-state-pane.h. */
VsFragmentationView *
vs_state_pane_get_view (VsStatePane *self)
{
  g_return_val_if_fail (VS_IS_STATE_PANE (self), NULL);
  return self->view;
}

/* See vs-state-pane.h. */
const char *
vs_state_pane_get_event_text (VsStatePane *self)
{
  g_return_val_if_fail (VS_IS_STATE_PANE (self), NULL);
  return gtk_label_get_text (self->event_label);
}

/* See vs-state-pane.h. */
const char *
vs_state_pane_get_stack_text (VsStatePane *self)
{
  g_return_val_if_fail (VS_IS_STATE_PANE (self), NULL);
  return gtk_widget_get_visible (self->stack_scroller) ? gtk_label_get_text (self->stack_label)
                                                       : NULL;
}

/* SPDX-License-Identifier: MIT */
/* vs-roles.c — the role of each allocated block, from its stack's phase
 * (set-up, forward, backward, optimizer) and its lifetime (see vs-roles.h).
 *
 * Whether a block allocated in the backward pass or the optimizer outlives
 * that phase is read ahead in allocation order: the first later allocation
 * of the device whose stack is in another phase ends the phase; a block
 * freed before it was a temporary.  Phase runs already walked are kept, so
 * the blocks of one run cost one walk.
 */
#include "vs-roles.h"
#include "vs-trace-private.h"

#include <string.h>

/* How far ahead a phase's end is looked for. */
#define LOOKAHEAD_ROWS 20000

typedef enum
{
  PHASE_OTHER,
  PHASE_FORWARD,
  PHASE_SETUP,
  PHASE_OPTIMIZER,
  PHASE_BACKWARD,
} Phase;

static const char *const role_names[VS_N_ROLES] = {
  "parameters", "gradients", "optimizer-state", "activations", "other",
};

const char *
vs_role_name (VsRole role)
{
  g_return_val_if_fail (role < VS_N_ROLES, "?");
  return role_names[role];
}

VsRole
vs_roles_dominant (const VsRoles *r)
{
  VsRole best = VS_ROLE_PARAMETERS;

  g_return_val_if_fail (r != NULL, VS_ROLE_OTHER);
  for (VsRole i = 1; i < VS_N_ROLES; i++)
    if (r->bytes[i] > r->bytes[best])
      best = i;
  return best;
}

static gboolean
function_in (const char *function, const char *const *names)
{
  for (; *names != NULL; names++)
    if (g_strcmp0 (function, *names) == 0)
      return TRUE;
  return FALSE;
}

/* The phase one frame shows, PHASE_OTHER when it shows none. */
static Phase
frame_phase (const VsFrameInfo *f)
{
  static const char *const autograd_entry[] = { "backward", "_engine_run_backward", "grad", NULL };
  static const char *const module_setup[] = { "_apply",
                                              "to",
                                              "cuda",
                                              "convert",
                                              "load_state_dict",
                                              "_load_from_state_dict",
                                              "register_parameter",
                                              "to_empty",
                                              NULL };
  static const char *const module_call[] = { "_call_impl", "_wrapped_call_impl", "__call__", NULL };
  static const char *const construction[] = { "__init__", "reset_parameters", NULL };
  const char *file = f->file != NULL ? f->file : "";
  const char *function = f->function != NULL ? f->function : "";

  if (f->kind == VS_FRAME_LABEL)
    return g_str_has_prefix (function, "backward pass") ? PHASE_BACKWARD : PHASE_OTHER;
  if (strstr (function, "torch::autograd::Engine") != NULL
      || strstr (function, "AccumulateGrad") != NULL)
    return PHASE_BACKWARD;
  if (strstr (file, "/torch/autograd/") != NULL && function_in (function, autograd_entry))
    return PHASE_BACKWARD;
  if (strstr (file, "/torch/optim/") != NULL)
    return PHASE_OPTIMIZER;
  if (strstr (file, "/torch/nn/modules/module.py") != NULL)
    {
      if (function_in (function, module_setup))
        return PHASE_SETUP;
      if (function_in (function, module_call))
        return PHASE_FORWARD;
    }
  if (strstr (file, "/torch/nn/init.py") != NULL || strstr (file, "/torch/nn/parameter.py") != NULL)
    return PHASE_SETUP;
  if (strstr (file, "/torch/nn/") != NULL && function_in (function, construction))
    return PHASE_SETUP;
  return PHASE_OTHER;
}

typedef struct
{
  VsTrace *trace;
  GHashTable *phases;  /* stack id (the trace's) -> Phase + 1 */
  GArray *runs;        /* Run: phase runs already walked */
  GHashTable *stacked; /* device id -> 1 + whether its allocator blocks have stacks */
} RoleContext;

typedef struct
{
  gint64 from_seq, end_seq; /* [from, end): allocations of one phase */
  Phase phase;
  gint64 known_until; /* next_backward(): no backward allocation up to here */
} Run;

/* The latest phase of any frame of stack s, kept per trie node: a stack
 * whose outer frames were seen before reads only its own, so stacks
 * sharing a deep chain walk it once. */
static Phase
stack_phase (RoleContext *c, const VsStackInfo *s)
{
  g_autoptr (GPtrArray) walk = g_ptr_array_new ();
  Phase phase = PHASE_OTHER;

  for (const VsStackInfo *n = s; n != NULL && n->frame != NULL; n = n->parent)
    {
      gpointer found = g_hash_table_lookup (c->phases, &n->stack_id);

      if (found != NULL)
        {
          phase = (Phase)(GPOINTER_TO_INT (found) - 1);
          break;
        }
      g_ptr_array_add (walk, (gpointer)n);
    }
  for (guint i = walk->len; i-- > 0;)
    {
      const VsStackInfo *n = g_ptr_array_index (walk, i);

      phase = MAX (phase, frame_phase (n->frame));
      g_hash_table_insert (c->phases, (gpointer)&n->stack_id, GINT_TO_POINTER ((int)phase + 1));
    }
  return phase;
}

/* The phase of a block's stack: the strongest any frame shows (backward >
 * optimizer > set-up > forward).  PyTorch records no Python frame for the
 * allocations of its autograd engine's threads, so an allocator's block
 * with no stack at all is taken to be the backward pass's — on a device
 * where other allocator blocks have stacks (else nothing is known). */
static gboolean
block_phase (RoleContext *c, const VsBlock *b, Phase *out, GError **error)
{
  gpointer found;
  const VsStackInfo *s;

  if (b->stack_id <= 0)
    {
      /* Only where stacks were recorded does a missing one say anything. */
      static const char *stacked_sql
          = "SELECT 1 FROM block WHERE device_id = ?1 AND level = 2 AND stack_id > 0 LIMIT 1";
      gpointer known = g_hash_table_lookup (c->stacked, &b->device_id);

      if (known == NULL)
        {
          sqlite3_stmt *stmt = vs_trace_statement (c->trace, stacked_sql, error);
          int rc;

          if (stmt == NULL)
            return FALSE;
          sqlite3_bind_int64 (stmt, 1, b->device_id);
          rc = sqlite3_step (stmt);
          if (!vs_trace_step_ended (c->trace, stmt, rc, error))
            return FALSE;
          known = GINT_TO_POINTER (rc == SQLITE_ROW ? 2 : 1);
          g_hash_table_insert (c->stacked, g_memdup2 (&b->device_id, sizeof b->device_id), known);
        }
      *out = b->level == 2 && GPOINTER_TO_INT (known) == 2 ? PHASE_BACKWARD : PHASE_OTHER;
      return TRUE;
    }
  found = g_hash_table_lookup (c->phases, &b->stack_id);
  if (found != NULL)
    {
      *out = (Phase)(GPOINTER_TO_INT (found) - 1);
      return TRUE;
    }
  s = vs_stack_get (c->trace, b->stack_id, error);
  if (s == NULL)
    return FALSE;
  *out = stack_phase (c, s);
  return TRUE;
}

/* The next LOOKAHEAD_ROWS allocator blocks (level 2) of the device
 * allocated after step seq, in order, with their stacks; NULL with error
 * set.  Read whole before any is classified: classifying reads stacks on
 * the same connection. */
static GArray *
read_ahead (RoleContext *c, gint64 device_id, gint64 seq, GError **error)
{
  static const char *ahead_sql
      = "SELECT ifnull(stack_id, 0), alloc_seq FROM block"
        " WHERE device_id = ?1 AND level = 2 AND alloc_seq > ?2 ORDER BY alloc_seq LIMIT ?3";
  g_autoptr (GArray) rows = g_array_new (FALSE, FALSE, sizeof (VsBlock));
  sqlite3_stmt *stmt = vs_trace_statement (c->trace, ahead_sql, error);
  int rc;

  if (stmt == NULL)
    return NULL;
  sqlite3_bind_int64 (stmt, 1, device_id);
  sqlite3_bind_int64 (stmt, 2, seq);
  sqlite3_bind_int (stmt, 3, LOOKAHEAD_ROWS);
  while ((rc = sqlite3_step (stmt)) == SQLITE_ROW)
    {
      VsBlock next = { 0 };

      next.stack_id = sqlite3_column_int64 (stmt, 0);
      next.alloc_seq = sqlite3_column_int64 (stmt, 1);
      next.level = 2;
      next.device_id = device_id;
      g_array_append_val (rows, next);
    }
  if (!vs_trace_step_done (c->trace, stmt, rc, error))
    return NULL;
  return g_steal_pointer (&rows);
}

/* The replay step at which the phase of the allocation at b->alloc_seq
 * ends: the alloc_seq of the first later allocation of the device in
 * another phase, G_MAXINT64 when none follows within the look-ahead. */
static gboolean
phase_end (RoleContext *c, const VsBlock *b, Phase phase, gint64 *end, GError **error)
{
  g_autoptr (GArray) rows = NULL;
  Run run;

  for (guint i = 0; i < c->runs->len; i++)
    {
      const Run *r = &g_array_index (c->runs, Run, i);

      if (r->phase == phase && b->alloc_seq >= r->from_seq && b->alloc_seq < r->end_seq)
        {
          *end = r->end_seq;
          return TRUE;
        }
    }
  rows = read_ahead (c, b->device_id, b->alloc_seq, error);
  if (rows == NULL)
    return FALSE;
  *end = G_MAXINT64;
  for (guint i = 0; i < rows->len; i++)
    {
      const VsBlock *next = &g_array_index (rows, VsBlock, i);
      Phase p;

      if (!block_phase (c, next, &p, error))
        return FALSE;
      if (p != phase)
        {
          *end = next->alloc_seq;
          break;
        }
    }
  run.from_seq = b->alloc_seq;
  run.end_seq = *end;
  run.known_until = G_MAXINT64;
  run.phase = phase;
  g_array_append_val (c->runs, run);
  return TRUE;
}

static VsRole
classify (RoleContext *c, const VsBlock *b, GError **error)
{
  Phase phase;
  gint64 end = G_MAXINT64;

  /* Device-level memory (a library's own cudaMalloc: cuBLAS and cuDNN
   * workspaces, NCCL buffers) and blocks older than the trace hold no
   * tensor of the program's. */
  if (b->alloc_seq == VS_UNKNOWN || b->alloc_seq <= 0 || b->level != 2)
    return VS_ROLE_OTHER;
  if (!block_phase (c, b, &phase, error))
    return VS_N_ROLES;
  switch (phase)
    {
    case PHASE_SETUP:
      return VS_ROLE_PARAMETERS;
    case PHASE_FORWARD:
      return VS_ROLE_ACTIVATIONS;
    case PHASE_OPTIMIZER:
    case PHASE_BACKWARD:
      if (!phase_end (c, b, phase, &end, error))
        return VS_N_ROLES;
      /* Freed before its phase ended: a temporary of that phase. */
      if (b->free_seq != VS_UNKNOWN && b->free_seq <= end)
        return phase == PHASE_BACKWARD ? VS_ROLE_ACTIVATIONS : VS_ROLE_OTHER;
      return phase == PHASE_BACKWARD ? VS_ROLE_GRADIENTS : VS_ROLE_OPTIMIZER_STATE;
    case PHASE_OTHER:
    default:
      return VS_ROLE_OTHER;
    }
}

static void
context_init (RoleContext *c, VsTrace *trace)
{
  c->trace = trace;
  c->phases = g_hash_table_new (g_int64_hash, g_int64_equal);
  c->runs = g_array_new (FALSE, FALSE, sizeof (Run));
  c->stacked = g_hash_table_new_full (g_int64_hash, g_int64_equal, g_free, NULL);
}

static void
context_clear (RoleContext *c)
{
  g_hash_table_unref (c->phases);
  g_array_unref (c->runs);
  g_hash_table_unref (c->stacked);
}

gboolean
vs_blocks_roles (VsTrace *trace, const VsBlock *blocks, guint n, VsRole *roles, GError **error)
{
  RoleContext c;
  gboolean ok = TRUE;

  g_return_val_if_fail (trace != NULL && (n == 0 || (blocks != NULL && roles != NULL)), FALSE);
  context_init (&c, trace);
  for (guint i = 0; i < n && ok; i++)
    ok = (roles[i] = classify (&c, &blocks[i], error)) != VS_N_ROLES;
  context_clear (&c);
  return ok;
}

gboolean
vs_roles_at (VsTrace *trace, gint64 device_id, gint64 allocator_id, gint64 seq, VsRoles *out,
             GError **error)
{
  g_autoptr (GArray) blocks = NULL;

  g_return_val_if_fail (trace != NULL && out != NULL, FALSE);
  blocks = vs_live_blocks (trace, device_id, allocator_id, seq, error);
  if (blocks == NULL)
    return FALSE;
  return vs_roles_of_blocks (trace, device_id, allocator_id, seq, blocks, out, error);
}

gboolean
vs_roles_of_blocks (VsTrace *trace, gint64 device_id, gint64 allocator_id, gint64 seq,
                    GArray *blocks, VsRoles *out, GError **error)
{
  RoleContext c;
  gboolean ok = TRUE;

  g_return_val_if_fail (trace != NULL && blocks != NULL && out != NULL, FALSE);
  memset (out, 0, sizeof *out);
  out->device_id = device_id;
  out->allocator_id = allocator_id;
  out->seq = seq;
  context_init (&c, trace);
  for (guint i = 0; i < blocks->len && ok; i++)
    {
      const VsBlock *b = &g_array_index (blocks, VsBlock, i);
      VsRole role = classify (&c, b, error);

      if (role == VS_N_ROLES)
        ok = FALSE;
      else
        {
          out->bytes[role] += b->bytes;
          out->count[role]++;
          out->total_bytes += b->bytes;
        }
    }
  context_clear (&c);
  return ok;
}

/* The alloc_seq of the first allocation of the backward pass after seq
 * (*out; G_MAXINT64 when none follows within the look-ahead) and up to
 * where that is known (*known: G_MAXINT64 when the look-ahead reached the
 * end of the trace).  Spans already walked are kept in c->runs as
 * PHASE_OTHER runs, so each forward pass is walked once. */
static gboolean
next_backward (RoleContext *c, gint64 device_id, gint64 seq, gint64 *out, gint64 *known,
               GError **error)
{
  g_autoptr (GArray) rows = NULL;
  Run run;

  for (guint i = 0; i < c->runs->len; i++)
    {
      const Run *r = &g_array_index (c->runs, Run, i);

      if (r->phase == PHASE_OTHER && seq >= r->from_seq && seq < MIN (r->end_seq, r->known_until))
        {
          *out = r->end_seq;
          *known = r->known_until;
          return TRUE;
        }
    }
  rows = read_ahead (c, device_id, seq, error);
  if (rows == NULL)
    return FALSE;
  *out = G_MAXINT64;
  *known = rows->len == LOOKAHEAD_ROWS ? g_array_index (rows, VsBlock, rows->len - 1).alloc_seq
                                       : G_MAXINT64;
  for (guint i = 0; i < rows->len; i++)
    {
      Phase p;

      if (!block_phase (c, &g_array_index (rows, VsBlock, i), &p, error))
        return FALSE;
      if (p == PHASE_BACKWARD)
        {
          *out = *known = g_array_index (rows, VsBlock, i).alloc_seq;
          break;
        }
    }
  run.from_seq = seq;
  run.end_seq = *out;
  run.known_until = *known;
  run.phase = PHASE_OTHER;
  g_array_append_val (c->runs, run);
  return TRUE;
}

gboolean
vs_unused_activations_of_blocks (VsTrace *trace, GArray *blocks, VsUnusedActivations *out,
                                 GError **error)
{
  g_autoptr (GHashTable) by_stack
      = g_hash_table_new_full (g_int64_hash, g_int64_equal, g_free, g_free);
  RoleContext c;
  gboolean ok = TRUE;
  gint64 largest = 0;

  g_return_val_if_fail (trace != NULL && blocks != NULL && out != NULL, FALSE);
  memset (out, 0, sizeof *out);
  out->stack_id = VS_UNKNOWN;
  context_init (&c, trace);
  for (guint i = 0; i < blocks->len && ok; i++)
    {
      const VsBlock *b = &g_array_index (blocks, VsBlock, i);
      VsRole role = classify (&c, b, error);
      gboolean seen = FALSE;
      gint64 *sum;

      if (role == VS_N_ROLES)
        {
          ok = FALSE;
          break;
        }
      if (role != VS_ROLE_ACTIVATIONS)
        continue;
      out->activation_bytes += b->bytes;
      if (b->free_seq == VS_UNKNOWN)
        continue;
      /* The backward pass's own temporaries are activations too. */
      {
        Phase p;

        if (!block_phase (&c, b, &p, error))
          {
            ok = FALSE;
            break;
          }
        if (p != PHASE_FORWARD)
          continue;
      }
      {
        gint64 backward = G_MAXINT64, known = G_MAXINT64;

        if (!next_backward (&c, b->device_id, b->alloc_seq, &backward, &known, error))
          {
            ok = FALSE;
            break;
          }
        /* Beyond the look-ahead nothing is known: taken as seen. */
        seen = backward < b->free_seq || b->free_seq > known;
      }
      if (seen)
        continue;
      out->bytes += b->bytes;
      out->count++;
      sum = g_hash_table_lookup (by_stack, &b->stack_id);
      if (sum == NULL)
        {
          sum = g_new0 (gint64, 1);
          g_hash_table_insert (by_stack, g_memdup2 (&b->stack_id, sizeof b->stack_id), sum);
        }
      *sum += b->bytes;
      if (*sum > largest)
        {
          largest = *sum;
          out->stack_id = b->stack_id;
        }
    }
  context_clear (&c);
  return ok;
}

/* SPDX-License-Identifier: MIT */
/* vs-roles.h — what the memory is for: parameters, gradients, optimizer
 * state, activations, other.
 *
 * The role of an allocated block is derived from its allocation stack and
 * its lifetime, the way PyTorch's memory timeline categorises memory but
 * from any trace (no profiler window needed):
 *
 *   parameters       allocated by a module's .to()/.cuda()/_apply, its
 *                    construction or load_state_dict (torch/nn/…);
 *   optimizer-state  allocated inside an optimizer (torch/optim/…) and
 *                    still live once the optimizer has returned (an
 *                    allocation from outside the optimizer came next);
 *   gradients        allocated by the backward pass (AccumulateGrad, the
 *                    autograd engine — in PyTorch's history an allocation
 *                    with no Python frame, or a "backward pass" label) and
 *                    still live once the backward pass has returned;
 *   activations      allocated in a module's forward pass (a frame of
 *                    torch.nn.Module's call), and the backward pass's own
 *                    temporaries (gradients of activations);
 *   other            everything else: inputs, the program's own tensors,
 *                    optimizer temporaries, blocks live before the trace.
 */
#pragma once

#include "vs-trace.h"
#include "vs-blocks.h"

G_BEGIN_DECLS

typedef enum
{
  VS_ROLE_PARAMETERS,
  VS_ROLE_GRADIENTS,
  VS_ROLE_OPTIMIZER_STATE,
  VS_ROLE_ACTIVATIONS,
  VS_ROLE_OTHER,
  VS_N_ROLES,
} VsRole;

/* The role's name as reports print it ("optimizer-state"). */
const char *vs_role_name (VsRole role);

/* Bytes and blocks per role of (device_id, allocator_id; 0 = all) live
 * after step seq. */
typedef struct
{
  gint64 device_id;
  gint64 allocator_id;
  gint64 seq;
  gint64 total_bytes;
  gint64 bytes[VS_N_ROLES];
  gint64 count[VS_N_ROLES];
} VsRoles;

/* Classifies every allocated block live after seq (as vs_live_blocks()
 * returns them) and fills *out.  Returns FALSE with error set on failure. */
gboolean vs_roles_at (VsTrace *trace, gint64 device_id, gint64 allocator_id, gint64 seq,
                      VsRoles *out, GError **error);

/* The same for blocks, which the caller read with vs_live_blocks (trace,
 * device_id, allocator_id, seq): one read of them serves several
 * answers at one instant. */
gboolean vs_roles_of_blocks (VsTrace *trace, gint64 device_id, gint64 allocator_id, gint64 seq,
                             GArray *blocks, VsRoles *out, GError **error);

/* The roles of n blocks of trace (allocated blocks, as the `block` table
 * holds them) into roles[0..n-1], sharing the walks of phases between
 * them.  Returns FALSE with error set on failure. */
gboolean vs_blocks_roles (VsTrace *trace, const VsBlock *blocks, guint n, VsRole *roles,
                          GError **error);

/* Activations allocated in a forward pass that no backward pass followed
 * while they lived: what a forward pass run with gradients enabled keeps
 * for nothing (evaluation or inference without torch.no_grad()). */
typedef struct
{
  gint64 bytes;            /* of such activations live after the step */
  gint64 count;            /* blocks */
  gint64 stack_id;         /* the largest of them, VS_UNKNOWN if none */
  gint64 activation_bytes; /* all activations live after the step */
} VsUnusedActivations;

/* The same for blocks, the live blocks of one instant as vs_live_blocks()
 * returns them. */
gboolean vs_unused_activations_of_blocks (VsTrace *trace, GArray *blocks, VsUnusedActivations *out,
                                          GError **error);

/* The role holding the most bytes in r (ties: the first in VsRole order). */
VsRole vs_roles_dominant (const VsRoles *r);

G_END_DECLS

/* SPDX-License-Identifier: MIT */
/* vs-diagnose-finding.c — what every rule of the diagnosis makes its
 * findings with: a new finding, sizes as text, and the remedy for the
 * role that holds the most memory (see vs-diagnose-private.h).
 */
#include "vs-diagnose-private.h"
#include "vs-format.h"

VsFinding *
vs_diagnose_finding_new (VsFindingKind kind, gint64 device_id, gint64 allocator_id)
{
  VsFinding *f = g_new0 (VsFinding, 1);

  f->kind = kind;
  f->device_id = device_id;
  f->allocator_id = allocator_id;
  f->count = VS_UNKNOWN;
  f->run_count = VS_UNKNOWN;
  f->time_ns = VS_UNKNOWN;
  f->seq = VS_UNKNOWN;
  f->stack_id = VS_UNKNOWN;
  f->saving_bytes = VS_UNKNOWN;
  return f;
}

char *
vs_diagnose_bytes (gint64 n)
{
  return vs_format_bytes (MAX (n, 0));
}

/* How to lower memory held by the dominant role of r (at the instant
 * `at` names), with the expected saving and its basis; NULL when no role
 * dominates. */
char *
vs_diagnose_role_remedy (const VsRoles *r, const char *at, gboolean autocast, gint64 *saving)
{
  VsRole role = vs_roles_dominant (r);
  gint64 b = r->bytes[role];
  g_autofree char *held = vs_diagnose_bytes (b);
  g_autofree char *half = vs_diagnose_bytes (b / 2);
  g_autofree char *three_quarters = vs_diagnose_bytes (b / 4 * 3);
  int pct = r->total_bytes > 0 ? (int)(100 * b / r->total_bytes) : 0;

  *saving = VS_UNKNOWN;
  if (r->total_bytes <= 0 || b * 10 < r->total_bytes * 4)
    return NULL;
  switch (role)
    {
    case VS_ROLE_ACTIVATIONS:
      *saving = b / 2;
      if (autocast) /* never propose what is already in effect */
        return g_strdup_printf (
            "activations hold %s (%d%%) %s, with autocast already on (its frames are in the "
            "stacks): half the batch with 2-step gradient accumulation saves ~%s (activations "
            "scale with batch size); activation checkpointing saves more, at the cost of "
            "recomputing the forward pass",
            held, pct, at, half);
      return g_strdup_printf (
          "activations hold %s (%d%%) %s: bf16 autocast, or half the batch with 2-step gradient "
          "accumulation, saves ~%s (activations scale with bytes per value and batch size); "
          "activation checkpointing saves more, at the cost of recomputing the forward pass",
          held, pct, at, half);
    case VS_ROLE_OPTIMIZER_STATE:
      *saving = b / 4 * 3;
      return g_strdup_printf (
          "optimizer state holds %s (%d%%) %s: an 8-bit optimizer saves ~%s (1 byte per value "
          "instead of 4); sharding it over N GPUs (ZeRO-1, FSDP) keeps 1/N; a fused optimizer "
          "avoids its temporaries",
          held, pct, at, three_quarters);
    case VS_ROLE_PARAMETERS:
    case VS_ROLE_GRADIENTS:
      {
        gint64 pg = r->bytes[VS_ROLE_PARAMETERS] + r->bytes[VS_ROLE_GRADIENTS];
        g_autofree char *both = vs_diagnose_bytes (pg);
        g_autofree char *both_half = vs_diagnose_bytes (pg / 2);

        *saving = pg / 2;
        return g_strdup_printf (
            "parameters and gradients hold %s %s: bf16 weights and gradients save ~%s (2 bytes "
            "per value instead of 4); sharding them over N GPUs (FSDP, ZeRO-3) keeps 1/N",
            both, at, both_half);
      }
    case VS_ROLE_OTHER:
    default:
      return NULL;
    }
}

/* SPDX-License-Identifier: MIT */
/* vs-library-ranges.c — NVTX ranges that libraries emit (see
 * vs-library-ranges.h).  The names were seen in recorded traces: XLA
 * (jaxlib 0.11) names its ranges XlaModule:#hlo_module=…# and Thunk:#…#
 * in domain TSL; CCCL's CUB names them after the algorithm
 * (cub::DeviceSegmentedReduce::Sum) in domain CCCL.
 */
#include "vs-library-ranges.h"

#include <string.h>

static const char *const library_domains[]
    = { "NCCL", "TSL", "XLA", "CCCL", "cuDNN", "cuBLAS", NULL };
static const char *const library_prefixes[]
    = { "XlaModule:", "Thunk:", "cub::",  "thrust::", "cudnn",
        "cuDNN",      "cublas", "cuBLAS", "nccl",     NULL };

gboolean
vs_range_is_library (const char *domain, const char *name)
{
  for (int i = 0; domain != NULL && library_domains[i] != NULL; i++)
    if (g_ascii_strcasecmp (domain, library_domains[i]) == 0)
      return TRUE;
  for (int i = 0; name != NULL && library_prefixes[i] != NULL; i++)
    if (g_str_has_prefix (name, library_prefixes[i]))
      return TRUE;
  return FALSE;
}

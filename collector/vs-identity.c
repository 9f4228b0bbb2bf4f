/* SPDX-License-Identifier: MIT */
/* vs-identity.c — a process's job and rank from its launcher's
 * environment variables (see vs-identity.h). */
#include <stdlib.h>
#include <string.h>

#include "vs-identity.h"
#include "vs-trace-writer.h"

/* The first of names set to a whole decimal number ≥ 0, or VS_UNKNOWN. */
static int64_t
first_int (const char *const *names)
{
  for (; *names != NULL; names++)
    {
      const char *v = getenv (*names);
      char *end;
      if (v == NULL || v[0] < '0' || v[0] > '9')
        continue;
      long long x = strtoll (v, &end, 10);
      if (*end == '\0' && x >= 0)
        return (int64_t)x;
    }
  return VS_UNKNOWN;
}

void
vs_identity_read (VsIdentity *id)
{
  static const char *const rank[]
      = { "RANK", "OMPI_COMM_WORLD_RANK", "PMI_RANK", "SLURM_PROCID", NULL };
  static const char *const local[]
      = { "LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID", "SLURM_LOCALID", NULL };
  static const char *const world[]
      = { "WORLD_SIZE", "OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "SLURM_NTASKS", NULL };
  static const char *const job[] = { "VRAMSCOPE_JOB_ID", "SLURM_JOB_ID", "TORCHELASTIC_RUN_ID",
                                     "PBS_JOBID",        "LSB_JOBID",    NULL };

  id->rank = first_int (rank);
  id->local_rank = first_int (local);
  id->world_size = first_int (world);
  id->job_id = NULL;
  id->job_id_source = NULL;
  for (const char *const *n = job; *n != NULL; n++)
    {
      const char *v = getenv (*n);
      if (v != NULL && v[0] != '\0' && strcmp (v, "none") != 0)
        {
          id->job_id = v;
          id->job_id_source = *n;
          break;
        }
    }
}

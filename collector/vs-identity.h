/* SPDX-License-Identifier: MIT */
/* vs-identity.h — where a process stands in a distributed job: the job it
 * belongs to and its rank, read from the environment the launcher set.
 *
 * Launchers name these differently: torchrun (RANK, LOCAL_RANK,
 * WORLD_SIZE, TORCHELASTIC_RUN_ID), Open MPI (OMPI_COMM_WORLD_*), MPICH
 * and Intel MPI (PMI_RANK, PMI_SIZE, MPI_LOCALRANKID), Slurm
 * (SLURM_PROCID, SLURM_LOCALID, SLURM_NTASKS, SLURM_JOB_ID), PBS
 * (PBS_JOBID) and LSF (LSB_JOBID).  `vramscope record --job NAME` passes
 * VRAMSCOPE_JOB_ID, which wins.  Plain C, no GLib: the collector runs
 * inside arbitrary processes.
 */
#pragma once

#include <stdint.h>

typedef struct
{
  int64_t rank, local_rank, world_size; /* VS_UNKNOWN when no variable says */
  const char *job_id;                   /* NULL when no variable says */
  const char *job_id_source;            /* the variable job_id came from, else NULL */
} VsIdentity;

/* Fills *id from the environment.  Each field takes the first variable set
 * to a usable value, in this order:
 *   rank        RANK, OMPI_COMM_WORLD_RANK, PMI_RANK, SLURM_PROCID
 *   local_rank  LOCAL_RANK, OMPI_COMM_WORLD_LOCAL_RANK, MPI_LOCALRANKID,
 *               SLURM_LOCALID
 *   world_size  WORLD_SIZE, OMPI_COMM_WORLD_SIZE, PMI_SIZE, SLURM_NTASKS
 *   job_id      VRAMSCOPE_JOB_ID, SLURM_JOB_ID, TORCHELASTIC_RUN_ID,
 *               PBS_JOBID, LSB_JOBID
 * Integers must be whole decimal numbers ≥ 0; a job id must be non-empty
 * and not torchrun's placeholder "none".  The launcher's own variables come
 * before the batch system's, since under Slurm a torchrun worker's
 * SLURM_PROCID is its node's task, not its rank.  The strings point into
 * the environment: valid until it changes. */
void vs_identity_read (VsIdentity *id);

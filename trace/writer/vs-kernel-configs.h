/* SPDX-License-Identifier: MIT */
/* vs-kernel-configs.h — the writer's map from a kernel's name and launch
 * configuration to its kernel_config row, so that each distinct one is
 * stored once (plain C, no GLib: it runs inside profiled processes). */
#ifndef VS_KERNEL_CONFIGS_H
#define VS_KERNEL_CONFIGS_H

#include <stddef.h>
#include <stdint.h>

#include "vs-trace-writer.h"

/* The columns of kernel_config after its name, in table order. */
#define VS_KERNEL_CONFIG_INTS 9

typedef struct
{
  const char *name; /* owned by the map once stored */
  int64_t v[VS_KERNEL_CONFIG_INTS];
} VsKernelConfigKey;

typedef struct VsKernelConfigs VsKernelConfigs;

/* An empty map, or NULL when out of memory. */
VsKernelConfigs *vs_kernel_configs_new (void);

/* The key of kernel k: its name ("" for none) and configuration. */
VsKernelConfigKey vs_kernel_config_key (const VsKernel *k);

/* The kernel_config id stored for key, or 0 when there is none yet. */
int64_t vs_kernel_configs_find (const VsKernelConfigs *m, const VsKernelConfigKey *key);

/* Records that key is stored as row id (a copy of its name is kept).
 * Returns 0, or -1 when out of memory. */
int vs_kernel_configs_add (VsKernelConfigs *m, const VsKernelConfigKey *key, int64_t id);

/* Frees m (NULL is ignored). */
void vs_kernel_configs_free (VsKernelConfigs *m);

#endif

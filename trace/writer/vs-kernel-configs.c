/* SPDX-License-Identifier: MIT */
/* vs-kernel-configs.c — the writer's map from a kernel's name and launch
 * configuration to its kernel_config row: an open-addressing table
 * (common/vs-hash-table.h) keyed by the name's text and the nine integers,
 * each hashed once. */
#include "vs-kernel-configs.h"

#include <stdlib.h>
#include <string.h>

typedef struct
{
  VsKernelConfigKey key;
  uint64_t hash;
  int64_t id;
  int used;
} VsKernelConfigEntry;

static int
key_equal (const VsKernelConfigKey *a, const VsKernelConfigKey *b)
{
  return memcmp (a->v, b->v, sizeof a->v) == 0 && strcmp (a->name, b->name) == 0;
}

/* The table is keyed by a pointer to a key whose hash the caller computed
 * once: entries keep theirs, so probing compares hashes before texts. */
typedef struct
{
  const VsKernelConfigKey *key;
  uint64_t hash;
} Probe;

#define VS_HT_TYPE ConfigTable
#define VS_HT_FN(n) config_table_##n
#define VS_HT_ENTRY VsKernelConfigEntry
#define VS_HT_KEY_TYPE Probe
#define VS_HT_KEY(e) ((Probe){ &(e)->key, (e)->hash })
#define VS_HT_SET_KEY(e, k) ((e)->key = *(k).key, (e)->hash = (k).hash, (e)->used = 1)
#define VS_HT_HASH(k) ((k).hash)
#define VS_HT_EQUAL(a, b) ((a).hash == (b).hash && key_equal ((a).key, (b).key))
#define VS_HT_IS_EMPTY(e) (!(e)->used)
#include "vs-hash-table.h"

/* The hash of a key: its name's bytes, then each integer mixed in. */
static uint64_t
key_hash (const VsKernelConfigKey *k)
{
  uint64_t h = vs_hash_bytes (k->name, strlen (k->name));
  for (int i = 0; i < VS_KERNEL_CONFIG_INTS; i++)
    h = vs_hash_mix64 (h ^ (uint64_t)k->v[i]) + (uint64_t)i;
  return h;
}

struct VsKernelConfigs
{
  ConfigTable table;
};

VsKernelConfigs *
vs_kernel_configs_new (void)
{
  return calloc (1, sizeof (VsKernelConfigs));
}

VsKernelConfigKey
vs_kernel_config_key (const VsKernel *k)
{
  VsKernelConfigKey key = {
    .name = k->name != NULL ? k->name : "",
    .v = { k->grid_x, k->grid_y, k->grid_z, k->block_x, k->block_y, k->block_z, k->static_shared,
           k->dynamic_shared, k->registers },
  };
  return key;
}

int64_t
vs_kernel_configs_find (const VsKernelConfigs *m, const VsKernelConfigKey *key)
{
  Probe p = { key, key_hash (key) };
  const VsKernelConfigEntry *e = config_table_find (&m->table, p);
  return e != NULL ? e->id : 0;
}

int
vs_kernel_configs_add (VsKernelConfigs *m, const VsKernelConfigKey *key, int64_t id)
{
  char *name = strdup (key->name);
  if (name == NULL)
    return -1;
  VsKernelConfigKey owned = *key;
  owned.name = name;
  Probe p = { &owned, key_hash (&owned) };
  bool added = false;
  VsKernelConfigEntry *e = config_table_insert (&m->table, p, &added);
  if (e == NULL || !added)
    {
      free (name);
      return e == NULL ? -1 : 0;
    }
  e->id = id;
  return 0;
}

void
vs_kernel_configs_free (VsKernelConfigs *m)
{
  if (m == NULL)
    return;
  for (size_t i = 0; i < m->table.cap; i++)
    if (m->table.entries[i].used)
      free ((char *)m->table.entries[i].key.name);
  config_table_clear (&m->table);
  free (m);
}

/* SPDX-License-Identifier: MIT */
/* vs-sink.c — CUPTI activity records and application items to trace rows.
 *
 * Runs on the writer thread only (or in a test).  It walks buffers with
 * cuptiActivityGetNextRecord and writes one raw row per record: memory
 * events, pool events, kernels, copies, memsets and devices.  It pairs
 * nothing: CUPTI's per-thread buffers arrive out of order, so pairing
 * allocations with releases by (device, address) in time order is left to
 * vs_trace_finalize().
 *
 * Joins made here, all keyed on what the record carries:
 *   - correlation id → thread and innermost NVTX range, from the allocation
 *     API callback (MEMORY2 records carry neither);
 *   - address → "this DEVICE record is a VMM map/unmap", from the cuMemMap /
 *     cuMemUnmap callbacks (the records themselves look like cudaMalloc);
 *   - CUPTI device id → trace device (by uuid), pool address → allocator;
 *   - NVTX range key → trace range id;
 *   - stack hash → trace stack id (vs-unwind.c writes a stack's rows when
 *     its VS_ITEM_STACK arrives); an allocation's stack comes with its
 *     correlation id, a release's from the free call at the same address
 *     (release records' correlation ids are not reliable).
 */
#include "vs-collector-private.h"
#include "vs-unwind.h"

#include <cupti.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* --- u64 → u64 maps (key 0 is "empty"), on the generic table ---------- */

typedef struct
{
  uint64_t key, val;
} VsMapEntry;

#define VS_HT_TYPE VsMap
#define VS_HT_FN(n) vs_map_##n
#define VS_HT_ENTRY VsMapEntry
#define VS_HT_KEY_TYPE uint64_t
#define VS_HT_KEY(e) ((e)->key)
#define VS_HT_SET_KEY(e, k) ((e)->key = (k))
#define VS_HT_HASH(k) vs_hash_mix64 (k)
#define VS_HT_EQUAL(a, b) ((a) == (b))
#define VS_HT_IS_EMPTY(e) ((e)->key == 0)
#include "vs-hash-table.h"

static void
map_free (VsMap *m)
{
  vs_map_clear (m);
}

static bool
map_get (const VsMap *m, uint64_t key, uint64_t *val)
{
  const VsMapEntry *e = key != 0 ? vs_map_find (m, key) : NULL;
  if (e != NULL)
    *val = e->val;
  return e != NULL;
}

/* Inserts or replaces; returns false when out of memory. */
static bool
map_put (VsMap *m, uint64_t key, uint64_t val)
{
  VsMapEntry *e = key != 0 ? vs_map_insert (m, key, NULL) : NULL;
  if (e != NULL)
    e->val = val;
  return e != NULL;
}

static void
map_del (VsMap *m, uint64_t key)
{
  VsMapEntry *e = key != 0 ? vs_map_find (m, key) : NULL;
  if (e != NULL)
    vs_map_remove (m, e);
}

/* Decrements a counter stored in the map; true when it was positive. */
static bool
map_take (VsMap *m, uint64_t key)
{
  uint64_t n;
  if (!map_get (m, key, &n) || n == 0)
    return false;
  if (n == 1)
    map_del (m, key);
  else
    map_put (m, key, n - 1);
  return true;
}

/* --- the sink ----------------------------------------------------------- */

#define VS_CORR_SLOTS 65536 /* recent allocation calls remembered */
#define VS_MAX_DEVICES 64

typedef struct
{
  uint64_t correlation;
  int64_t tid;
  uint64_t range;
  uint64_t stack;
} VsCorrSlot;

typedef char *(*VsDemangleFunc) (const char *, char *, size_t *, int *);

struct VsSink
{
  VsWriter *w;
  int64_t process_id;
  int64_t device_ids[VS_MAX_DEVICES]; /* CUPTI device id → trace id, 0 unknown */
  VsMap pools;                        /* (device << 56) ^ pool address → allocator id */
  VsMap ranges;                       /* range key → trace range id, where not key + offset */
  int64_t range_offset;               /* trace id - key, the same for nearly every range */
  uint64_t first_range_key;
  VsMap vmm_maps;    /* address → pending cuMemMap count */
  VsMap vmm_unmaps;  /* address → pending cuMemUnmap count */
  VsMap names;       /* kernel name pointer → demangled copy */
  VsCorrSlot *corr;  /* direct-mapped: correlation & (VS_CORR_SLOTS-1) */
  VsStacks *stacks;  /* stack rows */
  VsMap stack_ids;   /* stack hash → trace stack id */
  VsMap free_stacks; /* address → stack hash of a free call not yet matched */
  VsMap free_tids;   /* address → thread of that free call */
  VsMap map_stacks;  /* address → stack hash of a cuMemMap not yet matched */
  VsDemangleFunc demangle;
  bool demangle_on;
  uint64_t rows;
  uint64_t unknown_kind;
};

/* Finds __cxa_demangle in the host if it has libstdc++ loaded; the
 * collector never loads it itself. */
static VsDemangleFunc
find_demangler (void)
{
  void *f = dlsym (RTLD_DEFAULT, "__cxa_demangle");
  if (f == NULL)
    {
      void *h = dlopen ("libstdc++.so.6", RTLD_NOW | RTLD_NOLOAD);
      if (h != NULL)
        f = dlsym (h, "__cxa_demangle");
    }
  return (VsDemangleFunc)f;
}

/* Creates a sink writing rows of process process_id into w. */
VsSink *
vs_sink_new (VsWriter *w, int64_t process_id)
{
  VsSink *s = calloc (1, sizeof *s);
  if (s == NULL)
    return NULL;
  s->corr = calloc (VS_CORR_SLOTS, sizeof (VsCorrSlot));
  if (s->corr == NULL)
    {
      free (s);
      return NULL;
    }
  s->w = w;
  s->process_id = process_id;
  s->stacks = vs_stacks_new (w, process_id);
  if (s->stacks == NULL)
    {
      free (s->corr);
      free (s);
      return NULL;
    }
  s->demangle = find_demangler ();
  s->demangle_on = true;
  return s;
}

/* Frees the sink and its caches (not the writer). */
void
vs_sink_free (VsSink *s)
{
  if (s == NULL)
    return;
  for (size_t i = 0; i < s->names.cap; i++)
    if (s->names.entries[i].key != 0)
      free ((void *)(uintptr_t)s->names.entries[i].val);
  map_free (&s->pools);
  map_free (&s->ranges);
  map_free (&s->vmm_maps);
  map_free (&s->vmm_unmaps);
  map_free (&s->names);
  map_free (&s->stack_ids);
  map_free (&s->free_stacks);
  map_free (&s->free_tids);
  map_free (&s->map_stacks);
  vs_stacks_free (s->stacks);
  free (s->corr);
  free (s);
}

uint64_t
vs_sink_rows (VsSink *s)
{
  return s->rows;
}

/* Formats uuid bytes as nvidia-smi does. */
void
vs_format_uuid (const unsigned char u[16], char out[41])
{
  snprintf (out, 41,
            "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-"
            "%02x%02x%02x%02x%02x%02x",
            u[0], u[1], u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13],
            u[14], u[15]);
}

/* Driver entry points for describing a device that no DEVICE record has
 * described yet; resolved from the already-loaded driver, never loaded. */
typedef int (*CuDeviceGetFn) (int *, int);
typedef int (*CuDeviceGetNameFn) (char *, int, int);
typedef int (*CuDeviceGetUuidFn) (unsigned char *, int);
typedef int (*CuDeviceTotalMemFn) (size_t *, int);

bool
vs_describe_device_from_driver (uint32_t dev, VsDevice *d, char *name, size_t namelen,
                                char uuid[41])
{
  void *h = dlopen ("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
  if (h == NULL)
    return false;
  CuDeviceGetFn get = (CuDeviceGetFn)dlsym (h, "cuDeviceGet");
  CuDeviceGetNameFn get_name = (CuDeviceGetNameFn)dlsym (h, "cuDeviceGetName");
  CuDeviceGetUuidFn get_uuid = (CuDeviceGetUuidFn)dlsym (h, "cuDeviceGetUuid_v2");
  CuDeviceTotalMemFn total = (CuDeviceTotalMemFn)dlsym (h, "cuDeviceTotalMem_v2");
  int cudev = 0;
  unsigned char u[16];
  size_t bytes = 0;
  bool ok = get && get_name && get_uuid && total && get (&cudev, (int)dev) == 0
            && get_uuid (u, cudev) == 0;
  if (ok)
    {
      vs_format_uuid (u, uuid);
      if (get_name (name, (int)namelen, cudev) != 0)
        name[0] = '\0';
      d->idx = dev;
      d->uuid = uuid;
      d->name = name[0] ? name : NULL;
      d->total_bytes = total (&bytes, cudev) == 0 ? (int64_t)bytes : VS_UNKNOWN;
    }
  dlclose (h);
  return ok;
}

/* Trace device id for CUPTI device ordinal dev, adding the device on first
 * sight.  Returns VS_UNKNOWN when dev is out of range, -1 on writer error. */
static int64_t
device_id (VsSink *s, uint32_t dev)
{
  if (dev >= VS_MAX_DEVICES)
    return VS_UNKNOWN;
  if (s->device_ids[dev] != 0)
    return s->device_ids[dev];
  VsDevice d = { .idx = dev, .uuid = NULL, .name = NULL, .total_bytes = VS_UNKNOWN };
  char name[256] = "", uuid[41];
  vs_in_collector++;
  vs_describe_device_from_driver (dev, &d, name, sizeof name, uuid);
  vs_in_collector--;
  int64_t id = vs_writer_add_device (s->w, &d);
  if (id > 0)
    s->device_ids[dev] = id;
  return id;
}

/* Allocator id of the pool at address on trace device dev_id, adding an
 * allocator row 'pool:0x…' on first sight. */
static int64_t
pool_id (VsSink *s, int64_t dev_id, uint64_t address)
{
  uint64_t key = ((uint64_t)dev_id << 56) ^ address;
  uint64_t id;
  if (map_get (&s->pools, key, &id))
    return (int64_t)id;
  char name[40];
  snprintf (name, sizeof name, "pool:0x%llx", (unsigned long long)address);
  VsAllocator a = { .device_id = dev_id,
                    .process_id = s->process_id,
                    .kind = "pool",
                    .name = name,
                    .handle = (int64_t)address,
                    .settings = NULL };
  int64_t nid = vs_writer_add_allocator (s->w, &a);
  if (nid > 0)
    map_put (&s->pools, key, (uint64_t)nid);
  return nid;
}

/* Trace range id for a range key, VS_UNKNOWN when unknown. */
static int64_t
range_id (VsSink *s, uint64_t key)
{
  uint64_t id;
  if (key == 0 || s->first_range_key == 0 || key < s->first_range_key)
    return VS_UNKNOWN;
  if (map_get (&s->ranges, key, &id))
    return (int64_t)id;
  return (int64_t)key + s->range_offset;
}

/* Remembers that range key got trace id: keys and ids both count up one
 * by one, so only the first pair and any exception need storing. */
static void
range_put (VsSink *s, uint64_t key, int64_t id)
{
  if (s->first_range_key == 0)
    {
      s->first_range_key = key;
      s->range_offset = id - (int64_t)key;
    }
  else if (id != (int64_t)key + s->range_offset)
    {
      map_put (&s->ranges, key, (uint64_t)id);
    }
}

/* Trace stack id of a stack hash, VS_UNKNOWN for none. */
static int64_t
stack_id (VsSink *s, uint64_t hash)
{
  uint64_t id;
  return map_get (&s->stack_ids, hash, &id) ? (int64_t)id : VS_UNKNOWN;
}

/* Takes (and forgets) what map m holds for address; 0 when nothing. */
static uint64_t
take_at (VsMap *m, uint64_t address)
{
  uint64_t v = 0;
  if (map_get (m, address, &v))
    map_del (m, address);
  return v;
}

/* The trace's code for a CUPTI memory kind; 0 for UNKNOWN. */
static VsMemKind
mem_kind (uint32_t k)
{
  switch (k)
    {
    case CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE:
      return VS_MEM_KIND_PAGEABLE;
    case CUPTI_ACTIVITY_MEMORY_KIND_PINNED:
      return VS_MEM_KIND_PINNED;
    case CUPTI_ACTIVITY_MEMORY_KIND_DEVICE:
      return VS_MEM_KIND_DEVICE;
    case CUPTI_ACTIVITY_MEMORY_KIND_ARRAY:
      return VS_MEM_KIND_ARRAY;
    case CUPTI_ACTIVITY_MEMORY_KIND_MANAGED:
      return VS_MEM_KIND_MANAGED;
    case CUPTI_ACTIVITY_MEMORY_KIND_DEVICE_STATIC:
      return VS_MEM_KIND_STATIC;
    case CUPTI_ACTIVITY_MEMORY_KIND_MANAGED_STATIC:
      return VS_MEM_KIND_MANAGED_STATIC;
    default:
      return (VsMemKind)0;
    }
}

/* Name of a memory kind as used in memcpy src/dst columns. */
static const char *
mem_kind_name (uint32_t k)
{
  static const char *names[]
      = { NULL, "pageable", "pinned", "device", "array", "managed", "static", "managed_static" };
  return k < sizeof names / sizeof names[0] ? names[k] : NULL;
}

static const char *
copy_kind_name (uint32_t k)
{
  static const char *names[]
      = { NULL, "HtoD", "DtoH", "HtoA", "AtoH", "AtoA", "AtoD", "DtoA", "DtoD", "HtoH", "PtoP" };
  return k < sizeof names / sizeof names[0] ? names[k] : NULL;
}

static int64_t
stream_or_unknown (uint32_t stream)
{
  return stream == CUPTI_INVALID_STREAM_ID ? VS_UNKNOWN : (int64_t)stream;
}

static int
memory_record (VsSink *s, const CUpti_ActivityMemory4 *r)
{
  VsMemKind kind = mem_kind (r->memoryKind);
  if (kind == 0)
    {
      s->unknown_kind++;
      return 0;
    }
  bool alloc = r->memoryOperationType == CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION;
  if (!alloc && r->memoryOperationType != CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_RELEASE)
    {
      s->unknown_kind++;
      return 0;
    }
  int64_t dev = device_id (s, r->deviceId);
  if (dev == -1)
    return -1;
  VsMemEvent e = {
    .ts = (int64_t)r->timestamp,
    .process_id = s->process_id,
    .tid = VS_UNKNOWN,
    .device_id = dev,
    .context = r->contextId,
    .stream = stream_or_unknown (r->streamId),
    .kind = kind,
    .op = alloc ? VS_MEM_OP_ALLOC : VS_MEM_OP_FREE,
    .address = (int64_t)r->address,
    .bytes = (int64_t)r->bytes,
    .pool_id = VS_UNKNOWN,
    .pool_size = VS_UNKNOWN,
    .pool_utilized = VS_UNKNOWN,
    .correlation = r->correlationId ? (int64_t)r->correlationId : VS_UNKNOWN,
    .stack_id = VS_UNKNOWN,
    .range_id = VS_UNKNOWN,
  };
  if (kind == VS_MEM_KIND_DEVICE
      && r->memoryPoolConfig.memoryPoolType != CUPTI_ACTIVITY_MEMORY_POOL_TYPE_INVALID)
    {
      e.kind = VS_MEM_KIND_ASYNC;
      if (dev > 0)
        {
          e.pool_id = pool_id (s, dev, r->memoryPoolConfig.address);
          if (e.pool_id == -1)
            return -1;
        }
      if (r->memoryPoolConfig.memoryPoolType == CUPTI_ACTIVITY_MEMORY_POOL_TYPE_LOCAL)
        e.pool_size = (int64_t)r->memoryPoolConfig.pool.size;
      e.pool_utilized = (int64_t)r->memoryPoolConfig.utilizedSize;
    }
  else if (kind == VS_MEM_KIND_DEVICE)
    {
      /* A VMM map is reported exactly like cudaMalloc; the callback on
     * cuMemMap/cuMemUnmap left a marker at its address. */
      if (map_take (alloc ? &s->vmm_maps : &s->vmm_unmaps, r->address))
        e.kind = VS_MEM_KIND_VMM;
    }
  if (alloc && r->correlationId != 0)
    {
      VsCorrSlot *slot = &s->corr[r->correlationId & (VS_CORR_SLOTS - 1)];
      if (slot->correlation == r->correlationId)
        {
          e.tid = slot->tid;
          e.range_id = range_id (s, slot->range);
          e.stack_id = stack_id (s, slot->stack);
        }
    }
  if (alloc && e.kind == VS_MEM_KIND_VMM)
    e.stack_id = stack_id (s, take_at (&s->map_stacks, r->address));
  if (!alloc)
    {
      uint64_t tid = take_at (&s->free_tids, r->address);
      e.stack_id = stack_id (s, take_at (&s->free_stacks, r->address));
      if (tid != 0)
        e.tid = (int64_t)tid;
    }
  if (vs_writer_mem_event (s->w, &e) != 0)
    return -1;
  s->rows++;
  return 0;
}

static int
pool_record (VsSink *s, const CUpti_ActivityMemoryPool3 *r)
{
  VsPoolOp op;
  switch (r->memoryPoolOperationType)
    {
    case CUPTI_ACTIVITY_MEMORY_POOL_OPERATION_TYPE_CREATED:
      op = VS_POOL_OP_CREATED;
      break;
    case CUPTI_ACTIVITY_MEMORY_POOL_OPERATION_TYPE_DESTROYED:
      op = VS_POOL_OP_DESTROYED;
      break;
    case CUPTI_ACTIVITY_MEMORY_POOL_OPERATION_TYPE_TRIMMED:
      op = VS_POOL_OP_TRIMMED;
      break;
    default:
      s->unknown_kind++;
      return 0;
    }
  int64_t dev = device_id (s, r->deviceId);
  if (dev <= 0)
    return dev == -1 ? -1 : 0;
  int64_t pool = pool_id (s, dev, r->address);
  if (pool == -1)
    return -1;
  bool local = r->memoryPoolType == CUPTI_ACTIVITY_MEMORY_POOL_TYPE_LOCAL;
  VsPoolEvent e = {
    .ts = (int64_t)r->timestamp,
    .process_id = s->process_id,
    .device_id = dev,
    .pool_id = pool,
    .op = op,
    .size = local ? (int64_t)r->size : VS_UNKNOWN,
    .utilized = (int64_t)r->utilizedSize,
    .release_threshold = (int64_t)r->releaseThreshold,
    .min_bytes_to_keep = op == VS_POOL_OP_TRIMMED ? (int64_t)r->minBytesToKeep : VS_UNKNOWN,
    .correlation = r->correlationId ? (int64_t)r->correlationId : VS_UNKNOWN,
    .stack_id = VS_UNKNOWN,
  };
  if (r->correlationId != 0)
    {
      const VsCorrSlot *slot = &s->corr[r->correlationId & (VS_CORR_SLOTS - 1)];
      if (slot->correlation == r->correlationId)
        e.stack_id = stack_id (s, slot->stack);
    }
  if (vs_writer_pool_event (s->w, &e) != 0)
    return -1;
  s->rows++;
  return 0;
}

static int
device_record (VsSink *s, const CUpti_ActivityDevice5 *r)
{
  char uuid[41];
  vs_format_uuid ((const unsigned char *)r->uuid.bytes, uuid);
  VsDevice d = {
    .idx = r->id, .uuid = uuid, .name = r->name, .total_bytes = (int64_t)r->globalMemorySize
  };
  int64_t id = vs_writer_add_device (s->w, &d);
  if (id == -1)
    return -1;
  if (r->id < VS_MAX_DEVICES)
    s->device_ids[r->id] = id;
  return 0;
}

/* The kernel's display name: demangled when the host has a demangler,
 * cached per CUPTI name pointer (CUPTI keeps one string per function). */
static const char *
kernel_name (VsSink *s, const char *name)
{
  if (name == NULL)
    return "(unknown)";
  if (!s->demangle_on || s->demangle == NULL || name[0] != '_' || name[1] != 'Z')
    return name;
  uint64_t cached;
  if (map_get (&s->names, (uint64_t)(uintptr_t)name, &cached))
    return (const char *)(uintptr_t)cached;
  int status = -1;
  char *d = s->demangle (name, NULL, NULL, &status);
  if (status != 0 || d == NULL)
    {
      free (d);
      d = strdup (name);
    }
  if (d == NULL)
    return name;
  map_put (&s->names, (uint64_t)(uintptr_t)name, (uint64_t)(uintptr_t)d);
  return d;
}

static int
kernel_record (VsSink *s, const CUpti_ActivityKernel10 *r)
{
  int64_t dev = device_id (s, r->deviceId);
  if (dev == -1)
    return -1;
  VsKernel k = {
    .start_ns = (int64_t)r->start,
    .end_ns = (int64_t)r->end,
    .process_id = s->process_id,
    .device_id = dev,
    .context = r->contextId,
    .stream = r->streamId,
    .correlation = r->correlationId,
    .name = kernel_name (s, r->name),
    .grid_x = r->gridX,
    .grid_y = r->gridY,
    .grid_z = r->gridZ,
    .block_x = r->blockX,
    .block_y = r->blockY,
    .block_z = r->blockZ,
    .static_shared = r->staticSharedMemory,
    .dynamic_shared = r->dynamicSharedMemory,
    .registers = r->registersPerThread,
  };
  if (vs_writer_kernel (s->w, &k) != 0)
    return -1;
  s->rows++;
  return 0;
}

static int
memcpy_record (VsSink *s, const CUpti_ActivityMemcpy6 *r)
{
  int64_t dev = device_id (s, r->deviceId);
  if (dev == -1)
    return -1;
  VsMemcpy m = {
    .start_ns = (int64_t)r->start,
    .end_ns = (int64_t)r->end,
    .process_id = s->process_id,
    .device_id = dev,
    .stream = r->streamId,
    .correlation = r->correlationId,
    .copy_kind = copy_kind_name (r->copyKind),
    .src_kind = mem_kind_name (r->srcKind),
    .dst_kind = mem_kind_name (r->dstKind),
    .bytes = (int64_t)r->bytes,
  };
  if (vs_writer_memcpy (s->w, &m) != 0)
    return -1;
  s->rows++;
  return 0;
}

static int
memset_record (VsSink *s, const CUpti_ActivityMemset4 *r)
{
  int64_t dev = device_id (s, r->deviceId);
  if (dev == -1)
    return -1;
  VsMemKind kind = mem_kind (r->memoryKind);
  VsMemset m = {
    .start_ns = (int64_t)r->start,
    .end_ns = (int64_t)r->end,
    .process_id = s->process_id,
    .device_id = dev,
    .stream = r->streamId,
    .correlation = r->correlationId,
    .bytes = (int64_t)r->bytes,
    .value = r->value,
    .mem_kind = kind ? (int64_t)kind : VS_UNKNOWN,
  };
  if (vs_writer_memset (s->w, &m) != 0)
    return -1;
  s->rows++;
  return 0;
}

/* Walks every record of the buffer.  Returns records seen, or -1. */
int64_t
vs_sink_process_buffer (VsSink *s, uint8_t *buffer, size_t valid)
{
  CUpti_Activity *rec = NULL;
  int64_t seen = 0;
  if (valid == 0)
    return 0;
  while (cuptiActivityGetNextRecord (buffer, valid, &rec) == CUPTI_SUCCESS)
    {
      int rc = 0;
      seen++;
      switch (rec->kind)
        {
        case CUPTI_ACTIVITY_KIND_MEMORY2:
          rc = memory_record (s, (const CUpti_ActivityMemory4 *)rec);
          break;
        case CUPTI_ACTIVITY_KIND_MEMORY_POOL:
          rc = pool_record (s, (const CUpti_ActivityMemoryPool3 *)rec);
          break;
        case CUPTI_ACTIVITY_KIND_DEVICE:
          rc = device_record (s, (const CUpti_ActivityDevice5 *)rec);
          break;
        case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
        case CUPTI_ACTIVITY_KIND_KERNEL:
          rc = kernel_record (s, (const CUpti_ActivityKernel10 *)rec);
          break;
        case CUPTI_ACTIVITY_KIND_MEMCPY:
          rc = memcpy_record (s, (const CUpti_ActivityMemcpy6 *)rec);
          break;
        case CUPTI_ACTIVITY_KIND_MEMSET:
          rc = memset_record (s, (const CUpti_ActivityMemset4 *)rec);
          break;
        default:
          break;
        }
      if (rc != 0)
        return -1;
    }
  return seen;
}

/* Handles one item from an application thread. */
int
vs_sink_process_item (VsSink *s, const VsItem *it)
{
  switch ((VsItemType)it->type)
    {
    case VS_ITEM_ALLOC_CALL:
      {
        VsCorrSlot *slot = &s->corr[it->correlation & (VS_CORR_SLOTS - 1)];
        slot->correlation = it->correlation;
        slot->tid = it->tid;
        slot->range = it->range;
        slot->stack = it->stack;
        return 0;
      }
    case VS_ITEM_FREE_CALL:
      if (it->stack != 0)
        map_put (&s->free_stacks, it->address, it->stack);
      if (it->tid > 0)
        map_put (&s->free_tids, it->address, (uint64_t)it->tid);
      return 0;
    case VS_ITEM_STACK:
      {
        VsStackBlob *b = it->blob;
        int64_t id = b ? vs_stacks_add (s->stacks, b) : VS_UNKNOWN;
        vs_stack_blob_free (b);
        if (id == -1)
          return -1;
        if (id > 0)
          map_put (&s->stack_ids, it->stack, (uint64_t)id);
        return 0;
      }
    case VS_ITEM_VMM_MAP:
    case VS_ITEM_VMM_UNMAP:
      {
        VsMap *m = it->type == VS_ITEM_VMM_MAP ? &s->vmm_maps : &s->vmm_unmaps;
        uint64_t n = 0;
        map_get (m, it->address, &n);
        map_put (m, it->address, n + 1);
        if (it->stack != 0)
          map_put (it->type == VS_ITEM_VMM_MAP ? &s->map_stacks : &s->free_stacks, it->address,
                   it->stack);
        return 0;
      }
    case VS_ITEM_FAILED_ALLOC:
      {
        int64_t dev = it->device != UINT32_MAX ? device_id (s, it->device) : VS_UNKNOWN;
        if (dev == -1)
          return -1;
        VsFailedAlloc f = {
          .ts = it->ts,
          .process_id = s->process_id,
          .tid = it->tid,
          .device_id = dev,
          .allocator_id = VS_UNKNOWN,
          .api = it->api,
          .requested_bytes = it->bytes,
          .error = it->error,
          .error_name = it->text[0] ? it->text : NULL,
          .device_free_bytes = it->free_bytes,
          .device_total_bytes = it->total_bytes,
          .correlation = it->correlation ? (int64_t)it->correlation : VS_UNKNOWN,
          .stack_id = stack_id (s, it->stack),
          .range_id = range_id (s, it->range),
        };
        if (vs_writer_failed_alloc (s->w, &f) != 0)
          return -1;
        s->rows++;
        return 0;
      }
    case VS_ITEM_RANGE_BEGIN:
      {
        int64_t parent = range_id (s, it->parent);
        VsRange r = {
          .process_id = s->process_id,
          .tid = it->tid,
          .domain = it->domain[0] ? it->domain : NULL,
          .name = it->text,
          .start_ns = it->ts,
          .end_ns = VS_UNKNOWN,
          .parent_id = parent,
          .depth = it->depth,
        };
        int64_t id = vs_writer_add_range (s->w, &r);
        if (id == -1)
          return -1;
        range_put (s, it->range, id);
        s->rows++;
        return 0;
      }
    case VS_ITEM_RANGE_END:
      {
        int64_t id = range_id (s, it->range);
        if (id == VS_UNKNOWN)
          return 0; /* its begin was dropped or came before recording started */
        return vs_writer_end_range (s->w, id, it->ts);
      }
    }
  return 0;
}

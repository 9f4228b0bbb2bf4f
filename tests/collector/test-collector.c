/* SPDX-License-Identifier: MIT */
/* test-collector.c — the collector's record and callback processing,
 * driven with hand-built CUPTI data on a machine without a GPU.
 *
 * The real cuptiActivityGetNextRecord walks buffers built here; callbacks
 * get CUpti_CallbackData filled in memory; NVTX gets a fake export table.
 * Rows go through the real writer into a real SQLite file and are checked
 * with SQL.
 */
#include <cupti.h>
#include <glib.h>
#include <glib/gstdio.h>
#include <nvtx3/nvToolsExt.h>
#include <sqlite3.h>
#include <string.h>

#include "vs-collector-private.h"
#include "vs-identity.h"
#include "vs-merge.h"
#include "../vs-test-records.h"
#include "../vs-test-trace-file.h"

int InitializeInjectionNvtx2 (NvtxGetExportTableFunc_t get_export_table);

typedef struct
{
  char *dir, *path;
  VsWriter *w;
  int64_t process_id;
  VsSink *sink;
  uint8_t *buf;
  size_t used;
} Fixture;

static void
fixture_setup (Fixture *f, gconstpointer data)
{
  f->w = vs_test_trace_file_create ("vs-collector-XXXXXX", "t.db", &f->dir, &f->path);
  VsProcess p = vs_writer_process_started (42, 1, "test", NULL, 1000);
  f->process_id = vs_writer_add_process (f->w, &p);
  g_assert_cmpint (f->process_id, >, 0);
  f->sink = vs_sink_new (f->w, f->process_id);
  f->buf = g_malloc0 (1 << 16);
  f->used = 0;
}

static void
fixture_teardown (Fixture *f, gconstpointer data)
{
  vs_sink_free (f->sink);
  if (f->w)
    vs_writer_close (f->w, false, NULL, NULL, NULL, 0);
  vs_test_trace_file_remove (f->dir, f->path);
  g_free (f->buf);
}

/* Appends a record to the fixture's buffer, packed at its struct size. */
static void *
append (Fixture *f, size_t size)
{
  void *r = f->buf + f->used;
  f->used += (size + 7) & ~(size_t)7;
  g_assert_cmpuint (f->used, <=, 1 << 16);
  return r;
}

static void
add_device (Fixture *f, uint32_t id, unsigned char first_uuid_byte)
{
  CUpti_ActivityDevice5 *d = append (f, sizeof *d);
  d->kind = CUPTI_ACTIVITY_KIND_DEVICE;
  d->id = id;
  d->globalMemorySize = 150109880320ull;
  d->name = "Test GPU";
  memset (d->uuid.bytes, 0x11, sizeof d->uuid.bytes);
  d->uuid.bytes[0] = (char)first_uuid_byte;
}

static CUpti_ActivityMemory4 *
add_memory (Fixture *f, int op, int kind, uint64_t addr, uint64_t bytes, uint64_t ts, uint32_t corr)
{
  CUpti_ActivityMemory4 *m = append (f, sizeof *m);
  m->kind = CUPTI_ACTIVITY_KIND_MEMORY2;
  m->memoryOperationType = op;
  m->memoryKind = kind;
  m->address = addr;
  m->bytes = bytes;
  m->timestamp = ts;
  m->correlationId = corr;
  m->streamId = CUPTI_INVALID_STREAM_ID;
  m->deviceId = 0;
  return m;
}

static void
flush_buffer (Fixture *f)
{
  int64_t n = vs_sink_process_buffer (f->sink, f->buf, f->used);
  g_assert_cmpint (n, >, 0);
  memset (f->buf, 0, f->used);
  f->used = 0;
  g_assert_cmpint (vs_writer_commit (f->w), ==, 0);
}

/* One integer from a query on the fixture's trace. */
static int64_t
q_int (Fixture *f, const char *sql)
{
  sqlite3 *db = vs_writer_db (f->w);
  sqlite3_stmt *s = NULL;
  g_assert_cmpint (sqlite3_prepare_v2 (db, sql, -1, &s, NULL), ==, SQLITE_OK);
  g_assert_cmpint (sqlite3_step (s), ==, SQLITE_ROW);
  int64_t v = sqlite3_column_type (s, 0) == SQLITE_NULL ? -1 : sqlite3_column_int64 (s, 0);
  sqlite3_finalize (s);
  return v;
}

static char *
q_text (Fixture *f, const char *sql)
{
  sqlite3 *db = vs_writer_db (f->w);
  sqlite3_stmt *s = NULL;
  g_assert_cmpint (sqlite3_prepare_v2 (db, sql, -1, &s, NULL), ==, SQLITE_OK);
  g_assert_cmpint (sqlite3_step (s), ==, SQLITE_ROW);
  char *v = g_strdup ((const char *)sqlite3_column_text (s, 0));
  sqlite3_finalize (s);
  return v;
}

/* Every memory kind becomes a mem_event row of the right kind; a release
 * delivered before its allocation is kept as written (pairing is the
 * finalizer's); the device comes from its DEVICE record, by uuid. */
static void
test_memory_records (Fixture *f, gconstpointer data)
{
  add_device (f, 0, 0xab);
  add_memory (f, CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_RELEASE, CUPTI_ACTIVITY_MEMORY_KIND_DEVICE,
              0x7000, 4096, 2000, 0);
  add_memory (f, CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION, CUPTI_ACTIVITY_MEMORY_KIND_DEVICE,
              0x7000, 4096, 1500, 7);
  add_memory (f, CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION, CUPTI_ACTIVITY_MEMORY_KIND_PINNED,
              0x9000, 100, 1600, 8);
  add_memory (f, CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION,
              CUPTI_ACTIVITY_MEMORY_KIND_MANAGED, 0xa000, 200, 1700, 9);
  add_memory (f, CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION,
              CUPTI_ACTIVITY_MEMORY_KIND_DEVICE_STATIC, 0xb000, 300, 1800, 0);
  add_memory (f, CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION,
              CUPTI_ACTIVITY_MEMORY_KIND_UNKNOWN, 0xc000, 1, 1900, 0);
  flush_buffer (f);

  g_assert_cmpint (q_int (f, "SELECT count(*) FROM device"), ==, 1);
  char *uuid = q_text (f, "SELECT uuid FROM device");
  g_assert_cmpstr (uuid, ==, "GPU-ab111111-1111-1111-1111-111111111111");
  g_free (uuid);
  g_assert_cmpint (q_int (f, "SELECT total_bytes FROM device"), ==, 150109880320);
  g_assert_cmpint (q_int (f, "SELECT count(*) FROM mem_event"), ==, 5);
  g_assert_cmpint (q_int (f, "SELECT ts FROM mem_event WHERE op = 2"), ==, 2000);
  g_assert_cmpint (q_int (f, "SELECT correlation FROM mem_event WHERE op = 2"), ==, -1);
  g_assert_cmpint (q_int (f, "SELECT kind FROM mem_event WHERE address = 0x9000"), ==,
                   VS_MEM_KIND_PINNED);
  g_assert_cmpint (q_int (f, "SELECT kind FROM mem_event WHERE address = 0xa000"), ==,
                   VS_MEM_KIND_MANAGED);
  g_assert_cmpint (q_int (f, "SELECT kind FROM mem_event WHERE address = 0xb000"), ==,
                   VS_MEM_KIND_STATIC);
  g_assert_cmpint (q_int (f, "SELECT count(*) FROM mem_event WHERE address = 0xc000"), ==, 0);
  g_assert_cmpint (q_int (f, "SELECT device_id FROM mem_event WHERE address = 0x7000 AND op = 1"),
                   ==, q_int (f, "SELECT id FROM device"));
}

/* Async allocations carry their pool (an allocator row named after the
 * pool's address) and the pool's size/utilized; MEMORY_POOL records become
 * pool_event rows of the same pool. */
static void
test_pools (Fixture *f, gconstpointer data)
{
  add_device (f, 0, 0x01);
  CUpti_ActivityMemoryPool3 *p = append (f, sizeof *p);
  p->kind = CUPTI_ACTIVITY_KIND_MEMORY_POOL;
  p->memoryPoolOperationType = CUPTI_ACTIVITY_MEMORY_POOL_OPERATION_TYPE_CREATED;
  p->memoryPoolType = CUPTI_ACTIVITY_MEMORY_POOL_TYPE_LOCAL;
  p->address = 0x302000000;
  p->size = 0;
  p->timestamp = 100;
  CUpti_ActivityMemory4 *m
      = add_memory (f, CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION,
                    CUPTI_ACTIVITY_MEMORY_KIND_DEVICE, 0x302000000, 1 << 20, 200, 5);
  m->memoryPoolConfig.memoryPoolType = CUPTI_ACTIVITY_MEMORY_POOL_TYPE_LOCAL;
  m->memoryPoolConfig.address = 0x302000000;
  m->memoryPoolConfig.pool.size = 32 << 20;
  m->memoryPoolConfig.utilizedSize = 1 << 20;
  m->isAsync = 1;
  m->streamId = 13;
  p = append (f, sizeof *p);
  p->kind = CUPTI_ACTIVITY_KIND_MEMORY_POOL;
  p->memoryPoolOperationType = CUPTI_ACTIVITY_MEMORY_POOL_OPERATION_TYPE_TRIMMED;
  p->memoryPoolType = CUPTI_ACTIVITY_MEMORY_POOL_TYPE_LOCAL;
  p->address = 0x302000000;
  p->size = 2 << 20;
  p->utilizedSize = 1 << 20;
  p->minBytesToKeep = 2 << 20;
  p->timestamp = 300;
  flush_buffer (f);

  g_assert_cmpint (q_int (f, "SELECT count(*) FROM allocator WHERE kind = 'pool'"), ==, 1);
  char *name = q_text (f, "SELECT name FROM allocator");
  g_assert_cmpstr (name, ==, "pool:0x302000000");
  g_free (name);
  g_assert_cmpint (q_int (f, "SELECT kind FROM mem_event"), ==, VS_MEM_KIND_ASYNC);
  g_assert_cmpint (q_int (f, "SELECT pool_size FROM mem_event"), ==, 32 << 20);
  g_assert_cmpint (q_int (f, "SELECT pool_utilized FROM mem_event"), ==, 1 << 20);
  g_assert_cmpint (q_int (f, "SELECT stream FROM mem_event"), ==, 13);
  g_assert_cmpint (q_int (f, "SELECT pool_id FROM mem_event"), ==,
                   q_int (f, "SELECT id FROM allocator"));
  g_assert_cmpint (q_int (f, "SELECT count(*) FROM pool_event"), ==, 2);
  g_assert_cmpint (q_int (f, "SELECT op FROM pool_event WHERE ts = 300"), ==, VS_POOL_OP_TRIMMED);
  g_assert_cmpint (q_int (f, "SELECT min_bytes_to_keep FROM pool_event WHERE ts = 300"), ==,
                   2 << 20);
  g_assert_cmpint (q_int (f, "SELECT count(DISTINCT pool_id) FROM pool_event"), ==, 1);
}

/* Kernels, copies and memsets with their fields. */
static void
test_activity (Fixture *f, gconstpointer data)
{
  add_device (f, 0, 0x02);
  CUpti_ActivityKernel10 *k = append (f, sizeof *k);
  k->kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
  k->name = "_Z8vs_touchPcm";
  k->start = 10;
  k->end = 20;
  k->gridX = 4;
  k->gridY = k->gridZ = 1;
  k->blockX = 256;
  k->blockY = k->blockZ = 1;
  k->registersPerThread = 16;
  k->streamId = 7;
  k->correlationId = 99;
  CUpti_ActivityMemcpy6 *c = append (f, sizeof *c);
  c->kind = CUPTI_ACTIVITY_KIND_MEMCPY;
  c->copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_HTOD;
  c->srcKind = CUPTI_ACTIVITY_MEMORY_KIND_PINNED;
  c->dstKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
  c->bytes = 4096;
  c->start = 30;
  c->end = 40;
  CUpti_ActivityMemset4 *s = append (f, sizeof *s);
  s->kind = CUPTI_ACTIVITY_KIND_MEMSET;
  s->bytes = 512;
  s->value = 0xff;
  s->memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
  s->start = 50;
  s->end = 60;
  flush_buffer (f);

  char *name = q_text (f, "SELECT name FROM kernel");
  /* Demangled when this process has libstdc++'s demangler, else as is. */
  g_assert_true (strcmp (name, "vs_touch(char*, unsigned long)") == 0
                 || strcmp (name, "_Z8vs_touchPcm") == 0);
  g_free (name);
  g_assert_cmpint (q_int (f, "SELECT grid_x * block_x FROM kernel"), ==, 1024);
  g_assert_cmpint (q_int (f, "SELECT end_ns - start_ns FROM kernel"), ==, 10);
  g_assert_cmpint (q_int (f, "SELECT registers FROM kernel"), ==, 16);
  char *ck = q_text (f, "SELECT copy_kind || ' ' || src_kind || ' ' || dst_kind FROM memcpy");
  g_assert_cmpstr (ck, ==, "HtoD pinned device");
  g_free (ck);
  g_assert_cmpint (q_int (f, "SELECT bytes FROM memcpy"), ==, 4096);
  g_assert_cmpint (q_int (f, "SELECT value FROM memset"), ==, 0xff);
  g_assert_cmpint (q_int (f, "SELECT mem_kind FROM memset"), ==, VS_MEM_KIND_DEVICE);
}

/* --- callbacks ---------------------------------------------------------- */

static int
fake_mem_info (size_t *free_bytes, size_t *total_bytes)
{
  *free_bytes = 1000;
  *total_bytes = 5000;
  return 0;
}

static int
fake_device (void *context)
{
  return 0;
}

/* Calls the handler as CUPTI would for one API site. */
static void
call (VsCallbackState *st, int domain, uint32_t cbid, int site, const void *params, int rc,
      uint32_t corr, const char *name)
{
  CUpti_CallbackData cd = { 0 };
  cd.callbackSite = site;
  cd.functionName = name;
  cd.functionParams = params;
  cd.functionReturnValue = &rc;
  cd.correlationId = corr;
  vs_callback_handler (st, domain, cbid, &cd);
}

/* Drains the queue into the sink; returns the number of items. */
static size_t
drain (Fixture *f, VsQueue *q)
{
  VsItem items[64];
  size_t n = vs_queue_pop (q, items, 64);
  for (size_t i = 0; i < n; i++)
    g_assert_cmpint (vs_sink_process_item (f->sink, &items[i]), ==, 0);
  return n;
}

/* A failed cudaMalloc is seen by the runtime and the nested driver
 * callback: one failed_alloc row, under the runtime's name, with the
 * request and the device's free/total.  A failed driver-only call is one
 * row too; an error that is not out-of-memory is only counted. */
static void
test_failed_alloc (Fixture *f, gconstpointer data)
{
  add_device (f, 0, 0x03);
  flush_buffer (f);
  VsQueue q;
  g_assert_cmpint (vs_queue_init (&q, 64), ==, 0);
  VsCallbackState st = { .queue = &q, .mem_info = fake_mem_info, .current_device = fake_device };
  atomic_store (&st.enabled, true);

  void *ptr = NULL;
  cudaMalloc_v3020_params rp = { .devPtr = &ptr, .size = 1ull << 40 };
  CUdeviceptr dptr = 0;
  cuMemAlloc_v2_params dp = { .dptr = &dptr, .bytesize = 1ull << 40 };
  call (&st, CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaMalloc_v3020,
        CUPTI_API_ENTER, &rp, 0, 11, "cudaMalloc_v3020");
  call (&st, CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuMemAlloc_v2, CUPTI_API_ENTER,
        &dp, 0, 11, "cuMemAlloc_v2");
  call (&st, CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuMemAlloc_v2, CUPTI_API_EXIT, &dp,
        2, 11, "cuMemAlloc_v2");
  call (&st, CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaMalloc_v3020, CUPTI_API_EXIT,
        &rp, 2, 11, "cudaMalloc_v3020");
  /* Driver only. */
  dp.bytesize = 2ull << 40;
  call (&st, CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuMemAlloc_v2, CUPTI_API_EXIT, &dp,
        2, 12, "cuMemAlloc_v2");
  /* A capability probe failing with CUDA_ERROR_NOT_SUPPORTED. */
  CUmemAllocationProp prop = { 0 };
  CUmemGenericAllocationHandle h;
  cuMemCreate_params cp = { .handle = &h, .size = 1 << 21, .prop = &prop };
  call (&st, CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuMemCreate, CUPTI_API_EXIT, &cp,
        801, 13, "cuMemCreate");

  g_assert_cmpuint (drain (f, &q), ==, 2);
  g_assert_cmpint (atomic_load (&st.failed_other), ==, 1);
  g_assert_cmpint (vs_writer_commit (f->w), ==, 0);
  g_assert_cmpint (q_int (f, "SELECT count(*) FROM failed_alloc"), ==, 2);
  char *api
      = q_text (f, "SELECT api || ' ' || error_name FROM failed_alloc WHERE correlation = 11");
  g_assert_cmpstr (api, ==, "cudaMalloc cudaErrorMemoryAllocation");
  g_free (api);
  api = q_text (f, "SELECT api || ' ' || error_name FROM failed_alloc WHERE correlation = 12");
  g_assert_cmpstr (api, ==, "cuMemAlloc_v2 CUDA_ERROR_OUT_OF_MEMORY");
  g_free (api);
  g_assert_cmpint (q_int (f, "SELECT requested_bytes FROM failed_alloc WHERE correlation = 11"), ==,
                   1ll << 40);
  g_assert_cmpint (q_int (f, "SELECT device_free_bytes FROM failed_alloc WHERE correlation = 12"),
                   ==, 1000);
  g_assert_cmpint (q_int (f, "SELECT device_total_bytes FROM failed_alloc WHERE correlation = 12"),
                   ==, 5000);
  g_assert_cmpint (q_int (f, "SELECT device_id FROM failed_alloc WHERE correlation = 12"), ==,
                   q_int (f, "SELECT id FROM device"));
  g_assert_cmpint (q_int (f, "SELECT tid FROM failed_alloc WHERE correlation = 12"), ==,
                   vs_gettid ());
  /* Nothing was recorded while disabled, and our own calls are ignored. */
  atomic_store (&st.enabled, false);
  call (&st, CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuMemAlloc_v2, CUPTI_API_EXIT, &dp,
        2, 14, "cuMemAlloc_v2");
  atomic_store (&st.enabled, true);
  vs_in_collector++;
  call (&st, CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuMemAlloc_v2, CUPTI_API_EXIT, &dp,
        2, 15, "cuMemAlloc_v2");
  vs_in_collector--;
  g_assert_cmpuint (drain (f, &q), ==, 0);
  vs_queue_destroy (&q);
}

/* A successful allocation call gives its MEMORY2 record a thread; a
 * cuMemMap/cuMemUnmap marks the DEVICE records at its address as vmm,
 * counted once. */
static void
test_correlation_and_vmm (Fixture *f, gconstpointer data)
{
  VsQueue q;
  g_assert_cmpint (vs_queue_init (&q, 64), ==, 0);
  VsCallbackState st = { .queue = &q, .mem_info = fake_mem_info, .current_device = fake_device };
  atomic_store (&st.enabled, true);
  void *ptr = NULL;
  cudaMalloc_v3020_params rp = { .devPtr = &ptr, .size = 4096 };
  call (&st, CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaMalloc_v3020,
        CUPTI_API_ENTER, &rp, 0, 21, "cudaMalloc_v3020");
  call (&st, CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaMalloc_v3020, CUPTI_API_EXIT,
        &rp, 0, 21, "cudaMalloc_v3020");
  cuMemMap_params mp = { .ptr = 0x50000000, .size = 2 << 20 };
  call (&st, CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuMemMap, CUPTI_API_EXIT, &mp, 0,
        22, "cuMemMap");
  cuMemUnmap_params up = { .ptr = 0x50000000, .size = 2 << 20 };
  call (&st, CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuMemUnmap, CUPTI_API_EXIT, &up, 0,
        23, "cuMemUnmap");
  g_assert_cmpuint (drain (f, &q), ==, 3);

  add_device (f, 0, 0x04);
  add_memory (f, CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION, CUPTI_ACTIVITY_MEMORY_KIND_DEVICE,
              0x7000, 4096, 100, 21);
  add_memory (f, CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION, CUPTI_ACTIVITY_MEMORY_KIND_DEVICE,
              0x50000000, 2 << 20, 200, 0);
  add_memory (f, CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_RELEASE, CUPTI_ACTIVITY_MEMORY_KIND_DEVICE,
              0x50000000, 2 << 20, 300, 0);
  /* A later plain cudaMalloc at the same address is device again. */
  add_memory (f, CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION, CUPTI_ACTIVITY_MEMORY_KIND_DEVICE,
              0x50000000, 2 << 20, 400, 30);
  flush_buffer (f);
  g_assert_cmpint (q_int (f, "SELECT tid FROM mem_event WHERE correlation = 21"), ==, vs_gettid ());
  g_assert_cmpint (q_int (f, "SELECT count(*) FROM mem_event WHERE kind = 6"), ==, 2);
  g_assert_cmpint (q_int (f, "SELECT kind FROM mem_event WHERE ts = 400"), ==, VS_MEM_KIND_DEVICE);
  g_assert_cmpint (q_int (f, "SELECT tid FROM mem_event WHERE ts = 400"), ==, -1);
  vs_queue_destroy (&q);
}

/* --- NVTX --------------------------------------------------------------- */

static NvtxFunctionPointer core_slots[NVTX_CBID_CORE_SIZE];
static NvtxFunctionPointer *core_table[NVTX_CBID_CORE_SIZE];
static NvtxFunctionPointer core2_slots[NVTX_CBID_CORE2_SIZE];
static NvtxFunctionPointer *core2_table[NVTX_CBID_CORE2_SIZE];

static int NVTX_API
fake_get_table (NvtxCallbackModule module, NvtxFunctionTable *out, unsigned int *size)
{
  if (module == NVTX_CB_MODULE_CORE)
    {
      for (int i = 0; i < NVTX_CBID_CORE_SIZE; i++)
        core_table[i] = &core_slots[i];
      *out = core_table;
      *size = NVTX_CBID_CORE_SIZE;
      return 1;
    }
  if (module == NVTX_CB_MODULE_CORE2)
    {
      for (int i = 0; i < NVTX_CBID_CORE2_SIZE; i++)
        core2_table[i] = &core2_slots[i];
      *out = core2_table;
      *size = NVTX_CBID_CORE2_SIZE;
      return 1;
    }
  return 0;
}

static const NvtxExportTableCallbacks fake_callbacks
    = { sizeof (NvtxExportTableCallbacks), fake_get_table };

static const void *NVTX_API
fake_export_table (uint32_t id)
{
  return id == NVTX_ETID_CALLBACKS ? &fake_callbacks : NULL;
}

/* Push/pop nest with parents and depths, domains keep their own names,
 * start/end ranges are recorded, and an allocation made inside a range is
 * stamped with the innermost one. */
static void
test_nvtx (Fixture *f, gconstpointer data)
{
  VsQueue q;
  g_assert_cmpint (vs_queue_init (&q, 64), ==, 0);
  g_assert_cmpint (InitializeInjectionNvtx2 (fake_export_table), ==, 1);
  nvtxRangePushA_impl_fntype push_a
      = (nvtxRangePushA_impl_fntype)core_slots[NVTX_CBID_CORE_RangePushA];
  nvtxRangePop_impl_fntype pop = (nvtxRangePop_impl_fntype)core_slots[NVTX_CBID_CORE_RangePop];
  nvtxRangeStartA_impl_fntype start_a
      = (nvtxRangeStartA_impl_fntype)core_slots[NVTX_CBID_CORE_RangeStartA];
  nvtxRangeEnd_impl_fntype end = (nvtxRangeEnd_impl_fntype)core_slots[NVTX_CBID_CORE_RangeEnd];
  nvtxDomainCreateA_impl_fntype dcreate
      = (nvtxDomainCreateA_impl_fntype)core2_slots[NVTX_CBID_CORE2_DomainCreateA];
  nvtxDomainRangePushEx_impl_fntype dpush
      = (nvtxDomainRangePushEx_impl_fntype)core2_slots[NVTX_CBID_CORE2_DomainRangePushEx];
  nvtxDomainRangePop_impl_fntype dpop
      = (nvtxDomainRangePop_impl_fntype)core2_slots[NVTX_CBID_CORE2_DomainRangePop];
  g_assert_nonnull (push_a);
  g_assert_nonnull (dpush);

  /* Before recording starts: stacks are kept, nothing is queued. */
  push_a ("before");
  pop ();
  vs_nvtx_set_queue (&q);
  g_assert_cmpint (push_a ("epoch"), ==, 0);
  g_assert_cmpint (push_a ("step"), ==, 1);
  nvtxDomainHandle_t dom = dcreate ("mylib");
  nvtxEventAttributes_t a = { 0 };
  a.version = NVTX_VERSION;
  a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
  a.messageType = NVTX_MESSAGE_TYPE_ASCII;
  a.message.ascii = "layer";
  dpush (dom, &a);
  uint64_t innermost = vs_nvtx_current_range ();
  g_assert_cmpuint (innermost, !=, 0);

  /* An allocation inside "layer". */
  VsCallbackState st = { .queue = &q, .mem_info = fake_mem_info, .current_device = fake_device };
  atomic_store (&st.enabled, true);
  void *ptr = NULL;
  cudaMalloc_v3020_params rp = { .devPtr = &ptr, .size = 4096 };
  call (&st, CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaMalloc_v3020, CUPTI_API_EXIT,
        &rp, 0, 31, "cudaMalloc_v3020");

  g_assert_cmpint (dpop (dom), ==, 2);
  g_assert_cmpint (pop (), ==, 1);
  nvtxRangeId_t r = start_a ("async work");
  g_assert_cmpint (pop (), ==, 0);
  g_assert_cmpint (pop (), ==, -1);
  end (r);
  vs_nvtx_set_queue (NULL);
  drain (f, &q);

  add_device (f, 0, 0x05);
  add_memory (f, CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION, CUPTI_ACTIVITY_MEMORY_KIND_DEVICE,
              0x7000, 4096, vs_now_ns (), 31);
  flush_buffer (f);

  g_assert_cmpint (q_int (f, "SELECT count(*) FROM nvtx_range"), ==, 4);
  g_assert_cmpint (q_int (f, "SELECT count(*) FROM nvtx_range WHERE end_ns IS NULL"), ==, 0);
  g_assert_cmpint (q_int (f, "SELECT depth FROM nvtx_range WHERE name = 'layer'"), ==, 2);
  char *dn = q_text (f, "SELECT domain FROM nvtx_range WHERE name = 'layer'");
  g_assert_cmpstr (dn, ==, "mylib");
  g_free (dn);
  g_assert_cmpint (q_int (f, "SELECT parent_id FROM nvtx_range WHERE name = 'layer'"), ==,
                   q_int (f, "SELECT id FROM nvtx_range WHERE name = 'step'"));
  g_assert_cmpint (q_int (f, "SELECT parent_id FROM nvtx_range WHERE name = 'step'"), ==,
                   q_int (f, "SELECT id FROM nvtx_range WHERE name = 'epoch'"));
  g_assert_cmpint (q_int (f, "SELECT count(*) FROM nvtx_range WHERE name = 'async work'"), ==, 1);
  g_assert_cmpint (q_int (f, "SELECT range_id FROM mem_event"), ==,
                   q_int (f, "SELECT id FROM nvtx_range WHERE name = 'layer'"));
  vs_queue_destroy (&q);
}

/* The queue drops (and counts) rather than block when full, and hands out
 * range keys only to items it kept. */
static void
test_queue_full (void)
{
  VsQueue q;
  g_assert_cmpint (vs_queue_init (&q, 4), ==, 0);
  VsItem it = { .type = VS_ITEM_RANGE_BEGIN };
  for (int i = 0; i < 4; i++)
    g_assert_cmpuint (vs_queue_push_range (&q, &it), ==, (uint64_t)i + 1);
  g_assert_cmpuint (vs_queue_push_range (&q, &it), ==, 0);
  g_assert_false (vs_queue_push (&q, &it));
  g_assert_cmpuint (atomic_load (&q.dropped), ==, 2);
  VsItem out[8];
  g_assert_cmpuint (vs_queue_pop (&q, out, 8), ==, 4);
  g_assert_cmpuint (out[3].range, ==, 4);
  g_assert_cmpuint (vs_queue_push_range (&q, &it), ==, 5);
  vs_queue_destroy (&q);
}

static bool
stop_progress (uint64_t done, uint64_t total, void *data)
{
  return false;
}

/* A process's job and rank come from the launcher's variables, the
 * launcher's own before the batch system's, and record's --job first. */
static void
test_identity (void)
{
  static const char *const vars[] = { "RANK",
                                      "OMPI_COMM_WORLD_RANK",
                                      "PMI_RANK",
                                      "SLURM_PROCID",
                                      "LOCAL_RANK",
                                      "OMPI_COMM_WORLD_LOCAL_RANK",
                                      "MPI_LOCALRANKID",
                                      "SLURM_LOCALID",
                                      "WORLD_SIZE",
                                      "OMPI_COMM_WORLD_SIZE",
                                      "PMI_SIZE",
                                      "SLURM_NTASKS",
                                      "VRAMSCOPE_JOB_ID",
                                      "SLURM_JOB_ID",
                                      "TORCHELASTIC_RUN_ID",
                                      "PBS_JOBID",
                                      "LSB_JOBID" };
  VsIdentity id;

  for (size_t i = 0; i < G_N_ELEMENTS (vars); i++)
    g_unsetenv (vars[i]);
  vs_identity_read (&id);
  g_assert_cmpint (id.rank, ==, VS_UNKNOWN);
  g_assert_cmpint (id.local_rank, ==, VS_UNKNOWN);
  g_assert_cmpint (id.world_size, ==, VS_UNKNOWN);
  g_assert_null (id.job_id);
  g_assert_null (id.job_id_source);

  /* Slurm alone, as under srun. */
  g_setenv ("SLURM_PROCID", "5", TRUE);
  g_setenv ("SLURM_LOCALID", "1", TRUE);
  g_setenv ("SLURM_NTASKS", "8", TRUE);
  g_setenv ("SLURM_JOB_ID", "4242", TRUE);
  g_setenv ("TORCHELASTIC_RUN_ID", "none", TRUE);
  vs_identity_read (&id);
  g_assert_cmpint (id.rank, ==, 5);
  g_assert_cmpint (id.local_rank, ==, 1);
  g_assert_cmpint (id.world_size, ==, 8);
  g_assert_cmpstr (id.job_id, ==, "4242");
  g_assert_cmpstr (id.job_id_source, ==, "SLURM_JOB_ID");

  /* MPICH's PMI, then torchrun inside the allocation: the launcher wins. */
  g_setenv ("PMI_RANK", "6", TRUE);
  g_setenv ("PMI_SIZE", "16", TRUE);
  vs_identity_read (&id);
  g_assert_cmpint (id.rank, ==, 6);
  g_assert_cmpint (id.world_size, ==, 16);
  g_setenv ("RANK", "3", TRUE);
  g_setenv ("LOCAL_RANK", "3", TRUE);
  g_setenv ("WORLD_SIZE", "4", TRUE);
  vs_identity_read (&id);
  g_assert_cmpint (id.rank, ==, 3);
  g_assert_cmpint (id.local_rank, ==, 3);
  g_assert_cmpint (id.world_size, ==, 4);

  /* Values that are not whole numbers ≥ 0 are passed over. */
  g_setenv ("RANK", "-1", TRUE);
  g_setenv ("OMPI_COMM_WORLD_RANK", "2x", TRUE);
  vs_identity_read (&id);
  g_assert_cmpint (id.rank, ==, 6);

  /* torchrun's placeholder run id is no job; a real one is, after Slurm's;
   * record --job wins over everything. */
  g_unsetenv ("SLURM_JOB_ID");
  vs_identity_read (&id);
  g_assert_null (id.job_id);
  g_setenv ("TORCHELASTIC_RUN_ID", "resnet-7", TRUE);
  g_setenv ("LSB_JOBID", "99", TRUE);
  vs_identity_read (&id);
  g_assert_cmpstr (id.job_id, ==, "resnet-7");
  g_assert_cmpstr (id.job_id_source, ==, "TORCHELASTIC_RUN_ID");
  g_setenv ("VRAMSCOPE_JOB_ID", "nightly", TRUE);
  vs_identity_read (&id);
  g_assert_cmpstr (id.job_id, ==, "nightly");
  g_assert_cmpstr (id.job_id_source, ==, "VRAMSCOPE_JOB_ID");

  for (size_t i = 0; i < G_N_ELEMENTS (vars); i++)
    g_unsetenv (vars[i]);
}

/* Two process traces on the same GPU merge into one trace: one device
 * (same uuid), two processes, every id remapped, the main program's exit
 * status on its process row, collector costs summed. */
static void
test_merge (void)
{
  char *dir = g_dir_make_tmp ("vs-merge-XXXXXX", NULL);
  char *in[2], *out = g_build_filename (dir, "run.db", NULL);
  char err[512];
  for (int i = 0; i < 2; i++)
    {
      in[i] = g_strdup_printf ("%s/p%d.db", dir, i);
      VsWriter *w = vs_writer_create (in[i], err, sizeof err);
      g_assert_nonnull (w);
      VsProcess p = { .pid = 100 + i,
                      .ppid = 1,
                      .rank = i,
                      .local_rank = i,
                      .world_size = 2,
                      .start_ns = 1000,
                      .end_ns = VS_UNKNOWN,
                      .exit_status = VS_UNKNOWN };
      int64_t pid = vs_writer_add_process (w, &p);
      /* A second, unrelated device first in process 1 shifts its ids. */
      if (i == 1)
        {
          VsDevice other = { .idx = 1, .uuid = "GPU-other", .name = "B", .total_bytes = 1 };
          vs_writer_add_device (w, &other);
        }
      VsDevice d = { .idx = 0, .uuid = "GPU-same", .name = "A", .total_bytes = 100 };
      int64_t dev = vs_writer_add_device (w, &d);
      VsAllocator a = {
        .device_id = dev, .process_id = pid, .kind = "pool", .name = "pool:0x1", .handle = 1
      };
      int64_t pool = vs_writer_add_allocator (w, &a);
      VsRange r = { .process_id = pid,
                    .tid = 5,
                    .name = "step",
                    .start_ns = 1000,
                    .end_ns = 3000,
                    .parent_id = VS_UNKNOWN,
                    .depth = 0 };
      int64_t range = vs_writer_add_range (w, &r);
      VsMemEvent e = vs_test_mem_event (2000 + i, pid, 5, dev, VS_MEM_KIND_ASYNC, VS_MEM_OP_ALLOC,
                                        0x1000 + i, 10 * (i + 1));
      e.pool_id = pool;
      e.pool_size = 100;
      e.pool_utilized = 10;
      e.correlation = 1;
      e.range_id = range;
      g_assert_cmpint (vs_writer_mem_event (w, &e), ==, 0);
      /* One kernel configuration both processes launch, one each of
       * their own: the merged trace stores three. */
      VsKernel k = vs_test_kernel (pid, dev, "gemm", 2100 + i, 2110 + i, 1, 1, 0);
      g_assert_cmpint (vs_writer_kernel (w, &k), ==, 0);
      k.start_ns = 2200 + i;
      k.end_ns = 2210 + i;
      k.name = "relu";
      k.registers = 10 + i;
      g_assert_cmpint (vs_writer_kernel (w, &k), ==, 0);
      vs_writer_set_meta_int (w, "collector_events", 10 + i);
      vs_writer_set_meta (w, "job_id", "4242");
      vs_writer_set_meta (w, "job_id_source", "SLURM_JOB_ID");
      vs_writer_set_meta_int (w, "end_ns", 5000 + i);
      g_assert_cmpint (vs_writer_close (w, false, NULL, NULL, err, sizeof err), ==, 0);
    }
  VsMergeRun run = { .main_pid = 100,
                     .exit_status = 3,
                     .start_ns = 0,
                     .end_ns = 0,
                     .command_line = "prog",
                     .host = "h",
                     .tool_version = "t" };
  g_assert_cmpint (
      vs_merge_traces (out, (const char *const *)in, 2, &run, NULL, NULL, err, sizeof err), ==, 0);
  sqlite3 *db;
  g_assert_cmpint (sqlite3_open (out, &db), ==, SQLITE_OK);
  static const struct
  {
    const char *sql;
    int64_t want;
  } checks[] = {
    { "SELECT count(*) FROM device", 2 },
    { "SELECT count(*) FROM process", 2 },
    { "SELECT count(DISTINCT device_id) FROM mem_event", 1 },
    { "SELECT count(*) FROM mem_event m JOIN device d ON d.id = m.device_id"
      " WHERE d.uuid = 'GPU-same'",
      2 },
    { "SELECT count(*) FROM mem_event m JOIN allocator a ON a.id = m.pool_id"
      " WHERE a.process_id = m.process_id",
      2 },
    { "SELECT count(*) FROM mem_event m JOIN nvtx_range r ON r.id = m.range_id"
      " WHERE r.process_id = m.process_id",
      2 },
    { "SELECT exit_status FROM process WHERE pid = 100", 3 },
    { "SELECT exit_status IS NULL FROM process WHERE pid = 101", 1 },
    { "SELECT end_ns FROM process WHERE pid = 101", 5001 },
    { "SELECT rank FROM process WHERE pid = 101", 1 },
    { "SELECT value FROM meta WHERE key = 'collector_events'", 21 },
    { "SELECT value FROM meta WHERE key = 'finalized'", 1 },
    { "SELECT value = '4242' FROM meta WHERE key = 'job_id'", 1 },
    { "SELECT value = 'SLURM_JOB_ID' FROM meta WHERE key = 'job_id_source'", 1 },
    { "SELECT count(*) FROM kernel_config", 3 },
    { "SELECT count(DISTINCT id) FROM kernel", 4 },
    { "SELECT count(*) FROM kernel WHERE name = 'gemm' AND registers = 32", 2 },
    { "SELECT sum(registers) FROM kernel WHERE name = 'relu'", 21 },
    { "SELECT sum(end_ns - start_ns) FROM kernel", 40 },
    { "SELECT count(*) FROM kernel k JOIN device d ON d.id = k.device_id"
      " JOIN process p ON p.id = k.process_id WHERE d.uuid = 'GPU-same'"
      " AND k.start_ns - p.pid IN (2000, 2100)",
      4 },
  };
  for (size_t i = 0; i < G_N_ELEMENTS (checks); i++)
    {
      sqlite3_stmt *s;
      g_assert_cmpint (sqlite3_prepare_v2 (db, checks[i].sql, -1, &s, NULL), ==, SQLITE_OK);
      g_assert_cmpint (sqlite3_step (s), ==, SQLITE_ROW);
      g_test_message ("%s", checks[i].sql);
      g_assert_cmpint (sqlite3_column_int64 (s, 0), ==, checks[i].want);
      sqlite3_finalize (s);
    }
  sqlite3_close (db);
  /* A progress callback that says stop cancels the merge. */
  char *stopped = g_build_filename (dir, "stopped.db", NULL);
  g_assert_cmpint (vs_merge_traces (stopped, (const char *const *)in, 2, &run, stop_progress, NULL,
                                    err, sizeof err),
                   ==, -1);
  g_assert_nonnull (strstr (err, "cancelled"));
  g_unlink (stopped);
  g_free (stopped);
  for (int i = 0; i < 2; i++)
    {
      char *wal = g_strconcat (in[i], "-wal", NULL), *shm = g_strconcat (in[i], "-shm", NULL);
      g_unlink (in[i]);
      g_unlink (wal);
      g_unlink (shm);
      g_free (wal);
      g_free (shm);
      g_free (in[i]);
    }
  char *wal = g_strconcat (out, "-wal", NULL), *shm = g_strconcat (out, "-shm", NULL);
  g_unlink (out);
  g_unlink (wal);
  g_unlink (shm);
  g_free (wal);
  g_free (shm);
  g_rmdir (dir);
  g_free (out);
  g_free (dir);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add ("/collector/memory-records", Fixture, NULL, fixture_setup, test_memory_records,
              fixture_teardown);
  g_test_add ("/collector/pools", Fixture, NULL, fixture_setup, test_pools, fixture_teardown);
  g_test_add ("/collector/kernels-copies-memsets", Fixture, NULL, fixture_setup, test_activity,
              fixture_teardown);
  g_test_add ("/collector/failed-alloc", Fixture, NULL, fixture_setup, test_failed_alloc,
              fixture_teardown);
  g_test_add ("/collector/correlation-and-vmm", Fixture, NULL, fixture_setup,
              test_correlation_and_vmm, fixture_teardown);
  g_test_add ("/collector/nvtx", Fixture, NULL, fixture_setup, test_nvtx, fixture_teardown);
  g_test_add_func ("/collector/queue-full", test_queue_full);
  g_test_add_func ("/collector/identity", test_identity);
  g_test_add_func ("/collector/merge", test_merge);
  return g_test_run ();
}

/* vs-nvtx.c — the collector as the NVTX injection library.
 *
 * `vramscope record` points NVTX_INJECTION64_PATH at the collector, so the
 * first NVTX call of the program loads it and calls InitializeInjectionNvtx2,
 * where the collector fills NVTX's function tables with its own range
 * functions.  Push/pop ranges (default and named domains) keep a per-thread
 * stack whose innermost entry stamps memory events; start/end ranges are
 * recorded but stamp nothing (they are not tied to a thread).
 *
 * NVTX may be used before CUDA is (or in a process that never uses CUDA):
 * until the collector runs, the stacks are kept but nothing is queued.
 * Runs on application threads; each call costs a clock read and, while
 * recording, one enqueue.
 */
#include "vs-collector-private.h"

#include <nvtx3/nvToolsExt.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <wchar.h>

#define VS_NVTX_STACK 128

typedef struct {
  uint64_t key;
  const void *domain; /* NULL: the default domain */
} VsStackEntry;

static _Thread_local VsStackEntry stack[VS_NVTX_STACK];
static _Thread_local int stack_depth; /* may exceed VS_NVTX_STACK */
static _Thread_local int64_t cached_tid;
static _Atomic(VsQueue *) nvtx_queue;
static atomic_uint_fast64_t unqueued_key = 1ull << 62; /* start/end ranges before recording */

/* A registered domain: its name, copied. */
typedef struct {
  char name[32];
} VsDomain;

int64_t
vs_gettid(void)
{
  if (cached_tid == 0)
    cached_tid = (int64_t)syscall(SYS_gettid);
  return cached_tid;
}

int64_t
vs_now_ns(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

void
vs_nvtx_set_queue(VsQueue *q)
{
  atomic_store(&nvtx_queue, q);
}

/* In a fork child the thread that forked keeps its stack; the thread id
 * changes. */
static void
reset_tid(void)
{
  cached_tid = 0;
}

uint64_t
vs_nvtx_current_range(void)
{
  int d = stack_depth < VS_NVTX_STACK ? stack_depth : VS_NVTX_STACK;
  return d > 0 ? stack[d - 1].key : 0;
}

/* Copies an NVTX message (ASCII, wide or registered) into out. */
static void
copy_message(char *out, size_t len, int type, const void *msg)
{
  out[0] = '\0';
  if (msg == NULL)
    return;
  if (type == NVTX_MESSAGE_TYPE_UNICODE) {
    const wchar_t *w = msg;
    size_t i = 0;
    for (; i + 1 < len && w[i] != 0; i++)
      out[i] = (w[i] > 0 && w[i] < 128) ? (char)w[i] : '?';
    out[i] = '\0';
    return;
  }
  /* ASCII, and registered strings, whose handle is our own copy. */
  strncpy(out, msg, len - 1);
  out[len - 1] = '\0';
}

static void
attrib_message(char *out, size_t len, const nvtxEventAttributes_t *a)
{
  if (a == NULL) {
    out[0] = '\0';
    return;
  }
  copy_message(out, len, a->messageType, (const void *)a->message.ascii);
}

/* Queues a range begin; returns its key (0 when not recording). */
static uint64_t
begin_range(const VsDomain *domain, const char *name, uint64_t parent, int depth)
{
  VsQueue *q = atomic_load(&nvtx_queue);
  if (q == NULL)
    return 0;
  VsItem it = {0};
  it.type = VS_ITEM_RANGE_BEGIN;
  it.ts = vs_now_ns();
  it.tid = vs_gettid();
  it.parent = parent;
  it.depth = depth;
  if (domain != NULL)
    memcpy(it.domain, domain->name, sizeof it.domain);
  strncpy(it.text, name, sizeof it.text - 1);
  return vs_queue_push_range(q, &it);
}

static void
end_range(uint64_t key)
{
  VsQueue *q = atomic_load(&nvtx_queue);
  if (q == NULL || key == 0)
    return;
  VsItem it = {0};
  it.type = VS_ITEM_RANGE_END;
  it.ts = vs_now_ns();
  it.tid = vs_gettid();
  it.range = key;
  vs_queue_push(q, &it);
}

static int
push(const VsDomain *domain, const char *name)
{
  int depth = stack_depth;
  uint64_t key = begin_range(domain, name, vs_nvtx_current_range(), depth);
  if (depth < VS_NVTX_STACK) {
    stack[depth].key = key;
    stack[depth].domain = domain;
  }
  stack_depth++;
  return depth;
}

/* Pops the innermost range of domain on this thread (NVTX keeps one stack
 * per domain; ours interleaves them).  Returns the depth it had or -1. */
static int
pop(const VsDomain *domain)
{
  if (stack_depth == 0)
    return -1;
  if (stack_depth > VS_NVTX_STACK) {
    stack_depth--;
    return stack_depth;
  }
  for (int i = stack_depth - 1; i >= 0; i--) {
    if (stack[i].domain != domain)
      continue;
    end_range(stack[i].key);
    memmove(&stack[i], &stack[i + 1], (size_t)(stack_depth - 1 - i) * sizeof stack[0]);
    stack_depth--;
    return i;
  }
  return -1;
}

static uint64_t
start(const VsDomain *domain, const char *name)
{
  uint64_t key = begin_range(domain, name, 0, 0);
  return key ? key : atomic_fetch_add(&unqueued_key, 1);
}

/* --- the NVTX entry points ---------------------------------------------- */

static int NVTX_API
range_push_a(const char *message)
{
  char buf[VS_ITEM_TEXT];
  copy_message(buf, sizeof buf, NVTX_MESSAGE_TYPE_ASCII, message);
  return push(NULL, buf);
}

static int NVTX_API
range_push_w(const wchar_t *message)
{
  char buf[VS_ITEM_TEXT];
  copy_message(buf, sizeof buf, NVTX_MESSAGE_TYPE_UNICODE, message);
  return push(NULL, buf);
}

static int NVTX_API
range_push_ex(const nvtxEventAttributes_t *a)
{
  char buf[VS_ITEM_TEXT];
  attrib_message(buf, sizeof buf, a);
  return push(NULL, buf);
}

static int NVTX_API
range_pop(void)
{
  return pop(NULL);
}

static nvtxRangeId_t NVTX_API
range_start_a(const char *message)
{
  char buf[VS_ITEM_TEXT];
  copy_message(buf, sizeof buf, NVTX_MESSAGE_TYPE_ASCII, message);
  return start(NULL, buf);
}

static nvtxRangeId_t NVTX_API
range_start_w(const wchar_t *message)
{
  char buf[VS_ITEM_TEXT];
  copy_message(buf, sizeof buf, NVTX_MESSAGE_TYPE_UNICODE, message);
  return start(NULL, buf);
}

static nvtxRangeId_t NVTX_API
range_start_ex(const nvtxEventAttributes_t *a)
{
  char buf[VS_ITEM_TEXT];
  attrib_message(buf, sizeof buf, a);
  return start(NULL, buf);
}

static void NVTX_API
range_end(nvtxRangeId_t id)
{
  end_range(id);
}

static nvtxDomainHandle_t NVTX_API
domain_create_a(const char *name)
{
  VsDomain *d = calloc(1, sizeof *d);
  if (d != NULL && name != NULL)
    strncpy(d->name, name, sizeof d->name - 1);
  return (nvtxDomainHandle_t)d;
}

static nvtxDomainHandle_t NVTX_API
domain_create_w(const wchar_t *name)
{
  VsDomain *d = calloc(1, sizeof *d);
  if (d != NULL)
    copy_message(d->name, sizeof d->name, NVTX_MESSAGE_TYPE_UNICODE, name);
  return (nvtxDomainHandle_t)d;
}

/* Domains live until the process ends: ranges queued earlier may still
 * point at the name, and NVTX allows no use of a destroyed handle anyway. */
static void NVTX_API
domain_destroy(nvtxDomainHandle_t d)
{
  (void)d;
}

static nvtxStringHandle_t NVTX_API
domain_register_string_a(nvtxDomainHandle_t d, const char *s)
{
  (void)d;
  return (nvtxStringHandle_t)strdup(s ? s : "");
}

static nvtxStringHandle_t NVTX_API
domain_register_string_w(nvtxDomainHandle_t d, const wchar_t *s)
{
  (void)d;
  char buf[VS_ITEM_TEXT];
  copy_message(buf, sizeof buf, NVTX_MESSAGE_TYPE_UNICODE, s);
  return (nvtxStringHandle_t)strdup(buf);
}

static int NVTX_API
domain_range_push_ex(nvtxDomainHandle_t d, const nvtxEventAttributes_t *a)
{
  char buf[VS_ITEM_TEXT];
  attrib_message(buf, sizeof buf, a);
  return push((const VsDomain *)d, buf);
}

static int NVTX_API
domain_range_pop(nvtxDomainHandle_t d)
{
  return pop((const VsDomain *)d);
}

static nvtxRangeId_t NVTX_API
domain_range_start_ex(nvtxDomainHandle_t d, const nvtxEventAttributes_t *a)
{
  char buf[VS_ITEM_TEXT];
  attrib_message(buf, sizeof buf, a);
  return start((const VsDomain *)d, buf);
}

static void NVTX_API
domain_range_end(nvtxDomainHandle_t d, nvtxRangeId_t id)
{
  (void)d;
  end_range(id);
}

typedef struct {
  unsigned int id;
  NvtxFunctionPointer fn;
} VsSlot;

/* Fills the slots of one NVTX module table we implement. */
static void
fill(const NvtxExportTableCallbacks *cb, NvtxCallbackModule module,
     const VsSlot *slots, size_t n)
{
  NvtxFunctionTable table = NULL;
  unsigned int size = 0;
  if (cb->GetModuleFunctionTable(module, &table, &size) == 0 || table == NULL)
    return;
  for (size_t i = 0; i < n; i++)
    if (slots[i].id < size && table[slots[i].id] != NULL)
      *table[slots[i].id] = slots[i].fn;
}

#define SLOT(id, f) {id, (NvtxFunctionPointer)(f)}

__attribute__((visibility("default"))) int
InitializeInjectionNvtx2(NvtxGetExportTableFunc_t get_export_table);

/* Called by NVTX on its first use when NVTX_INJECTION64_PATH names the
 * collector.  Returns 1 (success) so NVTX keeps our functions. */
__attribute__((visibility("default"))) int
InitializeInjectionNvtx2(NvtxGetExportTableFunc_t get_export_table)
{
  pthread_atfork(NULL, NULL, reset_tid);
  const NvtxExportTableCallbacks *cb =
    (const NvtxExportTableCallbacks *)get_export_table(NVTX_ETID_CALLBACKS);
  if (cb == NULL || cb->struct_size < sizeof *cb)
    return 0;
  static const VsSlot core[] = {
    SLOT(NVTX_CBID_CORE_RangeStartEx, range_start_ex),
    SLOT(NVTX_CBID_CORE_RangeStartA, range_start_a),
    SLOT(NVTX_CBID_CORE_RangeStartW, range_start_w),
    SLOT(NVTX_CBID_CORE_RangeEnd, range_end),
    SLOT(NVTX_CBID_CORE_RangePushEx, range_push_ex),
    SLOT(NVTX_CBID_CORE_RangePushA, range_push_a),
    SLOT(NVTX_CBID_CORE_RangePushW, range_push_w),
    SLOT(NVTX_CBID_CORE_RangePop, range_pop),
  };
  static const VsSlot core2[] = {
    SLOT(NVTX_CBID_CORE2_DomainRangeStartEx, domain_range_start_ex),
    SLOT(NVTX_CBID_CORE2_DomainRangeEnd, domain_range_end),
    SLOT(NVTX_CBID_CORE2_DomainRangePushEx, domain_range_push_ex),
    SLOT(NVTX_CBID_CORE2_DomainRangePop, domain_range_pop),
    SLOT(NVTX_CBID_CORE2_DomainRegisterStringA, domain_register_string_a),
    SLOT(NVTX_CBID_CORE2_DomainRegisterStringW, domain_register_string_w),
    SLOT(NVTX_CBID_CORE2_DomainCreateA, domain_create_a),
    SLOT(NVTX_CBID_CORE2_DomainCreateW, domain_create_w),
    SLOT(NVTX_CBID_CORE2_DomainDestroy, domain_destroy),
  };
  fill(cb, NVTX_CB_MODULE_CORE, core, sizeof core / sizeof core[0]);
  fill(cb, NVTX_CB_MODULE_CORE2, core2, sizeof core2 / sizeof core2[0]);
  return 1;
}

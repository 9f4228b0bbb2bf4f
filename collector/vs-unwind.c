/* SPDX-License-Identifier: MIT */
/* vs-unwind.c — capturing call stacks in application threads and writing
 * them as module, frame and stack rows on the writer thread.
 *
 * Workload: one capture per device-level allocation, free, failed
 * allocation and pool trim; up to about a million per second in an
 * allocation-heavy CUDA program.  A capture is one unw_backtrace (about
 * 0.3 µs for 30 frames, bench/stacks-bench.c), a range check per leading
 * frame, a hash of the return addresses and one probe of a lock-free table
 * of hashes already sent.  Only a stack never seen before costs more: a
 * malloc'd copy goes through the queue to the writer, which adds its rows.
 *
 * Why libunwind is dlopen'ed: Debian's libunwind.a is not
 * position-independent, and GPU servers rarely have libunwind installed,
 * so the build copies libunwind.so.8 next to the collector and it is
 * loaded from there (the collector keeps working, with glibc's slower
 * backtrace(), when it is missing).  RTLD_LOCAL keeps its weak `backtrace`
 * from interposing the host's.
 */
#include "vs-unwind.h"
#include "vs-python.h"

#include <dlfcn.h>
#include <elf.h>
#include <execinfo.h>
#include <limits.h>
#include <link.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* --- capture ------------------------------------------------------------- */

#define VS_SEEN_SLOTS (1u << 16) /* distinct stacks remembered as sent */
#define VS_SEEN_PROBES 32
#define VS_MAX_INTERNAL 16

typedef int (*VsBacktraceFunc) (void **buffer, int size);

static struct
{
  VsUnwinder kind;
  VsBacktraceFunc backtrace;
  uint64_t internal_lo[VS_MAX_INTERNAL], internal_hi[VS_MAX_INTERNAL];
  int n_internal;
  bool python;
} U;

static atomic_bool capture_on = true;
static _Atomic uint64_t seen[VS_SEEN_SLOTS];
static pthread_mutex_t init_lock = PTHREAD_MUTEX_INITIALIZER;
static bool init_done;

/* Libraries whose frames are never the caller of interest: CUDA's own, the
 * collector and its unwinder.  Matched on the file name's start. */
static const char *const internal_names[] = {
  "libcuda.so", "libcudart.so", "libcupti.so", "libvramscope-collector.so", "libunwind.so",
};

static const char *
base_name (const char *path)
{
  const char *s = strrchr (path, '/');
  return s ? s + 1 : path;
}

/* Lowest and highest address of the object's loaded segments. */
static void
object_extent (const struct dl_phdr_info *info, uint64_t *lo, uint64_t *hi)
{
  *lo = UINT64_MAX;
  *hi = 0;
  for (int i = 0; i < info->dlpi_phnum; i++)
    {
      const ElfW (Phdr) *ph = &info->dlpi_phdr[i];
      if (ph->p_type != PT_LOAD)
        continue;
      uint64_t a = info->dlpi_addr + ph->p_vaddr;
      if (a < *lo)
        *lo = a;
      if (a + ph->p_memsz > *hi)
        *hi = a + ph->p_memsz;
    }
}

static int
note_internal (struct dl_phdr_info *info, size_t size, void *data)
{
  (void)size;
  (void)data;
  if (info->dlpi_name == NULL || info->dlpi_name[0] == '\0')
    return 0;
  const char *b = base_name (info->dlpi_name);
  for (size_t k = 0; k < sizeof internal_names / sizeof internal_names[0]; k++)
    if (strncmp (b, internal_names[k], strlen (internal_names[k])) == 0
        && U.n_internal < VS_MAX_INTERNAL)
      {
        uint64_t lo, hi;
        object_extent (info, &lo, &hi);
        if (lo < hi)
          {
            U.internal_lo[U.n_internal] = lo;
            U.internal_hi[U.n_internal] = hi;
            U.n_internal++;
          }
        break;
      }
  return 0;
}

/* Directory of the object holding this code (the collector library, or a
 * test program that links the collector's code). */
static bool
own_directory (char *out, size_t len)
{
  Dl_info info;
  if (dladdr ((void *)(uintptr_t)vs_unwind_init, &info) == 0 || info.dli_fname == NULL)
    return false;
  char path[PATH_MAX];
  if (info.dli_fname[0] != '/')
    {
      ssize_t n = readlink ("/proc/self/exe", path, sizeof path - 1);
      if (n <= 0)
        return false;
      path[n] = '\0';
    }
  else
    {
      snprintf (path, sizeof path, "%s", info.dli_fname);
    }
  char *slash = strrchr (path, '/');
  if (slash == NULL)
    return false;
  *slash = '\0';
  snprintf (out, len, "%s", path);
  return true;
}

/* Loads the unwinder once; later calls refresh only the internal ranges
 * (CUDA's libraries may be loaded after the first call). */
VsUnwinder
vs_unwind_init (void)
{
  pthread_mutex_lock (&init_lock);
  if (!init_done)
    {
      char dir[PATH_MAX], path[PATH_MAX + 32];
      void *h = NULL;
      if (own_directory (dir, sizeof dir))
        {
          snprintf (path, sizeof path, "%s/libunwind.so.8", dir);
          h = dlopen (path, RTLD_NOW | RTLD_LOCAL);
        }
      if (h == NULL)
        h = dlopen ("libunwind.so.8", RTLD_NOW | RTLD_LOCAL);
      if (h != NULL)
        U.backtrace = (VsBacktraceFunc)dlsym (h, "unw_backtrace");
      if (U.backtrace != NULL)
        {
          U.kind = VS_UNWIND_LIBUNWIND;
        }
      else
        {
          /* glibc's first backtrace() loads libgcc_s: do it now, not inside
       * an allocation callback. */
          void *warm[4];
          backtrace (warm, 4);
          U.backtrace = backtrace;
          U.kind = VS_UNWIND_GLIBC;
        }
      U.python = vs_python_init ();
      init_done = true;
    }
  U.n_internal = 0;
  dl_iterate_phdr (note_internal, NULL);
  pthread_mutex_unlock (&init_lock);
  return U.kind;
}

void
vs_stack_set_enabled (bool enabled)
{
  atomic_store (&capture_on, enabled);
}

static bool
is_internal (uint64_t pc)
{
  for (int i = 0; i < U.n_internal; i++)
    if (pc >= U.internal_lo[i] && pc < U.internal_hi[i])
      return true;
  return false;
}

/* Raw return addresses, innermost first, starting with the caller's
 * caller frame chain as the unwinder reports it. */
__attribute__ ((noinline)) int
vs_unwind_raw (uint64_t *pcs, int max)
{
  if (U.backtrace == NULL || max <= 0)
    return 0;
  return U.backtrace ((void **)pcs, max);
}

static inline uint64_t
hash_step (uint64_t h, uint64_t x)
{
  h ^= x + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
  return h * 0xff51afd7ed558ccdULL;
}

void
vs_stack_blob_free (VsStackBlob *b)
{
  if (b == NULL)
    return;
  for (uint32_t i = 0; i < b->n_python; i++)
    {
      free (b->py[i].file);
      free (b->py[i].function);
    }
  free (b);
}

/* Builds the blob of a new stack and sends it; true when it was queued. */
static bool
send_stack (VsQueue *q, uint64_t hash, const uint64_t *pcs, int n, int python_at, const VsPyRef *py,
            int n_py)
{
  VsStackBlob *b = malloc (sizeof *b + (size_t)n_py * sizeof (VsPyFrame));
  if (b == NULL)
    return false;
  b->hash = hash;
  b->n_native = (uint32_t)n;
  b->n_python = (uint32_t)n_py;
  b->python_at = (uint32_t)python_at;
  memcpy (b->pcs, pcs, (size_t)n * sizeof pcs[0]);
  for (int i = 0; i < n_py; i++)
    {
      b->py[i].line = py[i].line;
      vs_python_describe (py[i].code, &b->py[i].file, &b->py[i].function);
    }
  VsItem it = { 0 };
  it.type = VS_ITEM_STACK;
  it.stack = hash;
  it.blob = b;
  if (!vs_queue_push (q, &it))
    {
      vs_stack_blob_free (b);
      return false;
    }
  return true;
}

/* See vs-unwind.h.  noinline: its own return address marks where the
 * caller's frames begin in what the unwinder returns. */
__attribute__ ((noinline)) uint64_t
vs_stack_capture (VsQueue *q)
{
  if (U.backtrace == NULL || q == NULL || !atomic_load_explicit (&capture_on, memory_order_relaxed))
    return 0;
  uint64_t raw[VS_STACK_MAX_NATIVE + 48];
  int n = U.backtrace ((void **)raw, (int)(sizeof raw / sizeof raw[0]));
  uint64_t ret = (uint64_t)(uintptr_t)__builtin_return_address (0);
  int start = 0;
  for (int i = 0; i < n && i < 8; i++)
    if (raw[i] == ret)
      {
        start = i;
        break;
      }
  while (start < n && is_internal (raw[start]))
    start++;

  VsPyRef py[VS_STACK_MAX_PYTHON];
  int n_py = U.python ? vs_python_capture (py, VS_STACK_MAX_PYTHON) : 0;

  uint64_t pcs[VS_STACK_MAX_NATIVE];
  int m = 0, python_at = -1;
  for (int i = start; i < n && m < VS_STACK_MAX_NATIVE; i++)
    {
      if (n_py > 0 && vs_python_is_eval_pc (raw[i]))
        {
          if (python_at < 0)
            python_at = m;
          continue;
        }
      pcs[m++] = raw[i];
    }
  if (python_at < 0)
    python_at = m;
  if (m == 0 && n_py == 0)
    return 0;

  uint64_t h = hash_step (0x243f6a8885a308d3ULL, (uint64_t)m);
  for (int i = 0; i < m; i++)
    h = hash_step (h, pcs[i]);
  h = hash_step (h, (uint64_t)python_at);
  for (int i = 0; i < n_py; i++)
    h = hash_step (hash_step (h, py[i].code), (uint64_t)py[i].line);
  if (h == 0)
    h = 1;

  size_t slot = (size_t)(h ^ (h >> 29)) & (VS_SEEN_SLOTS - 1);
  for (int p = 0; p < VS_SEEN_PROBES; p++)
    {
      uint64_t v
          = atomic_load_explicit (&seen[(slot + p) & (VS_SEEN_SLOTS - 1)], memory_order_acquire);
      if (v == h)
        return h;
      if (v == 0)
        break;
    }
  /* New (or the table is crowded): the stack goes to the queue before any
   * event naming it, then its hash is published. */
  if (!send_stack (q, h, pcs, m, python_at, py, n_py))
    return 0;
  for (int p = 0; p < VS_SEEN_PROBES; p++)
    {
      _Atomic uint64_t *s = &seen[(slot + p) & (VS_SEEN_SLOTS - 1)];
      uint64_t expected = 0;
      if (atomic_compare_exchange_strong (s, &expected, h) || expected == h)
        break;
    }
  return h;
}

/* --- rows ---------------------------------------------------------------- */

typedef struct
{
  uint64_t lo, hi, base;
  int64_t id;
  char *path;
} VsModuleRange;

struct VsStacks
{
  VsWriter *w;
  int64_t process_id;
  VsModuleRange *mods;
  size_t n_mods, cap_mods;
  bool failed;
};

VsStacks *
vs_stacks_new (VsWriter *w, int64_t process_id)
{
  VsStacks *st = calloc (1, sizeof *st);
  if (st == NULL)
    return NULL;
  st->w = w;
  st->process_id = process_id;
  return st;
}

void
vs_stacks_free (VsStacks *st)
{
  if (st == NULL)
    return;
  for (size_t i = 0; i < st->n_mods; i++)
    free (st->mods[i].path);
  free (st->mods);
  free (st);
}

/* Reads the NT_GNU_BUILD_ID note from the loaded image's PT_NOTE
 * segments (the loader maps them, so no file is opened). */
bool
vs_module_build_id (const struct dl_phdr_info *info, char *out, size_t len)
{
  for (int i = 0; i < info->dlpi_phnum; i++)
    {
      const ElfW (Phdr) *ph = &info->dlpi_phdr[i];
      if (ph->p_type != PT_NOTE)
        continue;
      const unsigned char *p = (const unsigned char *)(info->dlpi_addr + ph->p_vaddr);
      const unsigned char *end = p + ph->p_memsz;
      while (p + sizeof (ElfW (Nhdr)) <= end)
        {
          const ElfW (Nhdr) *nh = (const ElfW (Nhdr) *)p;
          size_t name_sz = (nh->n_namesz + 3) & ~(size_t)3;
          size_t desc_sz = (nh->n_descsz + 3) & ~(size_t)3;
          const unsigned char *name = p + sizeof *nh;
          const unsigned char *desc = name + name_sz;
          if (desc + nh->n_descsz > end)
            break;
          if (nh->n_type == NT_GNU_BUILD_ID && nh->n_namesz == 4 && memcmp (name, "GNU", 4) == 0
              && nh->n_descsz * 2 + 1 <= len)
            {
              static const char hex[] = "0123456789abcdef";
              for (size_t k = 0; k < nh->n_descsz; k++)
                {
                  out[2 * k] = hex[desc[k] >> 4];
                  out[2 * k + 1] = hex[desc[k] & 15];
                }
              out[2 * nh->n_descsz] = '\0';
              return true;
            }
          p = desc + desc_sz;
        }
    }
  return false;
}

/* dl_iterate_phdr callback: adds a module row for every object not yet
 * known (same path at the same base). */
static int
scan_module (struct dl_phdr_info *info, size_t size, void *data)
{
  (void)size;
  VsStacks *st = data;
  if (st->failed)
    return 1;
  uint64_t lo, hi;
  object_extent (info, &lo, &hi);
  if (lo >= hi)
    return 0;
  char exe[PATH_MAX];
  const char *path = info->dlpi_name;
  if (path == NULL || path[0] == '\0')
    {
      ssize_t n = readlink ("/proc/self/exe", exe, sizeof exe - 1);
      if (n <= 0)
        return 0;
      exe[n] = '\0';
      path = exe;
    }
  for (size_t i = 0; i < st->n_mods; i++)
    if (st->mods[i].base == info->dlpi_addr && st->mods[i].lo == lo
        && strcmp (st->mods[i].path, path) == 0)
      return 0;
  if (st->n_mods == st->cap_mods)
    {
      size_t cap = st->cap_mods ? st->cap_mods * 2 : 64;
      VsModuleRange *m = realloc (st->mods, cap * sizeof *m);
      if (m == NULL)
        {
          st->failed = true;
          return 1;
        }
      st->mods = m;
      st->cap_mods = cap;
    }
  char build_id[128];
  bool has_id = vs_module_build_id (info, build_id, sizeof build_id);
  VsModule mod = { .process_id = st->process_id,
                   .path = path,
                   .build_id = has_id ? build_id : NULL,
                   .load_address = (int64_t)info->dlpi_addr,
                   .size = (int64_t)(hi - lo) };
  int64_t id = vs_writer_add_module (st->w, &mod);
  char *copy = strdup (path);
  if (id <= 0 || copy == NULL)
    {
      free (copy);
      st->failed = true;
      return 1;
    }
  st->mods[st->n_mods++] = (VsModuleRange){ lo, hi, info->dlpi_addr, id, copy };
  return 0;
}

/* Module row id holding pc, VS_UNKNOWN when none does. */
static int64_t
module_of (VsStacks *st, uint64_t pc)
{
  for (size_t i = 0; i < st->n_mods; i++)
    if (pc >= st->mods[i].lo && pc < st->mods[i].hi)
      return st->mods[i].id;
  return VS_UNKNOWN;
}

/* Writes the rows of a new stack: see vs-unwind.h. */
int64_t
vs_stacks_add (VsStacks *st, const VsStackBlob *b)
{
  uint32_t total = b->n_native + b->n_python;
  if (total == 0)
    return VS_UNKNOWN;
  if (st->n_mods == 0)
    dl_iterate_phdr (scan_module, st);
  bool rescanned = false;
  int64_t *ids = malloc (total * sizeof *ids); /* outermost first */
  if (ids == NULL)
    return -1;
  uint32_t k = total; /* fill from the innermost end */
  for (uint32_t i = 0; i <= b->n_native; i++)
    {
      if (i == b->python_at)
        for (uint32_t j = 0; j < b->n_python; j++)
          {
            VsFrame f = { .kind = VS_FRAME_PYTHON,
                          .module_id = VS_UNKNOWN,
                          .address = VS_UNKNOWN,
                          .function = b->py[j].function,
                          .file = b->py[j].file,
                          .line = b->py[j].line };
            if (f.function == NULL && f.file == NULL)
              f.function = "(unknown Python frame)";
            int64_t id = vs_writer_add_frame (st->w, &f);
            if (id <= 0)
              goto fail;
            ids[--k] = id;
          }
      if (i == b->n_native)
        break;
      uint64_t pc = b->pcs[i];
      int64_t mod = module_of (st, pc);
      if (mod == VS_UNKNOWN && !rescanned)
        {
          /* Loaded since the last scan (dlopen). */
          rescanned = true;
          dl_iterate_phdr (scan_module, st);
          if (st->failed)
            goto fail;
          mod = module_of (st, pc);
        }
      VsFrame f = { .kind = VS_FRAME_NATIVE,
                    .module_id = mod,
                    .address = (int64_t)pc,
                    .function = NULL,
                    .file = NULL,
                    .line = VS_UNKNOWN };
      int64_t id = vs_writer_add_frame (st->w, &f);
      if (id <= 0)
        goto fail;
      ids[--k] = id;
    }
  int64_t stack = vs_writer_add_stack (st->w, ids, total);
  free (ids);
  return stack > 0 ? stack : -1;
fail:
  free (ids);
  return -1;
}

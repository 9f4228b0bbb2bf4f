/* SPDX-License-Identifier: MIT */
/* vs-test-pool-fixtures.c — builds the framework-pool traces described in
 * vs-test-pool-fixtures.h.  Plain C on the writer API.
 */
#include "vs-test-pool-fixtures.h"

#include "vs-test-fixture-writer.h"

#include <stdio.h>
#include <string.h>

#define U VS_UNKNOWN
#define T(x) (VS_FIXTURE_T0 + (x))
#define MiB INT64_C (1048576)

typedef struct
{
  VsFixtureWriter t;
  int64_t pool_stack, user_stack; /* a segment's cudaMalloc; the program's own */
} Ctx;

/* A new trace with one process and the two stacks: the program's line
 * calling the framework, and below it the pool's frame calling cudaMalloc
 * (as the collector symbolizes CuPy's Cython and XLA's C++). */
static bool
begin (Ctx *c, const char *path, const char *framework, char *err, size_t errlen)
{
  bool xla = strcmp (framework, "xla") == 0;
  VsModule m = { 0,
                 xla ? "/opt/venv/jax_plugins/xla_cuda13/xla_cuda_plugin.so"
                     : "/opt/venv/cupy/cuda/memory.cpython-312-x86_64-linux-gnu.so",
                 NULL, INT64_C (0x7f0000000000), 0x1000000 };
  VsFrame line = { VS_FRAME_PYTHON, U, U, "step", "/home/user/proj/train.py", 20 };
  VsFrame top = { VS_FRAME_PYTHON, U, U, "<module>", "/home/user/proj/train.py", 31 };
  VsFrame pool = { VS_FRAME_NATIVE,
                   0,
                   INT64_C (0x7f0000001000),
                   xla ? "tsl::BFCAllocator::Extend(unsigned long, unsigned long)"
                       : "__pyx_f_4cupy_4cuda_6memory_22SingleDeviceMemoryPool__malloc",
                   NULL,
                   U };
  VsFrame malloc_frame = { VS_FRAME_NATIVE, U, U, "cudaMalloc", NULL, U };
  int64_t f[4];

  memset (c, 0, sizeof *c);
  if (!vs_fixture_begin (&c->t, path, 0, err, errlen))
    return false;
  m.process_id = c->t.proc;
  pool.module_id = vs_writer_add_module (c->t.w, &m);
  vs_fixture_check (&c->t, pool.module_id);
  f[0] = vs_writer_add_frame (c->t.w, &top);
  f[1] = vs_writer_add_frame (c->t.w, &line);
  f[2] = vs_writer_add_frame (c->t.w, &pool);
  f[3] = vs_writer_add_frame (c->t.w, &malloc_frame);
  c->user_stack = vs_writer_add_stack (c->t.w, f, 2);
  c->pool_stack = vs_writer_add_stack (c->t.w, f, 4);
  vs_fixture_check (&c->t, c->user_stack);
  vs_fixture_check (&c->t, c->pool_stack);
  return c->t.ok;
}

static int64_t
device (Ctx *c, int64_t idx, const char *uuid)
{
  VsDevice d = { idx, uuid, "Test GPU", 80 * 1024 * MiB };
  int64_t id = vs_writer_add_device (c->t.w, &d);

  vs_fixture_check (&c->t, id);
  return id;
}

static void
mem (Ctx *c, int64_t dev, int64_t ts, VsMemOp op, int64_t addr, int64_t bytes, int64_t stack)
{
  VsMemEvent e
      = { ts, c->t.proc, 7, dev, U, U, VS_MEM_KIND_DEVICE, op, addr, bytes, U, U, U, U, stack, U };

  vs_fixture_check (&c->t, vs_writer_mem_event (c->t.w, &e));
}

static void
blk (Ctx *c, int64_t dev, int64_t allocator, int64_t ts, VsAllocOp op, int64_t addr, int64_t bytes)
{
  VsAllocEvent e
      = { ts, c->t.proc, 7, dev, allocator, op, addr, bytes, bytes, U, U, c->user_stack, U, 0 };

  vs_fixture_check (&c->t, vs_writer_alloc_event (c->t.w, &e));
}

/* A segment the pool takes (allocator 0: seen from below) or gives back:
 * the cudaMalloc or cudaFree, and with the allocator level its
 * segment_alloc or segment_free at the same address. */
static void
segment (Ctx *c, int64_t dev, int64_t allocator, int64_t ts, bool take, int64_t addr, int64_t bytes)
{
  mem (c, dev, ts, take ? VS_MEM_OP_ALLOC : VS_MEM_OP_FREE, addr, bytes, take ? c->pool_stack : U);
  if (allocator != 0)
    blk (c, dev, allocator, ts, take ? VS_ALLOC_OP_SEGMENT_ALLOC : VS_ALLOC_OP_SEGMENT_FREE, addr,
         bytes);
}

static int64_t
pool_allocator (Ctx *c, int64_t dev, const char *framework)
{
  VsAllocator a = { dev, c->t.proc, framework, framework, U, NULL };
  int64_t id = vs_writer_add_allocator (c->t.w, &a);

  vs_fixture_check (&c->t, id);
  return id;
}

/* Step i runs over [1000 (i + 1), 1000 (i + 1) + 1000): its range from
 * +10 to +900, its segment at +50, the program's 8 MiB (from below) or
 * its block (allocator level) at +100, freed at +800.  The pool's
 * reserved memory at the start of step i is 64 MiB + i × grow; with the
 * allocator level its allocated memory then is 0, or i × grow with
 * `keep`. */
bool
vs_fixture_pool_steps (const char *path, const char *framework, bool backed, int steps,
                       int64_t grow, bool keep, char *err, size_t errlen)
{
  Ctx c;
  int64_t dev, pool = 0, next = INT64_C (0x200000000);

  if (!begin (&c, path, framework, err, errlen))
    return false;
  dev = device (&c, 0, "GPU-pool-steps-0");
  if (backed)
    pool = pool_allocator (&c, dev, framework);
  segment (&c, dev, pool, T (5), true, INT64_C (0x100000000), 64 * MiB);
  for (int i = 0; i < steps && c.t.ok; i++)
    {
      int64_t ts = 1000 * (i + 1);
      char name[32];
      VsRange r = { c.t.proc, 7, NULL, name, T (ts + 10), T (ts + 900), 0, 0 };

      snprintf (name, sizeof name, "step %d", i);
      vs_fixture_check (&c.t, vs_writer_add_range (c.t.w, &r));
      if (grow > 0)
        segment (&c, dev, pool, T (ts + 50), true, next, grow);
      if (!backed)
        {
          mem (&c, dev, T (ts + 100), VS_MEM_OP_ALLOC, 0x1000, 8 * MiB, c.user_stack);
          mem (&c, dev, T (ts + 800), VS_MEM_OP_FREE, 0x1000, 8 * MiB, U);
        }
      else if (grow > 0)
        {
          blk (&c, dev, pool, T (ts + 100), VS_ALLOC_OP_ALLOC, next, grow);
          if (!keep)
            blk (&c, dev, pool, T (ts + 800), VS_ALLOC_OP_FREE_COMPLETED, next, grow);
        }
      next += INT64_C (0x100000000);
    }
  return vs_fixture_end (&c.t, true);
}

/* Both devices, times in ns since T0 (segments A 64 MiB, B 128 MiB,
 * C 256 MiB, D 32 MiB; the program's own cudaMalloc of 8 MiB, E):
 *   100 take A            pool  64 MiB
 *   200 take B            pool 192 MiB
 *   300 cudaMalloc E (not the pool's)
 *   400 take C            pool 448 MiB (its peak)
 *   500 give back B       pool 320 MiB
 *   510 give back C       pool  64 MiB (free_all_blocks: A holds a block)
 *   600 take D            pool  96 MiB (final)
 *   700 cudaFree E
 * all's reserved: 64, 192, 200, 456 (peak, 400), 328, 72, 104, 96 MiB
 * (final).  Device 0 sees the pool from below: its allocated memory is
 * unknown, all's allocated is E alone (8 MiB from 300 to 700, final 0).
 * Device 1 has the allocator level: blocks of 16 MiB in A from 150 (never
 * freed) and 100 MiB in C from 420 to 480, so the pool's allocated is
 * 16 MiB, 116 MiB (its peak, 420), 16 MiB (final), and all's allocated
 * 16, 24 (300), 124 (peak, 420), 24 (480), 16 MiB (final, 700). */
bool
vs_fixture_pool_release (const char *path, char *err, size_t errlen)
{
  Ctx c;
  int64_t devs[2], pool;
  const int64_t a = INT64_C (0x100000000), b = INT64_C (0x200000000), cc = INT64_C (0x300000000),
                d = INT64_C (0x400000000);

  if (!begin (&c, path, "cupy", err, errlen))
    return false;
  devs[0] = device (&c, 0, "GPU-pool-release-0");
  devs[1] = device (&c, 1, "GPU-pool-release-1");
  pool = pool_allocator (&c, devs[1], "cupy");
  for (int i = 0; i < 2 && c.t.ok; i++)
    {
      int64_t dev = devs[i], p = i == 0 ? 0 : pool;

      segment (&c, dev, p, T (100), true, a, 64 * MiB);
      if (p != 0)
        blk (&c, dev, p, T (150), VS_ALLOC_OP_ALLOC, a, 16 * MiB);
      segment (&c, dev, p, T (200), true, b, 128 * MiB);
      mem (&c, dev, T (300), VS_MEM_OP_ALLOC, 0x1000, 8 * MiB, c.user_stack);
      segment (&c, dev, p, T (400), true, cc, 256 * MiB);
      if (p != 0)
        {
          blk (&c, dev, p, T (420), VS_ALLOC_OP_ALLOC, cc, 100 * MiB);
          blk (&c, dev, p, T (480), VS_ALLOC_OP_FREE_COMPLETED, cc, 100 * MiB);
        }
      segment (&c, dev, p, T (500), false, b, 128 * MiB);
      segment (&c, dev, p, T (510), false, cc, 256 * MiB);
      segment (&c, dev, p, T (600), true, d, 32 * MiB);
      mem (&c, dev, T (700), VS_MEM_OP_FREE, 0x1000, 8 * MiB, U);
    }
  return vs_fixture_end (&c.t, true);
}

/* SPDX-License-Identifier: MIT */
/* vs-test-fixtures.c — builds the test traces described in
 * vs-test-fixtures.h.  Plain C on the writer API.
 */
#include "vs-test-fixtures.h"

#include "vs-test-fixture-writer.h"

#include <stdio.h>
#include <string.h>

#define U VS_UNKNOWN
#define T(x) (VS_FIXTURE_T0 + (x))
#define MiB INT64_C (1048576)

typedef VsFixtureWriter Ctx;

static void
mem (Ctx *c, int64_t dev, int64_t ts, VsMemKind kind, VsMemOp op, int64_t addr, int64_t bytes,
     int64_t pool, int64_t stack)
{
  VsMemEvent e = { ts, c->proc, 7, dev, U, U, kind, op, addr, bytes, pool, U, U, U, stack, U };

  vs_fixture_check (c, vs_writer_mem_event (c->w, &e));
}

static void
blk (Ctx *c, int64_t dev, int64_t allocator, int64_t ts, VsAllocOp op, int64_t addr,
     int64_t requested, int64_t block, int64_t stack)
{
  VsAllocEvent e = { ts, c->proc, 7, dev, allocator, op, addr, requested, block, U, U, stack, U };

  vs_fixture_check (c, vs_writer_alloc_event (c->w, &e));
}

static int64_t
py_frame (Ctx *c, const char *file, int64_t line, const char *function)
{
  VsFrame f = { VS_FRAME_PYTHON, U, U, function, file, line };
  int64_t id = vs_writer_add_frame (c->w, &f);

  vs_fixture_check (c, id);
  return id;
}

static int64_t
stack (Ctx *c, const int64_t *frames, size_t n)
{
  int64_t id = vs_writer_add_stack (c->w, frames, n);

  vs_fixture_check (c, id);
  return id;
}

/* Expected (allocated = reserved = device, plain cudaMalloc only):
 *   before the trace: 0x9000 (3000 bytes) is live       -> 3000
 *   100 alloc 0x1000 1000 (stack A)                      -> 4000
 *   200 alloc 0x2000 2000 (stack B)                      -> 6000
 *   300 free  0x1000                                     -> 5000
 *   400 alloc 0x1000  500 (stack A, address reused)      -> 5500
 *   500 alloc 0x3000 4000 (stack B; its free, at 600, is
 *       written first)                                   -> 9500 peak
 *   600 free  0x3000                                     -> 5500
 *   700 free  0x2000                                     -> 3500
 *   800 free  0x9000 (allocated before the trace)        ->  500
 * Live at the peak: B 6000 (2 blocks), no stack 3000, A 500.
 * Leak: 0x1000 (500 bytes, stack A, allocated at 400). */
bool
vs_fixture_basic (const char *path, bool finalize, char *err, size_t errlen)
{
  Ctx c;
  VsDevice d = { 0, "GPU-basic-0", "Test GPU", 1024 * MiB };
  int64_t dev, fa[3], fb[2], sa, sb;

  if (!vs_fixture_begin (&c, path, U, err, errlen))
    return false;
  dev = vs_writer_add_device (c.w, &d);
  vs_fixture_check (&c, dev);
  fa[0] = py_frame (&c, "/home/user/proj/train.py", 42, "main");
  fa[1] = py_frame (&c, "/home/user/proj/model.py", 17, "forward");
  fa[2] = py_frame (&c, "/usr/lib/python3/dist-packages/torch/nn/functional.py", 2000, "linear");
  sa = stack (&c, fa, 3);
  fb[0] = fa[0];
  fb[1] = py_frame (&c, "/home/user/proj/data.py", 5, "load");
  sb = stack (&c, fb, 2);

  mem (&c, dev, T (100), VS_MEM_KIND_DEVICE, VS_MEM_OP_ALLOC, 0x1000, 1000, U, sa);
  mem (&c, dev, T (200), VS_MEM_KIND_DEVICE, VS_MEM_OP_ALLOC, 0x2000, 2000, U, sb);
  mem (&c, dev, T (300), VS_MEM_KIND_DEVICE, VS_MEM_OP_FREE, 0x1000, 1000, U, U);
  mem (&c, dev, T (400), VS_MEM_KIND_DEVICE, VS_MEM_OP_ALLOC, 0x1000, 500, U, sa);
  mem (&c, dev, T (600), VS_MEM_KIND_DEVICE, VS_MEM_OP_FREE, 0x3000, 4000, U, U);
  mem (&c, dev, T (500), VS_MEM_KIND_DEVICE, VS_MEM_OP_ALLOC, 0x3000, 4000, U, sb);
  mem (&c, dev, T (700), VS_MEM_KIND_DEVICE, VS_MEM_OP_FREE, 0x2000, 2000, U, U);
  mem (&c, dev, T (800), VS_MEM_KIND_DEVICE, VS_MEM_OP_FREE, 0x9000, 3000, U, U);
  return vs_fixture_end (&c, finalize);
}

/* Device 0 (1 GiB), times in ns since T0:
 *     10 static 4096 bytes (module globals)
 *   1000 cudaMalloc 2 MiB at 0x10000000 = PyTorch's segment (not counted twice)
 *   1000 pytorch segment_alloc 0x10000000, 2 MiB
 *   1100 pytorch alloc 0x10000000 req 1000000 block 1 MiB (stack A)
 *   1150 pytorch alloc 0x10100000 req 524288 block 524288 (stack A2)
 *   1200 plain cudaMalloc 8 MiB at 0x20000000 (stack C: user C code -> libnccl)
 *   1250 pool 0x5000 size 4 MiB
 *   1260 cudaMallocAsync 1 MiB at 0x30000000 in the pool (stack D: label)
 *   1300 pytorch alloc 0x10180000 req 262144 block 262144 (stack A)
 *   1400 pytorch free_requested 0x10100000; 1450 free_completed
 *   1590 cudaMalloc of 3 MiB fails (device-level, PyTorch then retries)
 *   1600 pytorch OOM for 3 MiB (stack B)
 *   1700 cudaFreeAsync 0x30000000
 *   1800 cudaFree 0x20000000
 *   2000 pytorch free_completed 0x10000000
 * all:      allocated 1000000, 1524288, 9912896, 10961472, 11223616 (peak,
 *           1300), 10699328, 9650752, 1262144, 262144 (final);
 *           reserved 2 MiB, 10 MiB, 14 MiB (peak, 1250), ..., 6 MiB (final)
 * pytorch:  reserved 2 MiB; allocated peak 1786432 at 1300, final 262144
 * pool:     reserved 4 MiB (pool size); allocated peak 1 MiB, final 0
 * Device 1 (2 GiB): 3000 cudaMalloc 16 MiB at 0x40000000 (never freed),
 *   3100 VMM map 2 MiB at 0x50000000, 3200 unmap.
 * Ranges: "epoch" 5..(never closed), "forward" 1000..1500 (depth 1),
 *   "step \"1\"" 1500..2500 (depth 1).
 * Kernels: gemm 100, 200, 300 ns and relu 50 ns on device 0; copy 100 ns on
 *   device 1 ending at 3400. */
bool
vs_fixture_full (const char *path, char *err, size_t errlen)
{
  Ctx c;
  VsDevice d0 = { 0, "GPU-full-0", "Test GPU A", 1024 * MiB };
  VsDevice d1 = { 1, "GPU-full-1", "Test GPU B", 2048 * MiB };
  int64_t dev0, dev1, torch, pool, mod_app, mod_nccl;
  int64_t f_main, f_fwd, f_fwd2, f_lin, f_init, f_nccl, f_label, f_grow;
  int64_t sa, sa2, sb, sc, sd, se;

  if (!vs_fixture_begin (&c, path, U, err, errlen))
    return false;
  dev0 = vs_writer_add_device (c.w, &d0);
  dev1 = vs_writer_add_device (c.w, &d1);
  vs_fixture_check (&c, dev0);
  vs_fixture_check (&c, dev1);
  {
    VsAllocator t = { dev0, c.proc, "pytorch", "pytorch", U, "expandable_segments:False" };
    VsAllocator p = { dev0, c.proc, "pool", "pool:0x5000", 0x5000, NULL };

    torch = vs_writer_add_allocator (c.w, &t);
    pool = vs_writer_add_allocator (c.w, &p);
    vs_fixture_check (&c, torch);
    vs_fixture_check (&c, pool);
  }
  {
    VsModule app = { c.proc, "/home/user/proj/app", "abcd", 0x400000, 0x10000 };
    VsModule nccl = { c.proc, "/usr/lib/x86_64-linux-gnu/libnccl.so.2", NULL,
                      INT64_C (0x7f0000000000), 0x100000 };

    mod_app = vs_writer_add_module (c.w, &app);
    mod_nccl = vs_writer_add_module (c.w, &nccl);
    vs_fixture_check (&c, mod_app);
    vs_fixture_check (&c, mod_nccl);
  }
  f_main = py_frame (&c, "/home/user/proj/train.py", 42, "main");
  f_fwd = py_frame (&c, "/home/user/proj/model.py", 17, "forward");
  f_fwd2 = py_frame (&c, "/home/user/proj/model.py", 25, "forward");
  f_lin = py_frame (&c, "/usr/lib/python3/dist-packages/torch/nn/functional.py", 2000, "linear");
  {
    VsFrame init
        = { VS_FRAME_NATIVE, mod_app, 0x401000, "init_comm", "/home/user/proj/comm.c", 88 };
    VsFrame nccl = { VS_FRAME_NATIVE, mod_nccl, INT64_C (0x7f0000001234), NULL, NULL, U };
    VsFrame label = { VS_FRAME_LABEL, U, U, "backward pass", NULL, U };
    VsFrame grow = {
      VS_FRAME_NATIVE, mod_app, 0x402000, "Pool<int, float>::grow", "/home/user/proj/alloc.cc", 7
    };

    f_init = vs_writer_add_frame (c.w, &init);
    f_nccl = vs_writer_add_frame (c.w, &nccl);
    f_label = vs_writer_add_frame (c.w, &label);
    f_grow = vs_writer_add_frame (c.w, &grow);
  }
  {
    int64_t a[] = { f_main, f_fwd, f_lin };
    int64_t a2[] = { f_main, f_fwd };
    int64_t b[] = { f_main, f_fwd2, f_lin };
    int64_t cc[] = { f_init, f_nccl };
    int64_t dd[] = { f_label };
    int64_t ee[] = { f_main, f_grow };

    sa = stack (&c, a, 3);
    sa2 = stack (&c, a2, 2);
    sb = stack (&c, b, 3);
    sc = stack (&c, cc, 2);
    sd = stack (&c, dd, 1);
    se = stack (&c, ee, 2);
  }

  mem (&c, dev0, T (10), VS_MEM_KIND_STATIC, VS_MEM_OP_ALLOC, 0x7000000, 4096, U, U);
  mem (&c, dev0, T (1000), VS_MEM_KIND_DEVICE, VS_MEM_OP_ALLOC, 0x10000000, 2 * MiB, U, sa);
  blk (&c, dev0, torch, T (1000), VS_ALLOC_OP_SEGMENT_ALLOC, 0x10000000, 2 * MiB, U, sa);
  blk (&c, dev0, torch, T (1100), VS_ALLOC_OP_ALLOC, 0x10000000, 1000000, MiB, sa);
  blk (&c, dev0, torch, T (1150), VS_ALLOC_OP_ALLOC, 0x10100000, 524288, 524288, sa2);
  mem (&c, dev0, T (1200), VS_MEM_KIND_DEVICE, VS_MEM_OP_ALLOC, 0x20000000, 8 * MiB, U, sc);
  {
    VsPoolEvent pe = { T (1250), c.proc, dev0, pool, VS_POOL_OP_SAMPLE, 4 * MiB, 0, U, U, U, U };

    vs_fixture_check (&c, vs_writer_pool_event (c.w, &pe));
  }
  mem (&c, dev0, T (1260), VS_MEM_KIND_ASYNC, VS_MEM_OP_ALLOC, 0x30000000, MiB, pool, sd);
  blk (&c, dev0, torch, T (1300), VS_ALLOC_OP_ALLOC, 0x10180000, 262144, 262144, sa);
  blk (&c, dev0, torch, T (1400), VS_ALLOC_OP_FREE_REQUESTED, 0x10100000, 524288, 524288, U);
  blk (&c, dev0, torch, T (1450), VS_ALLOC_OP_FREE_COMPLETED, 0x10100000, 524288, 524288, U);
  {
    VsFailedAlloc dl = {
      T (1590), c.proc,     7,  dev0, U, "cudaMalloc", 3 * MiB, 2, "cudaErrorMemoryAllocation",
      1000000,  1024 * MiB, 77, sb,   U
    };
    VsFailedAlloc pt
        = { T (1600),           c.proc,  7,          dev0, torch, "pytorch", 3 * MiB, U,
            "OutOfMemoryError", 1000000, 1024 * MiB, U,    sb,    U };

    vs_fixture_check (&c, vs_writer_failed_alloc (c.w, &dl));
    vs_fixture_check (&c, vs_writer_failed_alloc (c.w, &pt));
  }
  mem (&c, dev0, T (1700), VS_MEM_KIND_ASYNC, VS_MEM_OP_FREE, 0x30000000, MiB, pool, U);
  mem (&c, dev0, T (1800), VS_MEM_KIND_DEVICE, VS_MEM_OP_FREE, 0x20000000, 8 * MiB, U, U);
  blk (&c, dev0, torch, T (2000), VS_ALLOC_OP_FREE_COMPLETED, 0x10000000, 1000000, MiB, U);

  mem (&c, dev1, T (3000), VS_MEM_KIND_DEVICE, VS_MEM_OP_ALLOC, 0x40000000, 16 * MiB, U, se);
  mem (&c, dev1, T (3100), VS_MEM_KIND_VMM, VS_MEM_OP_ALLOC, 0x50000000, 2 * MiB, U, sc);
  mem (&c, dev1, T (3200), VS_MEM_KIND_VMM, VS_MEM_OP_FREE, 0x50000000, 2 * MiB, U, U);

  {
    VsRange epoch = { c.proc, 7, NULL, "epoch", T (5), U, 0, 0 };
    int64_t eid = vs_writer_add_range (c.w, &epoch);
    VsRange fwd = { c.proc, 7, "train", "forward", T (1000), T (1500), eid, 1 };
    VsRange stp = { c.proc, 7, "train", "step \"1\"", T (1500), T (2500), eid, 1 };

    vs_fixture_check (&c, eid);
    vs_fixture_check (&c, vs_writer_add_range (c.w, &fwd));
    vs_fixture_check (&c, vs_writer_add_range (c.w, &stp));
  }
  {
    static const struct
    {
      int64_t dev, start, len;
      const char *name;
    } ks[] = {
      { 0, 1100, 100, "void gemm<float, 128>(float const*)" },
      { 0, 1300, 200, "void gemm<float, 128>(float const*)" },
      { 0, 1600, 300, "void gemm<float, 128>(float const*)" },
      { 0, 1700, 50, "relu" },
      { 1, 3300, 100, "copy" },
    };

    for (size_t i = 0; i < sizeof ks / sizeof ks[0]; i++)
      {
        VsKernel k = { T (ks[i].start),
                       T (ks[i].start + ks[i].len),
                       c.proc,
                       ks[i].dev == 0 ? dev0 : dev1,
                       U,
                       1,
                       (int64_t)i + 1,
                       ks[i].name,
                       1,
                       1,
                       1,
                       128,
                       1,
                       1,
                       0,
                       0,
                       32 };

        vs_fixture_check (&c, vs_writer_kernel (c.w, &k));
      }
  }
  return vs_fixture_end (&c, true);
}

/* PyTorch with expandable segments on one device (1 GiB):
 *   100 VMM map 2 MiB at 0x60000000 + segment_map 0x60000000 2 MiB
 *   110 VMM map 2 MiB at 0x60200000 + segment_map 0x60200000 2 MiB
 *   200 alloc 0x60000000 req/block 1 MiB
 *   210 alloc 0x60180000 req/block 1 MiB (straddles the two chunks)
 *   300 free 0x60000000
 * At 210: reserved 4 MiB (not 8: the VMM maps are the segment's own),
 *   allocated 2 MiB; free gaps [0x60100000,0x60180000) 512 KiB and
 *   [0x60280000,0x60400000) 1.5 MiB (the block straddles the chunk
 *   boundary, so the chunks form one extent).  After 300 the gaps are
 *   [0x60000000,0x60180000) and [0x60280000,0x60400000), 1.5 MiB each. */
bool
vs_fixture_expandable (const char *path, char *err, size_t errlen)
{
  Ctx c;
  VsDevice d = { 0, "GPU-exp-0", "Test GPU", 1024 * MiB };
  int64_t dev, torch;

  if (!vs_fixture_begin (&c, path, U, err, errlen))
    return false;
  dev = vs_writer_add_device (c.w, &d);
  vs_fixture_check (&c, dev);
  {
    VsAllocator t = { dev, c.proc, "pytorch", "pytorch", U, "expandable_segments:True" };

    torch = vs_writer_add_allocator (c.w, &t);
    vs_fixture_check (&c, torch);
  }
  mem (&c, dev, T (100), VS_MEM_KIND_VMM, VS_MEM_OP_ALLOC, 0x60000000, 2 * MiB, U, U);
  blk (&c, dev, torch, T (100), VS_ALLOC_OP_SEGMENT_MAP, 0x60000000, 2 * MiB, U, U);
  mem (&c, dev, T (110), VS_MEM_KIND_VMM, VS_MEM_OP_ALLOC, 0x60200000, 2 * MiB, U, U);
  blk (&c, dev, torch, T (110), VS_ALLOC_OP_SEGMENT_MAP, 0x60200000, 2 * MiB, U, U);
  blk (&c, dev, torch, T (200), VS_ALLOC_OP_ALLOC, 0x60000000, MiB, MiB, U);
  blk (&c, dev, torch, T (210), VS_ALLOC_OP_ALLOC, 0x60180000, MiB, MiB, U);
  blk (&c, dev, torch, T (300), VS_ALLOC_OP_FREE_COMPLETED, 0x60000000, MiB, MiB, U);
  return vs_fixture_end (&c, true);
}

/* The next xorshift number: deterministic and the same everywhere. */
static unsigned
xorshift (unsigned x)
{
  x ^= x << 13;
  x ^= x >> 17;
  x ^= x << 5;
  return x;
}

bool
vs_fixture_random (const char *path, int n, unsigned seed, char *err, size_t errlen)
{
  Ctx c;
  VsDevice d = { 0, "GPU-random-0", "Test GPU", 80 * 1024 * MiB };
  int64_t dev, live[256];
  int nlive = 0;
  int64_t ts = 0;
  unsigned x = seed ? seed : 1;

  if (!vs_fixture_begin (&c, path, U, err, errlen))
    return false;
  dev = vs_writer_add_device (c.w, &d);
  vs_fixture_check (&c, dev);
  for (int i = 0; i < n && c.ok; i++)
    {
      x = xorshift (x);
      ts += 1 + (x % 2000);
      if (nlive > 0 && (nlive == 256 || (x >> 8) % 2 == 0))
        {
          int k = (int)((x >> 12) % (unsigned)nlive);

          mem (&c, dev, T (ts), VS_MEM_KIND_DEVICE, VS_MEM_OP_FREE, live[k] & 0xffffffffff,
               live[k] >> 40, U, U);
          live[k] = live[--nlive];
        }
      else
        {
          int64_t bytes = 1 + (int64_t)((x >> 4) % 100000);
          int64_t addr = (int64_t)(i + 1) * 0x100000;

          mem (&c, dev, T (ts), VS_MEM_KIND_DEVICE, VS_MEM_OP_ALLOC, addr, bytes, U, U);
          live[nlive++] = (bytes << 40) | addr;
        }
    }
  return vs_fixture_end (&c, true);
}

bool
vs_fixture_allocator_random (const char *path, int n, unsigned seed, bool with_pinned, char *err,
                             size_t errlen)
{
  Ctx c;
  VsDevice d = { 0, "GPU-allocator-0", "Test GPU", 80 * 1024 * MiB };
  int64_t dev, torch, live[256];
  int nlive = 0, nseg = 0;
  int64_t ts = 0, seg_left = 0, seg_next = 0;
  unsigned x = seed ? seed : 1;

  if (!vs_fixture_begin (&c, path, U, err, errlen))
    return false;
  dev = vs_writer_add_device (c.w, &d);
  vs_fixture_check (&c, dev);
  {
    VsAllocator t = { dev, c.proc, "pytorch", "pytorch", U, NULL };

    torch = vs_writer_add_allocator (c.w, &t);
    vs_fixture_check (&c, torch);
  }
  if (with_pinned)
    mem (&c, dev, T (1), VS_MEM_KIND_PINNED, VS_MEM_OP_ALLOC, 0x7f0000000000, 4 * MiB, U, U);
  for (int i = 0; i < n && c.ok; i++)
    {
      x = xorshift (x);
      ts += 1 + (x % 2000);
      if (nlive > 0 && (nlive == 256 || (x >> 8) % 2 == 0))
        {
          int k = (int)((x >> 12) % (unsigned)nlive);

          blk (&c, dev, torch, T (ts), VS_ALLOC_OP_FREE_COMPLETED, live[k] & 0xffffffffff,
               live[k] >> 40, live[k] >> 40, U);
          live[k] = live[--nlive];
        }
      else
        {
          int64_t bytes = 512 * (1 + (int64_t)((x >> 4) % 200));

          if (bytes > seg_left)
            {
              /* A new 20 MiB segment, reserved before the block. */
              seg_next = (int64_t)++nseg * 0x10000000;
              seg_left = 20 * MiB;
              blk (&c, dev, torch, T (ts), VS_ALLOC_OP_SEGMENT_ALLOC, seg_next, seg_left, seg_left,
                   U);
            }
          blk (&c, dev, torch, T (ts), VS_ALLOC_OP_ALLOC, seg_next, bytes, bytes, U);
          live[nlive++] = (bytes << 40) | seg_next;
          seg_next += bytes;
          seg_left -= bytes;
        }
    }
  if (with_pinned)
    mem (&c, dev, T (ts + 1), VS_MEM_KIND_PINNED, VS_MEM_OP_FREE, 0x7f0000000000, 4 * MiB, U, U);
  return vs_fixture_end (&c, true);
}

bool
vs_fixture_steps (const char *path, int steps, int every, int64_t kept, int64_t jump, char *err,
                  size_t errlen)
{
  Ctx c;
  VsDevice d = { 0, "GPU-steps-0", "Test GPU", 80 * 1024 * MiB };
  int64_t dev, ts = 0, next = 0x100000000;

  if (!vs_fixture_begin (&c, path, U, err, errlen))
    return false;
  dev = vs_writer_add_device (c.w, &d);
  vs_fixture_check (&c, dev);
  for (int i = 0; i < steps && c.ok; i++)
    {
      char name[32];
      VsRange r = { c.proc, 7, NULL, name, T (ts + 10), T (ts + 900), 0, 0 };

      snprintf (name, sizeof name, "step %d", i);
      vs_fixture_check (&c, vs_writer_add_range (c.w, &r));
      mem (&c, dev, T (ts + 100), VS_MEM_KIND_DEVICE, VS_MEM_OP_ALLOC, 0x1000, 8 * MiB, U, U);
      if (every > 0 && i % every == every - 1)
        {
          mem (&c, dev, T (ts + 200), VS_MEM_KIND_DEVICE, VS_MEM_OP_ALLOC, next, kept, U, U);
          next += 0x10000000;
        }
      if (jump > 0 && i == steps / 2)
        {
          mem (&c, dev, T (ts + 300), VS_MEM_KIND_DEVICE, VS_MEM_OP_ALLOC, next, jump, U, U);
          next += 0x10000000;
        }
      mem (&c, dev, T (ts + 800), VS_MEM_KIND_DEVICE, VS_MEM_OP_FREE, 0x1000, 8 * MiB, U, U);
      ts += 1000;
    }
  return vs_fixture_end (&c, true);
}

/* SPDX-License-Identifier: MIT */
/* vs-caching-allocator.c — PyTorch's caching allocator, modelled (see
 * vs-caching-allocator.h).
 *
 * Each function below is named after, and does what, the member of
 * DeviceCachingAllocator in c10/cuda/CUDACachingAllocator.cpp that it
 * models; docs/whatif.md lists the rules with the source behaviour each
 * follows.  Pools are GTrees of blocks: `blocks` (free, mapped) ordered by
 * (stream, size, address) so that the lower bound of a (stream, size) key
 * is the best fit, `unmapped` (free address space of expandable segments)
 * by (stream, address).  A serial number breaks ties, so two made-up
 * blocks at one address never collide.
 *
 * Sums of sizes and address ranges are computed with overflow checks
 * (the trace's sizes and the device's capacity come from a file anyone
 * can edit): one that would not fit puts the model out of range, after
 * which every entry point returns at once and the replay is refused.
 */
#include "vs-caching-allocator.h"

#include <string.h>

#include "vs-trace-format.h"

typedef struct
{
  gboolean is_small;
  GTree *blocks;
  GTree *unmapped;
  gint64 get_free_blocks_call_count;
} Pool;

typedef struct
{
  gint64 base;    /* start of the reserved address space */
  gint64 page;    /* mapping granularity: 2 MiB small pool, 20 MiB large */
  gint64 va_size; /* address space reserved */
} Expandable;

struct _VsCaBlock
{
  gint64 ptr;
  gint64 size;
  gint64 requested;
  gint64 stream;
  gint64 gc_count_base;
  guint64 serial;
  Pool *pool;
  VsCaBlock *prev, *next; /* neighbours in the segment */
  Expandable *es;         /* NULL: a cudaMalloc segment */
  gboolean allocated;
  gboolean mapped;
};

struct _VsCachingAllocator
{
  VsAllocConf conf;
  gint64 limit;
  gboolean set_fraction;
  gint64 device_total;
  Pool small, large;
  gint64 total_allocated_memory; /* reserved */
  gint64 peak_reserved;
  gint64 requested, peak_requested;
  gint64 segment_allocs, segment_frees, ooms;
  gint64 max_need;
  gboolean out_of_range; /* see vs_caching_allocator_out_of_range() */
  guint64 serial;
  gint64 next_made_down; /* the last segment address made up (they go down) */
  gint64 next_made_up;   /* the address space of expandable segments (goes up) */
  GPtrArray *expandables;
  GPtrArray *chunks;    /* blocks are carved from these, freed all at once */
  VsCaBlock *free_list; /* blocks given back, linked through next */
  guint chunk_used;
  VsCaSegmentFunc segment_func;
  gpointer segment_data;
  VsCaAddressFunc address_func;
  gpointer address_data;
};

/* Parameters of one malloc (AllocParams). */
typedef struct
{
  gint64 size; /* rounded */
  gint64 stream;
  Pool *pool;
  gint64 alloc_size;
  VsCaBlock *block;
} Params;

/* Blocks by stream, then address, then age. */
static int
cmp_address (gconstpointer pa, gconstpointer pb, gpointer unused)
{
  const VsCaBlock *a = pa, *b = pb;
  if (a->stream != b->stream)
    return a->stream < b->stream ? -1 : 1;
  if (a->ptr != b->ptr)
    return a->ptr < b->ptr ? -1 : 1;
  return a->serial < b->serial ? -1 : a->serial > b->serial;
}

/* Blocks by stream, then size, then as cmp_address(). */
static int
cmp_size (gconstpointer pa, gconstpointer pb, gpointer unused)
{
  const VsCaBlock *a = pa, *b = pb;
  if (a->stream == b->stream && a->size != b->size)
    return a->size < b->size ? -1 : 1;
  return cmp_address (pa, pb, unused);
}

static void
pool_init (Pool *pool, gboolean is_small)
{
  pool->is_small = is_small;
  pool->blocks = g_tree_new_full (cmp_size, NULL, NULL, NULL);
  pool->unmapped = g_tree_new_full (cmp_address, NULL, NULL, NULL);
  pool->get_free_blocks_call_count = 0;
}

#define CHUNK_BLOCKS 4096

static VsCaBlock *
block_new (VsCachingAllocator *ca, Pool *pool, gint64 stream, gint64 ptr, gint64 size)
{
  VsCaBlock *b;
  if (ca->free_list != NULL)
    {
      b = ca->free_list;
      ca->free_list = b->next;
    }
  else
    {
      if (ca->chunks->len == 0 || ca->chunk_used == CHUNK_BLOCKS)
        {
          g_ptr_array_add (ca->chunks, g_new (VsCaBlock, CHUNK_BLOCKS));
          ca->chunk_used = 0;
        }
      b = (VsCaBlock *)g_ptr_array_index (ca->chunks, ca->chunks->len - 1) + ca->chunk_used++;
    }
  memset (b, 0, sizeof *b);
  b->pool = pool;
  b->stream = stream;
  b->ptr = ptr;
  b->size = size;
  b->mapped = TRUE;
  b->serial = ++ca->serial;
  return b;
}

/* Links f into the list of blocks of b's segment just before b. */
static void
link_before (VsCaBlock *b, VsCaBlock *f)
{
  f->prev = b->prev;
  if (b->prev)
    b->prev->next = f;
  f->next = b;
  b->prev = f;
}

/* Links f into the list of blocks of b's segment just after b. */
static void
link_after (VsCaBlock *b, VsCaBlock *f)
{
  f->next = b->next;
  if (b->next)
    b->next->prev = f;
  f->prev = b;
  b->next = f;
}

static void
block_free (VsCachingAllocator *ca, VsCaBlock *b)
{
  b->next = ca->free_list;
  ca->free_list = b;
}

static gboolean
is_split (const VsCaBlock *b)
{
  return b->prev != NULL || b->next != NULL;
}

/* BlockPool::insert_into_blocks: the block's garbage-collection age
 * starts now. */
static void
insert_into_blocks (Pool *pool, VsCaBlock *b)
{
  b->gc_count_base = pool->get_free_blocks_call_count;
  g_tree_insert (pool->blocks, b, b);
}

static void
blocks_remove (Pool *pool, VsCaBlock *b)
{
  gboolean removed = g_tree_remove (pool->blocks, b);
  g_assert (removed);
}

static void
unmapped_remove (Pool *pool, VsCaBlock *b)
{
  gboolean removed = g_tree_remove (pool->unmapped, b);
  g_assert (removed);
}

static void
reserved_changed (VsCachingAllocator *ca, int op, gint64 ptr, gint64 bytes)
{
  if (op == 4 || op == 6)
    {
      if (__builtin_add_overflow (ca->total_allocated_memory, bytes, &ca->total_allocated_memory))
        {
          ca->total_allocated_memory = G_MAXINT64; /* never read: the replay is refused */
          ca->out_of_range = TRUE;
        }
      ca->peak_reserved = MAX (ca->peak_reserved, ca->total_allocated_memory);
      ca->segment_allocs++;
    }
  else
    {
      ca->total_allocated_memory -= bytes;
      ca->segment_frees++;
    }
  g_assert (ca->total_allocated_memory >= 0);
  if (ca->segment_func)
    ca->segment_func (ca->segment_data, op, ptr, bytes);
}

VsCachingAllocator *
vs_caching_allocator_new (const VsAllocConf *conf, gint64 limit, gboolean limit_is_fraction,
                          gint64 device_total_bytes)
{
  g_return_val_if_fail (conf != NULL, NULL);
  VsCachingAllocator *ca = g_new0 (VsCachingAllocator, 1);
  ca->conf = *conf;
  ca->limit = limit;
  ca->set_fraction = limit_is_fraction;
  /* Unknown capacity: 80 GiB, an H100's, only sizes the made-up address
   * space of expandable segments. */
  ca->device_total = device_total_bytes > 0 ? device_total_bytes : 80LL << 30;
  ca->out_of_range = ca->device_total > VS_CA_MAX_BYTES;
  pool_init (&ca->small, TRUE);
  pool_init (&ca->large, FALSE);
  ca->next_made_down = 1LL << 49;
  ca->next_made_up = 1LL << 50;
  ca->expandables = g_ptr_array_new_with_free_func (g_free);
  ca->chunks = g_ptr_array_new_with_free_func (g_free);
  return ca;
}

static gboolean
collect_block (gpointer key, gpointer value, gpointer data)
{
  g_ptr_array_add (data, key);
  return FALSE;
}

void
vs_caching_allocator_free (VsCachingAllocator *ca)
{
  if (ca == NULL)
    return;
  g_tree_destroy (ca->small.blocks);
  g_tree_destroy (ca->small.unmapped);
  g_tree_destroy (ca->large.blocks);
  g_tree_destroy (ca->large.unmapped);
  g_ptr_array_unref (ca->chunks);
  g_ptr_array_unref (ca->expandables);
  g_free (ca);
}

void
vs_caching_allocator_set_segment_func (VsCachingAllocator *ca, VsCaSegmentFunc func, gpointer data)
{
  g_return_if_fail (ca != NULL);
  ca->segment_func = func;
  ca->segment_data = data;
}

void
vs_caching_allocator_set_address_func (VsCachingAllocator *ca, VsCaAddressFunc func, gpointer data)
{
  g_return_if_fail (ca != NULL);
  ca->address_func = func;
  ca->address_data = data;
}

/* An address for a new segment of bytes, aligned as CUDA aligns (2 MiB).
 * Made up, each below the ones before: that is where cudaMalloc put the
 * large segments of the recorded runs (tests/data/whatif), and where a
 * segment lies decides which of two equal free blocks best fit takes. */
static gint64
new_address (VsCachingAllocator *ca, gint64 bytes)
{
  gint64 a = ca->address_func ? ca->address_func (ca->address_data, bytes) : VS_UNKNOWN;
  gint64 end;
  if (a != VS_UNKNOWN)
    {
      /* a recorded address: the segment must end within 64 bits */
      if (__builtin_add_overflow (a, bytes, &end))
        ca->out_of_range = TRUE;
      ca->next_made_down = MIN (ca->next_made_down, a);
      return a;
    }
  if (__builtin_sub_overflow (ca->next_made_down,
                              (bytes + VS_CA_ROUND_LARGE - 1) / VS_CA_ROUND_LARGE
                                  * VS_CA_ROUND_LARGE,
                              &ca->next_made_down))
    ca->out_of_range = TRUE;
  return ca->next_made_down;
}

/* get_allocation_size(): the segment a request of (rounded) size needs. */
static gint64
get_allocation_size (gint64 size)
{
  if (size <= VS_CA_SMALL_SIZE)
    return VS_CA_SMALL_BUFFER;
  if (size < VS_CA_MIN_LARGE_ALLOC)
    return VS_CA_LARGE_BUFFER;
  return VS_CA_ROUND_LARGE * ((size + VS_CA_ROUND_LARGE - 1) / VS_CA_ROUND_LARGE);
}

static gboolean
gc_enabled (VsCachingAllocator *ca)
{
  return ca->set_fraction && ca->conf.garbage_collection_threshold > 0.0;
}

/* The first node of tree not below a block-shaped key. */
static GTreeNode *
lower_bound (GTree *tree, gint64 stream, gint64 size, gint64 ptr)
{
  VsCaBlock key = { .stream = stream, .size = size, .ptr = ptr, .serial = 0 };
  return g_tree_lower_bound (tree, &key);
}

static VsCaBlock *
node_block (GTreeNode *n)
{
  return n ? g_tree_node_key (n) : NULL;
}

/* A block's size for best fit among expandable segments: what it can grow
 * to by mapping the unmapped space after it. */
static gint64
expandable_size (const VsCaBlock *b)
{
  return b->size + (b->next && !b->next->mapped ? b->next->size : 0);
}

/* get_free_block(): the best fit for p in its pool, taken out of it. */
static gboolean
get_free_block (VsCachingAllocator *ca, Params *p)
{
  Pool *pool = p->pool;
  const VsAllocConf *c = &ca->conf;

  if (gc_enabled (ca))
    pool->get_free_blocks_call_count++;
  GTreeNode *it = lower_bound (pool->blocks, p->stream, p->size, G_MININT64);
  VsCaBlock *b = node_block (it);
  if (b == NULL || b->stream != p->stream)
    return FALSE;
  if (b->es != NULL)
    {
      if (c->expandable_segments)
        {
          GTreeNode *next = g_tree_node_next (it);
          while (node_block (it)->es != NULL && next != NULL
                 && node_block (next)->stream == p->stream
                 && expandable_size (node_block (next)) < expandable_size (node_block (it)))
            {
              it = next;
              next = g_tree_node_next (next);
            }
        }
      else
        {
          do
            it = g_tree_node_next (it);
          while (it != NULL && node_block (it)->es != NULL && node_block (it)->stream == p->stream);
          if (it == NULL || node_block (it)->stream != p->stream)
            return FALSE;
        }
      b = node_block (it);
    }
  /* An oversize block serves only requests of at least max_split_size,
   * and those only within max_non_split_rounding of their size. */
  if (p->size < c->max_split_size && b->size >= c->max_split_size)
    return FALSE;
  if (p->size >= c->max_split_size && b->size >= p->size + c->max_non_split_rounding)
    return FALSE;
  blocks_remove (pool, b);
  p->block = b;
  return TRUE;
}

/* try_merge_blocks(): dst absorbs its neighbour src when src is free and
 * mapped alike; returns the bytes absorbed. */
static gint64
try_merge_blocks (VsCachingAllocator *ca, VsCaBlock *dst, VsCaBlock *src, Pool *pool)
{
  if (src == NULL || src->allocated || dst->mapped != src->mapped)
    return 0;
  if (src->mapped)
    blocks_remove (pool, src);
  else
    unmapped_remove (pool, src);
  if (dst->prev == src)
    {
      dst->ptr = src->ptr;
      dst->prev = src->prev;
      if (dst->prev)
        dst->prev->next = dst;
    }
  else
    {
      g_assert (dst->next == src);
      dst->next = src->next;
      if (dst->next)
        dst->next->prev = dst;
    }
  gint64 subsumed = src->size;
  dst->size += subsumed;
  block_free (ca, src);
  return subsumed;
}

/* release_block(): a whole cudaMalloc segment back to CUDA. */
static void
release_block (VsCachingAllocator *ca, VsCaBlock *b)
{
  g_assert (b->es == NULL && !is_split (b) && !b->allocated);
  blocks_remove (b->pool, b);
  reserved_changed (ca, 5, b->ptr, b->size);
  block_free (ca, b);
}

/* garbage_collect_cached_blocks(): when reserved exceeds the threshold's
 * share of the cap, give back unsplit cached large blocks, the ones unused
 * for longest (age = get_free_block calls since cached) first. */
static void
garbage_collect_cached_blocks (VsCachingAllocator *ca)
{
  /* limit may be G_MAXINT64, which a double rounds up past the range */
  double threshold = ca->conf.garbage_collection_threshold * (double)ca->limit;
  gint64 gc_threshold = threshold >= 0x1p63 ? G_MAXINT64 : (gint64)threshold;
  if (ca->total_allocated_memory <= gc_threshold)
    return;
  gint64 target = ca->total_allocated_memory - gc_threshold;
  gint64 reclaimed = 0;
  Pool *pool = &ca->large;
  gint64 total_age = 0;
  int freeable = 0;
  g_autoptr (GPtrArray) list = g_ptr_array_new ();

  g_tree_foreach (pool->blocks, collect_block, list);
  for (guint i = 0; i < list->len; i++)
    {
      VsCaBlock *b = g_ptr_array_index (list, i);
      if (!is_split (b) && b->es == NULL)
        {
          total_age += pool->get_free_blocks_call_count - b->gc_count_base;
          freeable++;
        }
    }
  if (freeable == 0)
    return;
  gboolean freed = TRUE;
  while (reclaimed < target && freed && freeable > 0)
    {
      double age_threshold = (double)total_age / freeable;
      freed = FALSE;
      g_ptr_array_set_size (list, 0);
      g_tree_foreach (pool->blocks, collect_block, list);
      for (guint i = 0; i < list->len; i++)
        {
          VsCaBlock *b = g_ptr_array_index (list, i);
          gint64 age = pool->get_free_blocks_call_count - b->gc_count_base;
          if (!is_split (b) && b->es == NULL && (double)age >= age_threshold)
            {
              freed = TRUE;
              reclaimed += b->size;
              total_age -= age;
              freeable--;
              release_block (ca, b);
            }
        }
    }
}

/* The made-up address space of a new expandable segment, or NULL (the
 * model out of range) when it would end past 2^63.  device_total is at
 * most VS_CA_MAX_BYTES, so its 1 1/8, page-rounded, fits. */
static Expandable *
expandable_new (VsCachingAllocator *ca, gboolean small)
{
  gint64 want = ca->device_total + ca->device_total / 8;
  gint64 page = small ? VS_CA_SMALL_BUFFER : VS_CA_LARGE_BUFFER;
  gint64 va_size = (want + page - 1) / page * page;
  gint64 next;
  if (__builtin_add_overflow (ca->next_made_up, va_size + VS_CA_LARGE_BUFFER, &next))
    {
      ca->out_of_range = TRUE;
      return NULL;
    }
  Expandable *es = g_new0 (Expandable, 1);
  es->page = page;
  es->va_size = va_size;
  es->base = ca->next_made_up;
  ca->next_made_up = next;
  g_ptr_array_add (ca->expandables, es);
  return es;
}

static gboolean
allocatable (const VsCaBlock *b)
{
  return b != NULL && !b->allocated;
}

/* find_expandable_block(): the lowest free-or-unmapped stretch of an
 * expandable segment of this stream and pool with room for size, or the
 * whole address space of a new segment (NULL when the model is out of
 * range). */
static VsCaBlock *
find_expandable_block (VsCachingAllocator *ca, gint64 stream, Pool *pool, gint64 size)
{
  for (GTreeNode *it = lower_bound (pool->unmapped, stream, 0, G_MININT64);
       it != NULL && node_block (it)->stream == stream; it = g_tree_node_next (it))
    {
      VsCaBlock *c = node_block (it);
      if (allocatable (c->prev))
        c = c->prev;
      gint64 bytes = 0;
      for (VsCaBlock *b = c; bytes < size && allocatable (b); b = b->next)
        bytes += b->size;
      if (bytes >= size)
        return c;
    }
  Expandable *es = expandable_new (ca, pool->is_small);
  if (es == NULL)
    return NULL;
  VsCaBlock *candidate = block_new (ca, pool, stream, es->base, es->va_size);
  candidate->mapped = FALSE;
  candidate->es = es;
  g_tree_insert (pool->unmapped, candidate, candidate);
  return candidate;
}

/* map_block(): physical pages for the first size bytes of an unmapped
 * block (whole pages), merged with free mapped neighbours.  Fails, mapping
 * nothing, when the pages would take reserved past a device-filling
 * limit. */
static gboolean
map_block (VsCachingAllocator *ca, VsCaBlock *to_map, gint64 size)
{
  Expandable *es = to_map->es;
  g_assert (!to_map->mapped && size <= to_map->size);
  g_assert ((to_map->ptr - es->base) % es->page == 0);
  gint64 pages = (size + es->page - 1) / es->page;
  gint64 bytes = pages * es->page;
  if (bytes == 0)
    return FALSE;
  gint64 need;
  if (__builtin_add_overflow (ca->total_allocated_memory, bytes, &need))
    {
      ca->out_of_range = TRUE;
      return FALSE;
    }
  ca->max_need = MAX (ca->max_need, need);
  if (!ca->set_fraction && need > ca->limit)
    return FALSE;
  g_assert (bytes <= to_map->size);
  Pool *pool = to_map->pool;
  unmapped_remove (pool, to_map);
  to_map->mapped = TRUE;
  if (bytes < to_map->size)
    {
      VsCaBlock *remaining
          = block_new (ca, pool, to_map->stream, to_map->ptr + bytes, to_map->size - bytes);
      remaining->mapped = FALSE;
      remaining->es = es;
      link_after (to_map, remaining);
      g_tree_insert (pool->unmapped, remaining, remaining);
      to_map->size = bytes;
    }
  gint64 mapped_ptr = to_map->ptr;
  try_merge_blocks (ca, to_map, to_map->prev, pool);
  try_merge_blocks (ca, to_map, to_map->next, pool);
  insert_into_blocks (pool, to_map);
  reserved_changed (ca, 6, mapped_ptr, bytes);
  return TRUE;
}

/* try_allocate_expandable_block(): grow an expandable segment (or start
 * one) until a free block of size bytes exists; returns it out of the
 * pool. */
static VsCaBlock *
try_allocate_expandable_block (VsCachingAllocator *ca, gint64 stream, Pool *pool, gint64 size)
{
  VsCaBlock *candidate = find_expandable_block (ca, stream, pool, size);
  if (candidate == NULL)
    return NULL;
  if (!candidate->mapped && !map_block (ca, candidate, MIN (candidate->size, size)))
    return NULL;
  g_assert (candidate->mapped);
  while (candidate->size < size)
    {
      gint64 remaining = size - candidate->size;
      VsCaBlock *next = candidate->next;
      /* A request larger than a new segment's whole address space (1 1/8
       * of the device) maps all of it and still does not fit: it fails,
       * as the device would have failed it long before. */
      if (next == NULL)
        return NULL;
      if (!map_block (ca, next, MIN (remaining, next->size)))
        return NULL;
      candidate = next;
    }
  blocks_remove (pool, candidate);
  return candidate;
}

/* alloc_block(): a new segment (cudaMalloc of alloc_size bytes), or with
 * expandable segments more pages mapped. */
static gboolean
alloc_block (VsCachingAllocator *ca, Params *p)
{
  gint64 need;
  if (ca->out_of_range || __builtin_add_overflow (ca->total_allocated_memory, p->alloc_size, &need))
    {
      ca->out_of_range = TRUE;
      return FALSE;
    }
  if (!ca->conf.expandable_segments || ca->set_fraction)
    ca->max_need = MAX (ca->max_need, need);
  if (ca->set_fraction && need > ca->limit)
    return FALSE;
  if (ca->conf.expandable_segments)
    {
      p->block = try_allocate_expandable_block (ca, p->stream, p->pool, p->size);
      return p->block != NULL;
    }
  if (!ca->set_fraction && need > ca->limit)
    return FALSE;
  gint64 ptr = new_address (ca, p->alloc_size);
  if (ca->out_of_range)
    return FALSE;
  p->block = block_new (ca, p->pool, p->stream, ptr, p->alloc_size);
  reserved_changed (ca, 4, ptr, p->alloc_size);
  return TRUE;
}

/* release_available_cached_blocks(): with max_split_size set, give back
 * oversize cached blocks of the request's pool and stream — the smallest
 * single one large enough, else the largest ones until enough. */
static gboolean
release_available_cached_blocks (VsCachingAllocator *ca, Params *p)
{
  gint64 max_split = ca->conf.max_split_size;
  if (max_split == G_MAXINT64)
    return FALSE;
  Pool *pool = p->pool;
  gint64 key_size = p->size < max_split ? max_split : p->size;
  GTreeNode *it = lower_bound (pool->blocks, p->stream, key_size, G_MININT64);
  if (it == NULL || node_block (it)->stream != p->stream)
    {
      /* No single block is large enough: free several, largest first. */
      GTreeNode *prev = it ? g_tree_node_previous (it) : g_tree_node_last (pool->blocks);
      if (prev == NULL)
        return FALSE;
      gint64 released = 0;
      it = prev;
      while (released < key_size && node_block (it)->size >= max_split
             && node_block (it)->stream == p->stream)
        {
          VsCaBlock *cur = node_block (it);
          VsCaBlock *before = node_block (g_tree_node_previous (it));
          released += cur->size;
          if (cur->es == NULL && !is_split (cur))
            release_block (ca, cur);
          if (before == NULL)
            break;
          it = g_tree_lookup_node (pool->blocks, before);
        }
      return released >= key_size;
    }
  VsCaBlock *b = node_block (it);
  if (b->es == NULL && !is_split (b))
    release_block (ca, b);
  return TRUE;
}

/* unmap_block(): the whole free pages of a free block of an expandable
 * segment go back; what is left of the block on either side stays free
 * and mapped. */
static void
unmap_block (VsCachingAllocator *ca, VsCaBlock *b)
{
  Expandable *es = b->es;
  Pool *pool = b->pool;
  gint64 first = (b->ptr - es->base + es->page - 1) / es->page;
  gint64 end = (b->ptr + b->size - es->base) / es->page;
  if (first >= end)
    return;
  gint64 uptr = es->base + first * es->page;
  gint64 usize = (end - first) * es->page;
  blocks_remove (pool, b);
  gint64 before = uptr - b->ptr;
  if (before > 0)
    {
      VsCaBlock *f = block_new (ca, pool, b->stream, b->ptr, before);
      f->es = es;
      link_before (b, f);
      insert_into_blocks (pool, f);
    }
  gint64 after = b->size - (before + usize);
  if (after > 0)
    {
      VsCaBlock *f = block_new (ca, pool, b->stream, uptr + usize, after);
      f->es = es;
      link_after (b, f);
      insert_into_blocks (pool, f);
    }
  b->ptr = uptr;
  b->size = usize;
  b->mapped = FALSE;
  try_merge_blocks (ca, b, b->prev, pool);
  try_merge_blocks (ca, b, b->next, pool);
  g_tree_insert (pool->unmapped, b, b);
  reserved_changed (ca, 7, uptr, usize);
}

/* release_blocks(): every unsplit cached segment of the pool back, every
 * free page of its expandable segments unmapped (and a segment left with
 * nothing mapped forgotten). */
static void
release_blocks (VsCachingAllocator *ca, Pool *pool)
{
  g_autoptr (GPtrArray) list = g_ptr_array_new ();
  g_autoptr (GPtrArray) to_unmap = g_ptr_array_new ();

  g_tree_foreach (pool->blocks, collect_block, list);
  for (guint i = 0; i < list->len; i++)
    {
      VsCaBlock *b = g_ptr_array_index (list, i);
      if (b->es != NULL)
        g_ptr_array_add (to_unmap, b);
      else if (!is_split (b))
        release_block (ca, b);
    }
  for (guint i = 0; i < to_unmap->len; i++)
    {
      VsCaBlock *b = g_ptr_array_index (to_unmap, i);
      unmap_block (ca, b);
      if (!is_split (b))
        {
          /* release_expandable_segment() */
          g_assert (!b->mapped && b->size == b->es->va_size);
          unmapped_remove (pool, b);
          g_ptr_array_remove_fast (ca->expandables, b->es);
          block_free (ca, b);
        }
    }
}

/* release_cached_blocks(): what empty_cache() and the last retry do. */
static void
release_cached_blocks (VsCachingAllocator *ca)
{
  release_blocks (ca, &ca->large);
  release_blocks (ca, &ca->small);
}

/* should_split(): whether the rest of a block taken for size bytes becomes
 * a free block of its own. */
static gboolean
should_split (VsCachingAllocator *ca, const VsCaBlock *b, gint64 size)
{
  gint64 remaining = b->size - size;
  if (b->pool->is_small || ca->conf.expandable_segments)
    return remaining >= VS_CA_MIN_BLOCK_SIZE;
  return size < ca->conf.max_split_size && remaining > VS_CA_SMALL_SIZE;
}

/* Requested bytes in use grow by bytes (checked: past 2^63 the model is
 * out of range). */
static void
add_requested (VsCachingAllocator *ca, gint64 bytes)
{
  if (__builtin_add_overflow (ca->requested, bytes, &ca->requested))
    {
      ca->requested = G_MAXINT64; /* never read: the replay is refused */
      ca->out_of_range = TRUE;
    }
  ca->peak_requested = MAX (ca->peak_requested, ca->requested);
}

/* alloc_found_block(): the block found (out of its pool) handed out,
 * its remainder split off into the pool when should_split. */
static VsCaBlock *
alloc_found_block (VsCachingAllocator *ca, Params *p, gint64 orig_size)
{
  VsCaBlock *b = p->block;
  if (should_split (ca, b, p->size))
    {
      VsCaBlock *remaining = b;
      b = block_new (ca, p->pool, p->stream, remaining->ptr, p->size);
      b->es = remaining->es;
      b->prev = remaining->prev;
      if (b->prev)
        b->prev->next = b;
      b->next = remaining;
      remaining->prev = b;
      remaining->ptr += p->size;
      remaining->size -= p->size;
      insert_into_blocks (p->pool, remaining);
    }
  b->allocated = TRUE;
  b->requested = orig_size;
  add_requested (ca, orig_size);
  return b;
}

VsCaBlock *
vs_caching_allocator_malloc (VsCachingAllocator *ca, gint64 orig_size, gint64 stream)
{
  g_return_val_if_fail (ca != NULL && orig_size >= 0, NULL);
  if (orig_size > VS_CA_MAX_BYTES)
    ca->out_of_range = TRUE;
  if (ca->out_of_range)
    return NULL;
  Params p = { 0 };
  p.size = vs_alloc_conf_round_size (&ca->conf, orig_size);
  p.stream = stream;
  p.pool = p.size <= VS_CA_SMALL_SIZE ? &ca->small : &ca->large;
  p.alloc_size = get_allocation_size (p.size);

  gboolean found = get_free_block (ca, &p);
  if (!found)
    {
      if (gc_enabled (ca))
        garbage_collect_cached_blocks (ca);
      found = alloc_block (ca, &p)
              || (release_available_cached_blocks (ca, &p) && alloc_block (ca, &p))
              || (release_cached_blocks (ca), alloc_block (ca, &p));
    }
  if (ca->out_of_range)
    return NULL;
  if (!found)
    {
      ca->ooms++;
      return NULL;
    }
  return alloc_found_block (ca, &p, orig_size);
}

/* free_block(): the block back into its pool, merged with free
 * neighbours. */
void
vs_caching_allocator_release (VsCachingAllocator *ca, VsCaBlock *b)
{
  g_return_if_fail (ca != NULL && b != NULL && b->allocated);
  if (ca->out_of_range)
    return;
  b->allocated = FALSE;
  ca->requested -= b->requested;
  b->requested = 0;
  try_merge_blocks (ca, b, b->prev, b->pool);
  try_merge_blocks (ca, b, b->next, b->pool);
  insert_into_blocks (b->pool, b);
}

void
vs_caching_allocator_empty_cache (VsCachingAllocator *ca)
{
  g_return_if_fail (ca != NULL);
  if (ca->out_of_range)
    return;
  release_cached_blocks (ca);
}

/* The bytes unmap_block() would unmap of a free block of an expandable
 * segment: its whole pages. */
static gint64
unmappable (const VsCaBlock *b)
{
  Expandable *es = b->es;
  gint64 first = (b->ptr - es->base + es->page - 1) / es->page;
  gint64 end = (b->ptr + b->size - es->base) / es->page;
  return end > first ? (end - first) * es->page : 0;
}

static gboolean
add_releasable (gpointer key, gpointer value, gpointer data)
{
  const VsCaBlock *b = key;
  gint64 *sum = data;
  if (b->es != NULL)
    *sum += unmappable (b);
  else if (!is_split (b))
    *sum += b->size;
  return FALSE;
}

gint64
vs_caching_allocator_get_releasable (VsCachingAllocator *ca)
{
  gint64 sum = 0;
  g_return_val_if_fail (ca != NULL, 0);
  g_tree_foreach (ca->large.blocks, add_releasable, &sum);
  g_tree_foreach (ca->small.blocks, add_releasable, &sum);
  return sum;
}

/* The free mapped block of either pool holding [address, address + bytes),
 * or NULL. */
static VsCaBlock *
find_free_block (VsCachingAllocator *ca, gint64 address, gint64 bytes)
{
  Pool *pools[] = { &ca->large, &ca->small };
  g_autoptr (GPtrArray) list = g_ptr_array_new ();
  gint64 end;
  if (bytes < 0 || __builtin_add_overflow (address, bytes, &end))
    return NULL;
  for (int k = 0; k < 2; k++)
    {
      g_ptr_array_set_size (list, 0);
      g_tree_foreach (pools[k]->blocks, collect_block, list);
      for (guint i = 0; i < list->len; i++)
        {
          VsCaBlock *b = g_ptr_array_index (list, i);
          if (b->ptr <= address && end <= b->ptr + b->size)
            return b;
        }
    }
  return NULL;
}

gboolean
vs_caching_allocator_release_recorded (VsCachingAllocator *ca, int op, gint64 address, gint64 bytes)
{
  g_return_val_if_fail (ca != NULL, FALSE);
  if (ca->out_of_range)
    return FALSE;
  VsCaBlock *b = find_free_block (ca, address, bytes);
  if (b == NULL)
    return FALSE;
  if (op == 5)
    {
      if (b->es != NULL || is_split (b) || b->ptr != address || b->size != bytes)
        return FALSE;
      release_block (ca, b);
      return TRUE;
    }
  Expandable *es = b->es;
  if (op != 7 || es == NULL || (address - es->base) % es->page != 0 || bytes % es->page != 0)
    return FALSE;
  /* Cut the free block to exactly the range, then unmap it whole. */
  Pool *pool = b->pool;
  blocks_remove (pool, b);
  if (address > b->ptr)
    {
      VsCaBlock *f = block_new (ca, pool, b->stream, b->ptr, address - b->ptr);
      f->es = es;
      link_before (b, f);
      b->size -= f->size;
      b->ptr = address;
      insert_into_blocks (pool, f);
    }
  if (b->size > bytes)
    {
      VsCaBlock *f = block_new (ca, pool, b->stream, address + bytes, b->size - bytes);
      f->es = es;
      link_after (b, f);
      b->size = bytes;
      insert_into_blocks (pool, f);
    }
  insert_into_blocks (pool, b);
  unmap_block (ca, b);
  if (!b->mapped && !is_split (b))
    {
      unmapped_remove (pool, b);
      g_ptr_array_remove_fast (ca->expandables, b->es);
      block_free (ca, b);
    }
  return TRUE;
}

void
vs_caching_allocator_add_segment (VsCachingAllocator *ca, gint64 address, gint64 bytes,
                                  gint64 stream, gboolean small)
{
  g_return_if_fail (ca != NULL && bytes > 0);
  gint64 end;
  if (bytes > VS_CA_MAX_BYTES || __builtin_add_overflow (address, bytes, &end))
    ca->out_of_range = TRUE;
  if (ca->out_of_range)
    return;
  Pool *pool = small ? &ca->small : &ca->large;
  VsCaBlock *b = block_new (ca, pool, stream, address, bytes);
  reserved_changed (ca, 4, address, bytes);
  insert_into_blocks (pool, b);
}

VsCaBlock *
vs_caching_allocator_place_block (VsCachingAllocator *ca, gint64 address, gint64 requested,
                                  gint64 block_bytes, gint64 stream)
{
  g_return_val_if_fail (ca != NULL, NULL);
  if (requested < 0 || requested > VS_CA_MAX_BYTES)
    ca->out_of_range = TRUE;
  if (ca->out_of_range)
    return NULL;
  Pool *pools[] = { &ca->large, &ca->small };
  VsCaBlock *f = NULL;
  g_autoptr (GPtrArray) list = g_ptr_array_new ();

  for (int k = 0; k < 2 && f == NULL; k++)
    {
      g_ptr_array_set_size (list, 0);
      g_tree_foreach (pools[k]->blocks, collect_block, list);
      for (guint i = 0; i < list->len && f == NULL; i++)
        {
          VsCaBlock *b = g_ptr_array_index (list, i);
          if (b->ptr <= address && address < b->ptr + b->size)
            f = b;
        }
    }
  if (f == NULL)
    return NULL;
  Pool *pool = f->pool;
  blocks_remove (pool, f);
  if (address > f->ptr)
    {
      VsCaBlock *front = block_new (ca, pool, f->stream, f->ptr, address - f->ptr);
      link_before (f, front);
      f->ptr = address;
      f->size -= front->size;
      insert_into_blocks (pool, front);
    }
  gint64 size = block_bytes != VS_UNKNOWN && block_bytes > 0
                    ? block_bytes
                    : vs_alloc_conf_round_size (&ca->conf, requested);
  Params p = { .size = MIN (size, f->size), .stream = stream, .pool = pool, .block = f };
  f->stream = stream;
  gboolean known = block_bytes != VS_UNKNOWN && block_bytes > 0;
  if (known && f->size > p.size)
    {
      /* The block's size is known: whatever follows it is free space. */
      VsCaBlock *rest = block_new (ca, pool, f->stream, f->ptr + p.size, f->size - p.size);
      link_after (f, rest);
      f->size = p.size;
      insert_into_blocks (pool, rest);
      f->allocated = TRUE;
      f->requested = requested;
      add_requested (ca, requested);
      return f;
    }
  return alloc_found_block (ca, &p, requested);
}

gint64
vs_ca_block_get_address (const VsCaBlock *block)
{
  g_return_val_if_fail (block != NULL, 0);
  return block->ptr;
}

gint64
vs_ca_block_get_size (const VsCaBlock *block)
{
  g_return_val_if_fail (block != NULL, 0);
  return block->size;
}

gint64
vs_caching_allocator_get_reserved (VsCachingAllocator *ca)
{
  return ca->total_allocated_memory;
}

gint64
vs_caching_allocator_get_peak_reserved (VsCachingAllocator *ca)
{
  return ca->peak_reserved;
}

gint64
vs_caching_allocator_get_requested (VsCachingAllocator *ca)
{
  return ca->requested;
}

gint64
vs_caching_allocator_get_peak_requested (VsCachingAllocator *ca)
{
  return ca->peak_requested;
}

gint64
vs_caching_allocator_get_segment_allocs (VsCachingAllocator *ca)
{
  return ca->segment_allocs;
}

gint64
vs_caching_allocator_get_segment_frees (VsCachingAllocator *ca)
{
  return ca->segment_frees;
}

gint64
vs_caching_allocator_get_ooms (VsCachingAllocator *ca)
{
  return ca->ooms;
}

gboolean
vs_caching_allocator_out_of_range (VsCachingAllocator *ca)
{
  return ca->out_of_range;
}

gint64
vs_caching_allocator_get_max_need (VsCachingAllocator *ca)
{
  return ca->max_need;
}

gint64
vs_caching_allocator_allocation_size (VsCachingAllocator *ca, gint64 requested)
{
  g_return_val_if_fail (ca != NULL && requested >= 0, VS_UNKNOWN);
  return get_allocation_size (vs_alloc_conf_round_size (&ca->conf, requested));
}

/* SPDX-License-Identifier: MIT */
/* vs-queue.c — the bounded queue from application threads to the writer.
 *
 * Workload: a few producers (threads that allocate, fail an allocation or
 * open an NVTX range) and one consumer (the writer thread) that empties the
 * queue every few milliseconds.  A mutex held for one memcpy is cheaper and
 * simpler than a lock-free ring at these rates, and a full queue drops the
 * item (counted) instead of blocking the application.
 */
#include "vs-collector-private.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

/* Allocates a ring of cap items.  Returns 0, or -1 when out of memory. */
int
vs_queue_init (VsQueue *q, size_t cap)
{
  assert (cap > 0);
  memset (q, 0, sizeof *q);
  q->ring = calloc (cap, sizeof (VsItem));
  if (q->ring == NULL)
    return -1;
  q->cap = cap;
  q->next_range_key = 1;
  pthread_mutex_init (&q->lock, NULL);
  pthread_cond_init (&q->wake, NULL);
  atomic_init (&q->dropped, 0);
  return 0;
}

/* Frees the ring; no thread may use q afterwards. */
void
vs_queue_destroy (VsQueue *q)
{
  free (q->ring);
  q->ring = NULL;
  pthread_mutex_destroy (&q->lock);
  pthread_cond_destroy (&q->wake);
}

/* Appends under the lock; the caller holds q->lock.  Returns false when
 * the ring is full. */
static bool
push_locked (VsQueue *q, const VsItem *item)
{
  assert (q->ring != NULL && q->head < q->cap && q->count <= q->cap);
  if (q->count == q->cap)
    {
      atomic_fetch_add (&q->dropped, 1);
      return false;
    }
  q->ring[(q->head + q->count) % q->cap] = *item;
  q->count++;
  /* Wake the writer early only when the ring is filling up; otherwise it
   * wakes on its own timer and takes everything in one go. */
  if (q->count == q->cap / 2)
    pthread_cond_signal (&q->wake);
  return true;
}

/* Copies *item into the queue; false (counted as dropped) when full. */
bool
vs_queue_push (VsQueue *q, const VsItem *item)
{
  pthread_mutex_lock (&q->lock);
  bool ok = push_locked (q, item);
  pthread_mutex_unlock (&q->lock);
  return ok;
}

/* Assigns the next range key and enqueues the RANGE_BEGIN atomically, so
 * keys reach the writer in increasing order with no gaps.  Returns the key,
 * or 0 when the item was dropped (no key is consumed then). */
uint64_t
vs_queue_push_range (VsQueue *q, VsItem *item)
{
  uint64_t key = 0;
  pthread_mutex_lock (&q->lock);
  assert (q->next_range_key > 0);
  item->range = q->next_range_key;
  if (push_locked (q, item))
    key = q->next_range_key++;
  pthread_mutex_unlock (&q->lock);
  return key;
}

/* Takes up to max items, oldest first. */
size_t
vs_queue_pop (VsQueue *q, VsItem *out, size_t max)
{
  pthread_mutex_lock (&q->lock);
  assert (q->head < q->cap && q->count <= q->cap);
  size_t n = q->count < max ? q->count : max;
  for (size_t i = 0; i < n; i++)
    out[i] = q->ring[(q->head + i) % q->cap];
  q->head = (q->head + n) % q->cap;
  q->count -= n;
  pthread_mutex_unlock (&q->lock);
  return n;
}

/* In a fork child only the forking thread exists; a lock another thread
 * held at fork time would never be released, so make new ones. */
void
vs_queue_after_fork (VsQueue *q)
{
  pthread_mutex_init (&q->lock, NULL);
  pthread_cond_init (&q->wake, NULL);
}

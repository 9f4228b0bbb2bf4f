/* SPDX-License-Identifier: MIT */
/* vs-chunk-coder.c — chunks coded on a thread of their own
 * (vs-chunk-coder.h).
 *
 * A FIFO of jobs under one mutex: the caller appends, the thread codes
 * the first job not yet coded, the drain waits until none is left
 * uncoded and takes the whole list.  The thread owns only the codec;
 * every job's buffers pass from caller to thread and back under the
 * mutex.
 */
#include "vs-chunk-coder.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct Job Job;
struct Job
{
  Job *next;
  int tag;
  int64_t seq;
  VsChunk chunk;
  bool coded;
  uint8_t *data, *zone; /* coded: the payload and the zone map (data NULL: failed) */
  size_t data_len, zone_len;
  char err[160];
};

struct VsChunkCoder
{
  pthread_mutex_t lock;
  pthread_cond_t work; /* a job came, or stop */
  pthread_cond_t done; /* a job was coded */
  pthread_t thread;
  VsChunkCodec *codec;
  Job *head, *tail;
  Job *todo; /* the first job not coded yet, NULL: none */
  bool stop;
};

static void
job_free (Job *j)
{
  free (j->chunk.values);
  free (j->chunk.nulls);
  free (j->data);
  free (j->zone);
  free (j);
}

static void *
coder_main (void *arg)
{
  VsChunkCoder *c = arg;

  pthread_mutex_lock (&c->lock);
  for (;;)
    {
      while (c->todo == NULL && !c->stop)
        pthread_cond_wait (&c->work, &c->lock);
      if (c->stop)
        break;
      Job *j = c->todo;
      pthread_mutex_unlock (&c->lock);
      /* Outside the lock: the caller only appends after j, and takes j
       * only once it is coded. */
      if (vs_chunk_encode (c->codec, &j->chunk, &j->data, &j->data_len, &j->zone, &j->zone_len,
                           j->err, sizeof j->err)
          < 0)
        j->data = NULL;
      free (j->chunk.values);
      free (j->chunk.nulls);
      j->chunk.values = NULL;
      j->chunk.nulls = NULL;
      pthread_mutex_lock (&c->lock);
      j->coded = true;
      c->todo = j->next;
      pthread_cond_broadcast (&c->done);
    }
  pthread_mutex_unlock (&c->lock);
  return NULL;
}

VsChunkCoder *
vs_chunk_coder_new (void)
{
  VsChunkCoder *c = calloc (1, sizeof *c);

  if (c == NULL)
    return NULL;
  c->codec = vs_chunk_codec_new ();
  if (c->codec == NULL)
    {
      free (c);
      return NULL;
    }
  pthread_mutex_init (&c->lock, NULL);
  pthread_cond_init (&c->work, NULL);
  pthread_cond_init (&c->done, NULL);
  if (pthread_create (&c->thread, NULL, coder_main, c) != 0)
    {
      pthread_cond_destroy (&c->done);
      pthread_cond_destroy (&c->work);
      pthread_mutex_destroy (&c->lock);
      vs_chunk_codec_free (c->codec);
      free (c);
      return NULL;
    }
  return c;
}

int
vs_chunk_coder_push (VsChunkCoder *c, int tag, int64_t seq, VsChunk *chunk, char *err,
                     size_t errlen)
{
  Job *j = calloc (1, sizeof *j);

  if (j == NULL)
    {
      free (chunk->values);
      free (chunk->nulls);
      chunk->values = NULL;
      chunk->nulls = NULL;
      vs_chunk_error (err, errlen, "out of memory");
      return -1;
    }
  j->tag = tag;
  j->seq = seq;
  j->chunk = *chunk;
  chunk->values = NULL;
  chunk->nulls = NULL;
  pthread_mutex_lock (&c->lock);
  if (c->tail != NULL)
    c->tail->next = j;
  else
    c->head = j;
  c->tail = j;
  if (c->todo == NULL)
    c->todo = j;
  pthread_cond_signal (&c->work);
  pthread_mutex_unlock (&c->lock);
  return 0;
}

/* Waits until every job is coded and takes the list; the coder is then
 * empty. */
static Job *
take_all (VsChunkCoder *c)
{
  pthread_mutex_lock (&c->lock);
  while (c->todo != NULL)
    pthread_cond_wait (&c->done, &c->lock);
  Job *all = c->head;
  c->head = c->tail = NULL;
  pthread_mutex_unlock (&c->lock);
  return all;
}

int
vs_chunk_coder_drain (VsChunkCoder *c, VsChunkCoderPut put, void *data, char *err, size_t errlen)
{
  Job *j = take_all (c);
  int rc = 0;

  while (j != NULL)
    {
      Job *next = j->next;
      if (rc == 0 && j->data == NULL)
        {
          vs_chunk_error (err, errlen, "%s", j->err);
          rc = -1;
        }
      else if (rc == 0
               && put (data, j->tag, j->seq, j->chunk.nrows, j->zone, j->zone_len, j->data,
                       j->data_len)
                      < 0)
        rc = -1;
      job_free (j);
      j = next;
    }
  return rc;
}

void
vs_chunk_coder_forget (VsChunkCoder *c, int tag)
{
  Job *j = take_all (c), *keep = NULL, *last = NULL;

  while (j != NULL)
    {
      Job *next = j->next;
      j->next = NULL;
      if (j->tag == tag)
        job_free (j);
      else
        {
          if (last != NULL)
            last->next = j;
          else
            keep = j;
          last = j;
        }
      j = next;
    }
  /* Every job is coded: the thread touches none of them. */
  pthread_mutex_lock (&c->lock);
  if (last != NULL)
    {
      last->next = c->head;
      if (c->head == NULL)
        c->tail = last;
      c->head = keep;
    }
  pthread_mutex_unlock (&c->lock);
}

void
vs_chunk_coder_free (VsChunkCoder *c)
{
  if (c == NULL)
    return;
  pthread_mutex_lock (&c->lock);
  c->stop = true;
  pthread_cond_signal (&c->work);
  pthread_mutex_unlock (&c->lock);
  pthread_join (c->thread, NULL);
  for (Job *j = c->head, *next; j != NULL; j = next)
    {
      next = j->next;
      job_free (j);
    }
  pthread_cond_destroy (&c->done);
  pthread_cond_destroy (&c->work);
  pthread_mutex_destroy (&c->lock);
  vs_chunk_codec_free (c->codec);
  free (c);
}

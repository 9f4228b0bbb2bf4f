/* SPDX-License-Identifier: MIT */
/* vs-collector.c — injection entry point and the collector's life in a host.
 *
 * libcuda loads this library (CUDA_INJECTION64_PATH) inside cuInit and calls
 * InitializeInjection.  From there the collector subscribes to CUPTI, opens
 * this process's trace file, enables the activity kinds and the few
 * callbacks it needs, and starts two threads of its own:
 *
 *   writer   — sole owner of the VsWriter: takes completed CUPTI buffers and
 *              queued items, turns them into rows (vs-sink.c), commits at
 *              least every 100 ms;
 *   control  — calls cuptiActivityFlushAll(0) every 250 ms so a SIGKILL
 *              loses at most about half a second, and reacts to signals.
 *
 * Everything flushes at exit (atexit), at context destruction and
 * cudaDeviceReset, and on SIGTERM/SIGINT/SIGHUP/SIGQUIT and fatal signals
 * where the program left them at their default.  A fork child never touches
 * the parent's writer.  If anything fails the collector says so in one line
 * on stderr and the program runs on untraced: InitializeInjection always
 * returns 1.
 */
#include "vs-collector-private.h"
#include "vs-identity.h"
#include "vs-unwind.h"
#include "vs-nvtx-mem.h"
#include "vs-python.h"

#include <cupti.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "vs-config.h"

#define VS_BUFFER_SIZE (8u << 20)       /* one CUPTI activity buffer */
#define VS_BUFFER_LIMIT (1024ull << 20) /* host memory for buffers at most */
#define VS_QUEUE_ITEMS 65536
#define VS_COMMIT_NS 100000000 /* commit at least every 100 ms */
#define VS_FLUSH_MS 250        /* periodic CUPTI flush */

/* A CUPTI buffer is handed out as the bytes after this header. */
typedef struct VsBuffer
{
  struct VsBuffer *next;
  size_t valid;
  uint64_t pad; /* keeps the records 8-byte aligned at 24 → 32 */
  uint64_t pad2;
} VsBuffer;

enum
{
  VS_IDLE = 0,
  VS_RUNNING = 1,
  VS_STOPPED = 2
};

static struct
{
  atomic_int state;
  pid_t pid;
  VsQueue queue;
  VsCallbackState cb;
  CUpti_SubscriberHandle subscriber;
  VsWriter *writer;
  VsSink *sink;
  VsNvtxMem *nvtx_mem; /* NVTX memory-API heaps (vs-nvtx-mem.c) */
  int64_t process_id;
  char path[4096];
  pthread_t writer_thread, control_thread;
  bool kernels;
  int unwinder; /* VsUnwinder */

  pthread_mutex_t buf_lock;
  pthread_cond_t buf_wake; /* writer: buffers or a drain request arrived */
  pthread_cond_t drained;  /* flushers: the writer finished a drain */
  VsBuffer *done_head, *done_tail, *free_list;
  uint64_t drain_wanted, drain_done;
  bool stop_writer;

  atomic_uint_fast64_t buffer_bytes, dropped_records, records, flushes;
  atomic_uint_fast64_t writer_cpu_ns, control_cpu_ns; /* the collector's own CPU time */
  atomic_bool writer_failed;
  int wake_pipe[2];          /* signal handler → control thread */
  atomic_int signal_flushed; /* set once a signal's flush committed */
  struct sigaction old_actions[NSIG];
  int64_t start_ns;
} C = { .wake_pipe = { -1, -1 } };

typedef int (*CuMemGetInfoFn) (size_t *, size_t *);
static CuMemGetInfoFn cu_mem_get_info;

/* --- small helpers ------------------------------------------------------ */

static void
say (const char *fmt, const char *a, const char *b)
{
  fprintf (stderr, "vramscope: ");
  fprintf (stderr, fmt, a, b);
  fputc ('\n', stderr);
}

static int
mem_info (size_t *free_bytes, size_t *total_bytes)
{
  return cu_mem_get_info ? cu_mem_get_info (free_bytes, total_bytes) : -1;
}

static int
current_device (void *context)
{
  uint32_t dev = 0;
  if (context == NULL || cuptiGetDeviceId ((CUcontext)context, &dev) != CUPTI_SUCCESS)
    return -1;
  return (int)dev;
}

static void CUPTIAPI
callback_adapter (void *userdata, CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
                  const void *cbdata)
{
  vs_callback_handler (userdata, (int)domain, (uint32_t)cbid, cbdata);
}

/* --- buffers ------------------------------------------------------------ */

static void CUPTIAPI
buffer_requested (uint8_t **buffer, size_t *size, size_t *max_records)
{
  VsBuffer *b = NULL;
  *max_records = 0;
  pthread_mutex_lock (&C.buf_lock);
  if (C.free_list != NULL)
    {
      b = C.free_list;
      C.free_list = b->next;
    }
  pthread_mutex_unlock (&C.buf_lock);
  if (b == NULL && atomic_load (&C.buffer_bytes) + VS_BUFFER_SIZE <= VS_BUFFER_LIMIT)
    {
      b = calloc (1, sizeof (VsBuffer) + VS_BUFFER_SIZE);
      if (b != NULL)
        atomic_fetch_add (&C.buffer_bytes, VS_BUFFER_SIZE);
    }
  /* NULL tells CUPTI to drop records: counted by CUPTI and read back. */
  *buffer = b ? (uint8_t *)(b + 1) : NULL;
  *size = b ? VS_BUFFER_SIZE : 0;
}

static void CUPTIAPI
buffer_completed (CUcontext ctx, uint32_t stream, uint8_t *buffer, size_t size, size_t valid)
{
  (void)size;
  size_t dropped = 0;
  if (cuptiActivityGetNumDroppedRecords (ctx, stream, &dropped) == CUPTI_SUCCESS)
    atomic_fetch_add (&C.dropped_records, dropped);
  if (buffer == NULL)
    return;
  VsBuffer *b = (VsBuffer *)buffer - 1;
  b->valid = valid;
  b->next = NULL;
  pthread_mutex_lock (&C.buf_lock);
  if (atomic_load (&C.state) != VS_RUNNING || C.pid != getpid ())
    {
      /* Recording ended (or this is a fork child): keep the memory for
     * nothing, give it back. */
      pthread_mutex_unlock (&C.buf_lock);
      free (b);
      return;
    }
  if (C.done_tail)
    C.done_tail->next = b;
  else
    C.done_head = b;
  C.done_tail = b;
  pthread_cond_signal (&C.buf_wake);
  pthread_mutex_unlock (&C.buf_lock);
}

/* --- the writer thread -------------------------------------------------- */

static void
block_signals (void)
{
  sigset_t all;
  sigfillset (&all);
  pthread_sigmask (SIG_BLOCK, &all, NULL);
}

/* Writes every queued item and completed buffer; returns false when the
 * writer failed (recording then stops, the program runs on). */
static bool
drain_once (VsBuffer **pending)
{
  static VsItem items[1024];
  size_t n;
  bool ok = true;
  /* Items first: an allocation's callback item precedes its record. */
  while ((n = vs_queue_pop (&C.queue, items, 1024)) > 0)
    for (size_t i = 0; i < n && ok; i++)
      ok = (vs_nvtx_mem_is_item (items[i].type) ? vs_nvtx_mem_process_item (C.nvtx_mem, &items[i])
                                                : vs_sink_process_item (C.sink, &items[i]))
           == 0;
  for (VsBuffer *b = *pending, *next; b != NULL; b = next)
    {
      next = b->next;
      if (ok)
        {
          int64_t seen = vs_sink_process_buffer (C.sink, (uint8_t *)(b + 1), b->valid);
          if (seen < 0)
            ok = false;
          else
            atomic_fetch_add (&C.records, (uint64_t)seen);
        }
      memset (b + 1, 0, b->valid);
      pthread_mutex_lock (&C.buf_lock);
      b->next = C.free_list;
      C.free_list = b;
      pthread_mutex_unlock (&C.buf_lock);
    }
  *pending = NULL;
  return ok;
}

/* CPU time of the calling thread in ns. */
static uint64_t
thread_cpu_ns (void)
{
  struct timespec t;
  clock_gettime (CLOCK_THREAD_CPUTIME_ID, &t);
  return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static void
write_stats (void)
{
  vs_writer_set_meta_int (
      C.writer, "collector_cpu_ns",
      (int64_t)(atomic_load (&C.writer_cpu_ns) + atomic_load (&C.control_cpu_ns)));
  vs_writer_set_meta_int (C.writer, "collector_failed_other",
                          (int64_t)atomic_load (&C.cb.failed_other));
  vs_writer_set_meta_int (C.writer, "collector_events", (int64_t)vs_sink_rows (C.sink));
  vs_writer_set_meta_int (C.writer, "collector_records", (int64_t)atomic_load (&C.records));
  vs_writer_set_meta_int (C.writer, "collector_dropped_records",
                          (int64_t)atomic_load (&C.dropped_records));
  vs_writer_set_meta_int (C.writer, "collector_dropped_items",
                          (int64_t)atomic_load (&C.queue.dropped));
  vs_writer_set_meta_int (C.writer, "collector_buffer_bytes",
                          (int64_t)atomic_load (&C.buffer_bytes));
  vs_writer_set_meta_int (C.writer, "collector_flushes", (int64_t)atomic_load (&C.flushes));
}

static void *
writer_main (void *arg)
{
  (void)arg;
  block_signals ();
  struct timespec t0;
  clock_gettime (CLOCK_MONOTONIC, &t0);
  int64_t last_commit = vs_now_ns ();
  bool ok = true;
  for (;;)
    {
      pthread_mutex_lock (&C.buf_lock);
      if (C.done_head == NULL && C.drain_wanted == C.drain_done && !C.stop_writer)
        {
          struct timespec until;
          clock_gettime (CLOCK_REALTIME, &until);
          until.tv_nsec += 50000000;
          if (until.tv_nsec >= 1000000000)
            {
              until.tv_sec++;
              until.tv_nsec -= 1000000000;
            }
          pthread_cond_timedwait (&C.buf_wake, &C.buf_lock, &until);
        }
      VsBuffer *pending = C.done_head;
      C.done_head = C.done_tail = NULL;
      uint64_t wanted = C.drain_wanted;
      bool stop = C.stop_writer;
      pthread_mutex_unlock (&C.buf_lock);

      if (ok)
        ok = drain_once (&pending);
      else
        drain_once (&pending); /* recycles the buffers only */
      int64_t now = vs_now_ns ();
      if (ok && (now - last_commit >= VS_COMMIT_NS || wanted != 0 || stop))
        {
          if (wanted != 0 || stop)
            write_stats ();
          ok = vs_writer_commit (C.writer) == 0;
          last_commit = now;
        }
      if (!ok && !atomic_exchange (&C.writer_failed, true))
        {
          fprintf (stderr,
                   "vramscope: writing %s failed: %s; recording stops, the "
                   "program runs on\n",
                   C.path, vs_writer_errmsg (C.writer));
          atomic_store (&C.cb.enabled, false);
        }
      pthread_mutex_lock (&C.buf_lock);
      if (wanted > C.drain_done)
        {
          C.drain_done = wanted;
          pthread_cond_broadcast (&C.drained);
        }
      bool again = C.done_head != NULL;
      pthread_mutex_unlock (&C.buf_lock);
      atomic_store (&C.writer_cpu_ns, thread_cpu_ns ());
      if (stop && !again)
        break;
    }
  return NULL;
}

/* Asks CUPTI for everything it holds and waits (≤ timeout_ms) until the
 * writer has written and committed it.  Any thread but the writer. */
static void
flush_and_wait (int timeout_ms)
{
  vs_in_collector++;
  cuptiActivityFlushAll (CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  vs_in_collector--;
  atomic_fetch_add (&C.flushes, 1);
  pthread_mutex_lock (&C.buf_lock);
  uint64_t mine = ++C.drain_wanted;
  pthread_cond_signal (&C.buf_wake);
  struct timespec until;
  clock_gettime (CLOCK_REALTIME, &until);
  until.tv_sec += timeout_ms / 1000;
  until.tv_nsec += (long)(timeout_ms % 1000) * 1000000;
  if (until.tv_nsec >= 1000000000)
    {
      until.tv_sec++;
      until.tv_nsec -= 1000000000;
    }
  while (C.drain_done < mine)
    if (pthread_cond_timedwait (&C.drained, &C.buf_lock, &until) == ETIMEDOUT)
      break;
  pthread_mutex_unlock (&C.buf_lock);
}

/* Context destruction and cudaDeviceReset: their records must be out of
 * CUPTI before the context goes.  Runs on the application thread. */
static void
flush_request (void)
{
  if (atomic_load (&C.state) == VS_RUNNING && C.pid == getpid ())
    flush_and_wait (2000);
}

/* --- signals ------------------------------------------------------------ */

static const int async_signals[] = { SIGTERM, SIGINT, SIGHUP, SIGQUIT };
static const int fatal_signals[] = { SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT };

static bool
is_fatal (int sig)
{
  for (size_t i = 0; i < sizeof fatal_signals / sizeof fatal_signals[0]; i++)
    if (fatal_signals[i] == sig)
      return true;
  return false;
}

/* The PyTorch hook's final snapshot at a termination signal: see
 * signal_snapshot(). */
static void *
signal_snapshot_main (void *arg)
{
  (void)arg;
  vs_python_call_hook ("_vramscope_hook", "_on_signal");
  return NULL;
}

/* On SIGTERM, SIGHUP or SIGQUIT, before the flush: a Python program that
 * runs the PyTorch hook (collector/python/sitecustomize.py, registered as
 * module _vramscope_hook) saves PyTorch's final snapshot, which has the
 * Python stacks the allocator stream lacks.  It runs on a thread of its
 * own, waited for at most VRAMSCOPE_SIGNAL_SNAPSHOT_S seconds (default
 * 10), so that the signal still ends the program when the interpreter
 * cannot be entered in time. */
static void
signal_snapshot (void)
{
  if (!vs_python_init ())
    return;
  const char *env = getenv ("VRAMSCOPE_SIGNAL_SNAPSHOT_S");
  long limit = env && env[0] ? strtol (env, NULL, 10) : 10;
  if (limit <= 0)
    return;
  pthread_t t;
  if (pthread_create (&t, NULL, signal_snapshot_main, NULL) != 0)
    return;
  struct timespec until;
  clock_gettime (CLOCK_REALTIME, &until);
  until.tv_sec += limit;
  if (pthread_timedjoin_np (t, NULL, &until) != 0)
    pthread_detach (t);
}

/* Only async-signal-safe calls: write, nanosleep, sigaction, raise. */
static void
signal_handler (int sig)
{
  int saved = errno;
  unsigned char b = (unsigned char)sig;
  atomic_store (&C.signal_flushed, 0);
  if (C.wake_pipe[1] >= 0 && write (C.wake_pipe[1], &b, 1) < 0)
    {
      /* nothing to do: the periodic flush still bounds what is lost */
    }
  if (is_fatal (sig))
    {
      /* The faulting thread cannot go on: wait (bounded) for the control
     * thread's flush, then die the way the program would have. */
      struct timespec ms = { 0, 1000000 };
      for (int i = 0; i < 2000 && !atomic_load (&C.signal_flushed); i++)
        nanosleep (&ms, NULL);
      sigaction (sig, &C.old_actions[sig], NULL);
      raise (sig);
    }
  errno = saved;
}

/* Installs the handler for sig only where the program left the default. */
static void
install_signal (int sig)
{
  struct sigaction old, sa;
  if (sigaction (sig, NULL, &old) != 0 || old.sa_handler != SIG_DFL || (old.sa_flags & SA_SIGINFO))
    return;
  memset (&sa, 0, sizeof sa);
  sa.sa_handler = signal_handler;
  sigemptyset (&sa.sa_mask);
  sa.sa_flags = SA_RESTART | (is_fatal (sig) ? SA_NODEFER | SA_RESETHAND : 0);
  C.old_actions[sig] = old;
  sigaction (sig, &sa, NULL);
}

static void *
control_main (void *arg)
{
  (void)arg;
  block_signals ();
  struct pollfd p = { .fd = C.wake_pipe[0], .events = POLLIN };
  while (atomic_load (&C.state) == VS_RUNNING)
    {
      int r = poll (&p, 1, VS_FLUSH_MS);
      if (atomic_load (&C.state) != VS_RUNNING)
        break;
      if (r == 0)
        {
          vs_in_collector++;
          cuptiActivityFlushAll (0);
          vs_in_collector--;
          atomic_store (&C.control_cpu_ns, thread_cpu_ns ());
          continue;
        }
      unsigned char sig = 0;
      if (r < 0 || read (C.wake_pipe[0], &sig, 1) != 1)
        continue;
      if (sig == 0) /* stop */
        break;
      if (!is_fatal (sig))
        signal_snapshot ();
      flush_and_wait (1500);
      atomic_store (&C.signal_flushed, 1);
      if (!is_fatal (sig))
        {
          /* Die of the signal as the program would have without us. */
          sigaction (sig, &C.old_actions[sig], NULL);
          kill (getpid (), sig);
        }
    }
  return NULL;
}

/* --- start and stop ----------------------------------------------------- */

/* Path of this process's trace: in the spool directory `record` gave us,
 * else VRAMSCOPE_OUTPUT, else vramscope-<host>-<pid>.db here. */
static void
choose_path (char *out, size_t len)
{
  const char *spool = getenv ("VRAMSCOPE_SPOOL_DIR");
  const char *output = getenv ("VRAMSCOPE_OUTPUT");
  char host[256] = "localhost";
  gethostname (host, sizeof host - 1);
  if (spool != NULL && spool[0] != '\0')
    snprintf (out, len, "%s/process-%ld-%lld.db", spool, (long)getpid (), (long long)vs_now_ns ());
  else if (output != NULL && output[0] != '\0')
    snprintf (out, len, "%s", output);
  else
    snprintf (out, len, "vramscope-%s-%ld.db", host, (long)getpid ());
}

/* The process's command line, arguments joined by spaces. */
static void
read_cmdline (char *out, size_t len)
{
  out[0] = '\0';
  int fd = open ("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return;
  ssize_t n = read (fd, out, len - 1);
  close (fd);
  if (n <= 0)
    return;
  out[n] = '\0';
  for (ssize_t i = 0; i < n - 1; i++)
    if (out[i] == '\0')
      out[i] = ' ';
}

static int
open_trace (char *err, size_t errlen)
{
  choose_path (C.path, sizeof C.path);
  C.writer = vs_writer_create (C.path, err, errlen);
  if (C.writer == NULL)
    return -1;
  char host[256] = "localhost", cmd[4096];
  gethostname (host, sizeof host - 1);
  read_cmdline (cmd, sizeof cmd);
  VsIdentity who;
  vs_identity_read (&who);
  VsProcess p = {
    .pid = getpid (),
    .ppid = getppid (),
    .host = host,
    .rank = who.rank,
    .local_rank = who.local_rank,
    .world_size = who.world_size,
    .cuda_visible_devices = getenv ("CUDA_VISIBLE_DEVICES"),
    .command_line = cmd,
    .start_ns = C.start_ns,
    .end_ns = VS_UNKNOWN,
    .exit_status = VS_UNKNOWN,
  };
  C.process_id = vs_writer_add_process (C.writer, &p);
  uint32_t version = 0;
  cuptiGetVersion (&version);
  if (C.process_id <= 0 || vs_writer_set_meta (C.writer, "tool_version", VS_VERSION) != 0
      || vs_writer_set_meta (C.writer, "clock", "CLOCK_REALTIME") != 0
      || vs_writer_set_meta_int (C.writer, "start_ns", C.start_ns) != 0
      || vs_writer_set_meta (C.writer, "host", host) != 0
      || (who.job_id != NULL
          && (vs_writer_set_meta (C.writer, "job_id", who.job_id) != 0
              || vs_writer_set_meta (C.writer, "job_id_source", who.job_id_source) != 0))
      || vs_writer_set_meta (C.writer, "command_line", cmd) != 0
      || vs_writer_set_meta (C.writer, "source", "collector") != 0
      || vs_writer_set_meta_int (C.writer, "cupti_version", version) != 0
      || vs_writer_set_meta_int (C.writer, "collector_kernels", C.kernels) != 0
      || vs_writer_set_meta (C.writer, "stack_unwinder",
                             C.unwinder == VS_UNWIND_LIBUNWIND ? "libunwind"
                             : C.unwinder == VS_UNWIND_GLIBC   ? "glibc"
                                                               : "none")
             != 0
      || vs_writer_commit (C.writer) != 0)
    {
      snprintf (err, errlen, "%s", vs_writer_errmsg (C.writer));
      vs_writer_finish (C.writer, NULL, 0);
      C.writer = NULL;
      return -1;
    }
  C.sink = vs_sink_new (C.writer, C.process_id);
  C.nvtx_mem = vs_nvtx_mem_new (C.writer, C.process_id);
  return C.sink ? 0 : -1;
}

static void stop_at_exit (void);

static void
fork_prepare (void)
{
  if (atomic_load (&C.state) != VS_RUNNING)
    return;
  pthread_mutex_lock (&C.queue.lock);
  pthread_mutex_lock (&C.buf_lock);
}

static void
fork_parent (void)
{
  if (atomic_load (&C.state) != VS_RUNNING)
    return;
  pthread_mutex_unlock (&C.buf_lock);
  pthread_mutex_unlock (&C.queue.lock);
}

/* The child has no writer or control thread and must never use the
 * parent's SQLite connection: recording stops here.  A child that goes on
 * to use CUDA cannot (CUDA does not survive fork); one that execs a CUDA
 * program is recorded by the collector loaded into that program. */
static void
fork_child (void)
{
  if (atomic_load (&C.state) != VS_RUNNING)
    return;
  atomic_store (&C.state, VS_STOPPED);
  atomic_store (&C.cb.enabled, false);
  vs_stack_set_enabled (false);
  vs_nvtx_set_queue (NULL);
  pthread_mutex_init (&C.buf_lock, NULL);
  vs_queue_after_fork (&C.queue);
}

static int
start (char *err, size_t errlen)
{
  uint32_t version = 0;
  if (cuptiGetVersion (&version) != CUPTI_SUCCESS || version < 130001)
    {
      snprintf (err, errlen, "CUPTI API version %u is older than 13.0 (130001)", version);
      return -1;
    }
  C.start_ns = vs_now_ns ();
  C.pid = getpid ();
  const char *k = getenv ("VRAMSCOPE_KERNELS");
  C.kernels = !(k != NULL && strcmp (k, "0") == 0);
  /* Call stacks: VRAMSCOPE_STACKS=0 turns them off. */
  const char *stacks = getenv ("VRAMSCOPE_STACKS");
  bool stacks_on = !(stacks != NULL && strcmp (stacks, "0") == 0);
  VsUnwinder unwinder = stacks_on ? vs_unwind_init () : VS_UNWIND_NONE;
  vs_stack_set_enabled (stacks_on);
  C.unwinder = unwinder;

  void *cuda = dlopen ("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
  if (cuda != NULL)
    cu_mem_get_info = (CuMemGetInfoFn)dlsym (cuda, "cuMemGetInfo_v2");

  if (vs_queue_init (&C.queue, VS_QUEUE_ITEMS) != 0)
    {
      snprintf (err, errlen, "out of memory");
      return -1;
    }
  C.cb.queue = &C.queue;
  C.cb.mem_info = mem_info;
  C.cb.current_device = current_device;
  C.cb.flush_request = flush_request;
  atomic_init (&C.cb.enabled, false);

  char holder[128] = "";
  CUpti_SubscriberParams params = {
    .structSize = CUpti_SubscriberParams_STRUCT_SIZE,
    .subscriberName = "vramscope",
    .oldSubscriberName = holder,
    .oldSubscriberSize = sizeof holder,
  };
  CUptiResult r = cuptiSubscribe_v2 (&C.subscriber, callback_adapter, &C.cb, &params);
  if (r != CUPTI_SUCCESS)
    {
      const char *why = NULL;
      cuptiGetResultString (r, &why);
      /* CUPTI names a subscriber that gave no name "… <not provided>". */
      if (r == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED && holder[0] != '\0'
          && strstr (holder, "not provided") == NULL)
        snprintf (err, errlen, "another profiler (%s) already uses CUPTI", holder);
      else if (r == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED)
        snprintf (err, errlen, "another profiler already uses CUPTI");
      else
        snprintf (err, errlen, "CUPTI could not start (%s)", why ? why : "unknown error");
      return -1;
    }
  if (open_trace (err, errlen) != 0)
    {
      cuptiUnsubscribe (C.subscriber);
      return -1;
    }

  size_t n;
  const VsCallbackId *ids = vs_callback_ids (&n);
  for (size_t i = 0; i < n; i++)
    cuptiEnableCallback (1, C.subscriber, (CUpti_CallbackDomain)ids[i].domain,
                         (CUpti_CallbackId)ids[i].cbid);

  pthread_mutex_init (&C.buf_lock, NULL);
  pthread_cond_init (&C.buf_wake, NULL);
  pthread_cond_init (&C.drained, NULL);
  uint8_t zeroed = 1;
  size_t zsize = sizeof zeroed;
  cuptiActivitySetAttribute (CUPTI_ACTIVITY_ATTR_ZEROED_OUT_ACTIVITY_BUFFER, &zsize, &zeroed);
  r = cuptiActivityRegisterCallbacks (buffer_requested, buffer_completed);
  static const CUpti_ActivityKind always[]
      = { CUPTI_ACTIVITY_KIND_DEVICE, CUPTI_ACTIVITY_KIND_MEMORY2,
          CUPTI_ACTIVITY_KIND_MEMORY_POOL };
  static const CUpti_ActivityKind kernels[]
      = { CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_MEMCPY,
          CUPTI_ACTIVITY_KIND_MEMSET };
  for (size_t i = 0; r == CUPTI_SUCCESS && i < 3; i++)
    r = cuptiActivityEnable (always[i]);
  for (size_t i = 0; r == CUPTI_SUCCESS && C.kernels && i < 3; i++)
    r = cuptiActivityEnable (kernels[i]);
  if (r != CUPTI_SUCCESS)
    {
      const char *why = NULL;
      cuptiGetResultString (r, &why);
      snprintf (err, errlen, "CUPTI activity recording could not start (%s)",
                why ? why : "unknown error");
      cuptiUnsubscribe (C.subscriber);
      vs_sink_free (C.sink);
      vs_writer_finish (C.writer, NULL, 0);
      unlink (C.path);
      C.writer = NULL;
      return -1;
    }
  size_t dsize = 0, dlen = sizeof dsize;
  if (cuptiActivityGetAttribute (CUPTI_ACTIVITY_ATTR_DEVICE_BUFFER_SIZE, &dlen, &dsize)
      == CUPTI_SUCCESS)
    vs_writer_set_meta_int (C.writer, "collector_device_buffer_bytes", (int64_t)dsize);

  if (pipe2 (C.wake_pipe, O_CLOEXEC | O_NONBLOCK) != 0)
    C.wake_pipe[0] = C.wake_pipe[1] = -1;
  atomic_store (&C.state, VS_RUNNING);
  if (pthread_create (&C.writer_thread, NULL, writer_main, NULL) != 0)
    {
      snprintf (err, errlen, "could not start the writer thread");
      atomic_store (&C.state, VS_STOPPED);
      cuptiUnsubscribe (C.subscriber);
      return -1;
    }
  if (C.wake_pipe[0] >= 0)
    pthread_create (&C.control_thread, NULL, control_main, NULL);
  atexit (stop_at_exit);
  pthread_atfork (fork_prepare, fork_parent, fork_child);
  for (size_t i = 0; i < sizeof async_signals / sizeof async_signals[0]; i++)
    install_signal (async_signals[i]);
  for (size_t i = 0; i < sizeof fatal_signals / sizeof fatal_signals[0]; i++)
    install_signal (fatal_signals[i]);
  vs_nvtx_set_queue (&C.queue);
  atomic_store (&C.cb.enabled, true);
  return 0;
}

/* Flushes CUPTI, writes and commits everything, records the collector's own
 * cost and closes the trace.  Runs once, in the process that started. */
static void
stop_at_exit (void)
{
  if (C.pid != getpid () || atomic_load (&C.state) != VS_RUNNING)
    return;
  atomic_store (&C.cb.enabled, false);
  vs_nvtx_set_queue (NULL);
  flush_and_wait (10000);
  atomic_store (&C.state, VS_STOPPED);
  if (C.wake_pipe[1] >= 0)
    {
      unsigned char zero = 0;
      if (write (C.wake_pipe[1], &zero, 1) == 1)
        pthread_join (C.control_thread, NULL);
    }
  pthread_mutex_lock (&C.buf_lock);
  C.stop_writer = true;
  pthread_cond_signal (&C.buf_wake);
  pthread_mutex_unlock (&C.buf_lock);
  pthread_join (C.writer_thread, NULL);

  write_stats ();
  vs_writer_set_meta_int (C.writer, "end_ns", vs_now_ns ());
  char err[512] = "";
  vs_sink_free (C.sink);
  C.sink = NULL;
  if (C.nvtx_mem != NULL && vs_nvtx_mem_skipped (C.nvtx_mem) > 0)
    vs_writer_set_meta_int (C.writer, "collector_nvtx_skipped",
                            (int64_t)vs_nvtx_mem_skipped (C.nvtx_mem));
  vs_nvtx_mem_free (C.nvtx_mem);
  C.nvtx_mem = NULL;
  if (vs_writer_finish (C.writer, err, sizeof err) != 0)
    fprintf (stderr, "vramscope: closing %s failed: %s\n", C.path, err);
  C.writer = NULL;
}

__attribute__ ((visibility ("default"))) int InitializeInjection (void);

/* Called by libcuda inside cuInit when CUDA_INJECTION64_PATH names this
 * library.  Always returns 1: a collector that cannot start must not stop
 * the program. */
__attribute__ ((visibility ("default"))) int
InitializeInjection (void)
{
  static atomic_int started_pid;
  int expected = 0;
  if (!atomic_compare_exchange_strong (&started_pid, &expected, (int)getpid ())
      && expected == (int)getpid ())
    return 1;
  atomic_store (&started_pid, (int)getpid ());
  const char *off = getenv ("VRAMSCOPE_DISABLE");
  if (off != NULL && strcmp (off, "1") == 0)
    return 1;
  char err[512] = "";
  if (start (err, sizeof err) != 0)
    say ("%s; the program runs untraced%s", err, "");
  return 1;
}

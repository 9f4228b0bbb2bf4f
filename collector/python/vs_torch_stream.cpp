// vs_torch_stream.cpp — PyTorch's caching-allocator events streamed to a
// file as they happen, so that they survive any way the process ends.
//
// Built on the machine that records, by the PyTorch hook
// (sitecustomize.py), against the installed torch's own C++ headers and
// libc10_cuda, and loaded with ctypes.  vs_torch_stream_start() attaches a
// trace tracker to the caching allocator
// (c10::cuda::CUDACachingAllocator::attachAllocatorTraceTracker): the
// allocator calls it for every trace entry (alloc, free requested, free
// completed, segment alloc/free/map/unmap, oom), on the allocating thread,
// with the device's allocator lock held, whether or not the history is
// being recorded.
//
// Each entry becomes one fixed 48-byte record appended to a file mapped
// MAP_SHARED: a store into the page cache, no system call, so nothing
// written is lost when the process is killed (SIGKILL included) and the
// cost per entry is a clock read and a few stores under a mutex.  The
// record's `action` word is stored last (release order); a reader stops at
// the first record whose action is 0, so a record torn by the process's
// death is never read.  The file grows by ftruncate in chunks of 65536
// records, each mapped in turn, up to the limit vs_torch_stream_start() is
// given; there the stream stops, and the header says after how many
// records (so a reader knows the allocator level ends early).
//
// Layout (little-endian, as the machine writes it):
//   page 0: header — magic "VSTORCH1", u32 version (1), u32 record size
//           (48), i64 pid, i64 start time (CLOCK_REALTIME ns), u64 the
//           record count where the stream stopped at its limit (0: never),
//           u64 written by the reader only (`record --window`): the records
//           from the first it imported and whose space it gave back (a
//           hole punched in the file; this tracker never writes there)
//   then:   records — i64 ts_ns, u64 addr, u64 size, u64 stream,
//           i32 device, i32 tid, u32 reserved, u32 action
// action: 1 alloc, 2 free requested, 3 free completed, 4 segment alloc,
// 5 segment free, 6 segment map, 7 segment unmap (as the trace schema's
// alloc_event.op), 8 oom (addr = the device's free bytes, size = the
// request), 9 snapshot (the allocator took a snapshot for
// torch.cuda.memory._snapshot(): the events after a process's last one are
// those its final snapshot does not hold).  Sizes are what PyTorch's
// trace records: requested bytes for blocks, segment sizes for segments.
//
// `reserved` is the record's stack id: 0 when none, else an id of the
// side file torch-PID.stacks (vs_torch_stacks.hpp), written when the library
// is built with Python's headers (VS_PYTHON_STACKS) and
// vs_torch_stream_stacks() turned it on: the calling thread's Python stack,
// for every action, as PyTorch's own history takes it (its context is
// gathered on the same thread just before the entry; a free completed
// later than requested, once the block's other streams are done, is
// completed by an allocator call and gets that call's context).
//
// The reader is record/vs-torch-stream.c.
#if VS_PYTHON_STACKS
#include "vs_torch_stacks.hpp"
#endif
#include <c10/cuda/CUDACachingAllocator.h>

#include <atomic>
#include <cstdint>
#include <cstring>
#include <ctime>
#include <mutex>
#include <type_traits>

#include <fcntl.h>
#include <pthread.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace {

constexpr size_t kHeader = 4096;
constexpr size_t kRecords = 65536; // per chunk
struct Record {
  int64_t ts_ns;
  uint64_t addr, size, stream;
  int32_t device, tid;
  uint32_t reserved;
  uint32_t action;
};
static_assert(sizeof(Record) == 48, "the stream's record is 48 bytes");
constexpr size_t kChunk = kRecords * sizeof(Record);

std::mutex lock;
int fd = -1;
Record* chunk = nullptr; // the mapped chunk being filled
size_t chunk_index = 0, used = 0;
std::atomic<bool> enabled{false};
std::atomic<uint64_t> lost{0};
size_t max_chunks = 0; // the limit, in chunks

#if VS_PYTHON_STACKS && VS_STACKS_WALKER
std::atomic<bool> stacks_on{false};

// The calling thread's Python stack as walked (vs_stacks::walk): its own
// frames, read before `lock` is taken; interned under it.
thread_local vs_stacks::Key stack_keys[vs_stacks::kMaxDepth];
#endif

int64_t now_ns() {
  timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return int64_t(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

int32_t thread_id() {
  static thread_local int32_t tid = int32_t(syscall(SYS_gettid));
  return tid;
}

// Maps chunk number k (growing the file).  False when it cannot.
bool map_chunk(size_t k) {
  off_t off = off_t(kHeader + k * kChunk);
  if (ftruncate(fd, off + off_t(kChunk)) != 0)
    return false;
  void* p = mmap(nullptr, kChunk, PROT_READ | PROT_WRITE, MAP_SHARED, fd, off);
  if (p == MAP_FAILED)
    return false;
  if (chunk != nullptr)
    munmap(chunk, kChunk);
  chunk = static_cast<Record*>(p);
  chunk_index = k;
  used = 0;
  return true;
}

template <typename S>
uint64_t stream_value(const S& s) {
  if constexpr (std::is_pointer_v<S>)
    return uint64_t(reinterpret_cast<uintptr_t>(s));
  else if constexpr (std::is_integral_v<S>)
    return uint64_t(s);
  else
    return uint64_t(s.id());
}

template <typename TE>
uint32_t action_code(const TE& te) {
  switch (te.action_) {
    case TE::Action::ALLOC:
      return 1;
    case TE::Action::FREE_REQUESTED:
      return 2;
    case TE::Action::FREE_COMPLETED:
      return 3;
    case TE::Action::SEGMENT_ALLOC:
      return 4;
    case TE::Action::SEGMENT_FREE:
      return 5;
    case TE::Action::SEGMENT_MAP:
      return 6;
    case TE::Action::SEGMENT_UNMAP:
      return 7;
    case TE::Action::OOM:
      return 8;
    case TE::Action::SNAPSHOT:
      return 9;
    default:
      return 0; // user annotations
  }
}

template <typename TE>
void on_entry(const TE& te) {
  if (!enabled.load(std::memory_order_relaxed))
    return;
  uint32_t action = action_code(te);
  if (action == 0)
    return;
  int64_t ts = now_ns();
#if VS_PYTHON_STACKS && VS_STACKS_WALKER
  size_t depth = stacks_on.load(std::memory_order_relaxed) ? vs_stacks::walk(stack_keys) : 0;
#endif
  std::lock_guard<std::mutex> guard(lock);
  if (used == kRecords &&
      (chunk_index + 1 >= max_chunks || !map_chunk(chunk_index + 1))) {
    // Stopped: the header says where, once.
    if (enabled.exchange(false)) {
      uint64_t at = uint64_t(chunk_index + 1) * kRecords;
      if (pwrite(fd, &at, sizeof at, 32) != ssize_t(sizeof at))
        lost.fetch_add(1);
    }
    lost.fetch_add(1);
    return;
  }
  Record* r = &chunk[used++];
  r->ts_ns = ts;
  r->addr = uint64_t(te.addr_);
  r->size = uint64_t(te.size_);
  r->stream = stream_value(te.stream_);
  r->device = int32_t(te.device_);
  r->tid = thread_id();
#if VS_PYTHON_STACKS && VS_STACKS_WALKER
  r->reserved = depth > 0 ? vs_stacks::intern(vs_stacks::state(), stack_keys, depth) : 0;
#else
  r->reserved = 0;
#endif
  __atomic_store_n(&r->action, action, __ATOMIC_RELEASE);
}

// A fork child must not write into its parent's file.
void after_fork_child() {
  enabled.store(false);
#if VS_PYTHON_STACKS && VS_STACKS_WALKER
  stacks_on.store(false);
#endif
}

} // namespace

// Opens path, writes the header and attaches the tracker; the file grows
// to max_bytes at most.  Returns 0, or -1 with errno set (the file is then
// removed).
extern "C" __attribute__((visibility("default"))) int vs_torch_stream_start(
    const char* path,
    uint64_t max_bytes) {
  // The allocator calls the tracker with its lock held and the tracker
  // takes ours: ours is never held while calling into the allocator.
  std::unique_lock<std::mutex> guard(lock);
  if (fd >= 0)
    return 0;
  max_chunks = max_bytes / kChunk > 1 ? size_t(max_bytes / kChunk) : 1;
  fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0)
    return -1;
  unsigned char header[kHeader] = {};
  uint32_t version = 1, size = sizeof(Record);
  int64_t pid = getpid(), start = now_ns();
  std::memcpy(header, "VSTORCH1", 8);
  std::memcpy(header + 8, &version, 4);
  std::memcpy(header + 12, &size, 4);
  std::memcpy(header + 16, &pid, 8);
  std::memcpy(header + 24, &start, 8);
  if (pwrite(fd, header, sizeof header, 0) != ssize_t(sizeof header) ||
      !map_chunk(0)) {
    int e = errno;
    close(fd);
    fd = -1;
    unlink(path);
    errno = e;
    return -1;
  }
  pthread_atfork(nullptr, nullptr, after_fork_child);
  enabled.store(true);
  guard.unlock();
  try {
    c10::cuda::CUDACachingAllocator::attachAllocatorTraceTracker(
        [](const auto& te) { on_entry(te); });
  } catch (...) {
    enabled.store(false);
    errno = ENOTSUP;
    return -1;
  }
  return 0;
}

// Turns the Python stacks on (on != 0), writing them to path (opened the
// first time), or off.  Called from Python with the GIL held (ctypes.PyDLL),
// after vs_torch_stream_start(): the first time, checks the frame walker
// against the public frame API on the calling thread.  Returns 1 when
// stacks are gathered now, 0 when turned off, -1 when this library cannot
// gather them (built without Python's headers, a Python it does not know,
// a walker that disagrees: errno ENOTSUP; the file not writable: errno).
extern "C" __attribute__((visibility("default"))) int vs_torch_stream_stacks(
    const char* path,
    int on) {
#if VS_PYTHON_STACKS && VS_STACKS_WALKER
  std::lock_guard<std::mutex> guard(lock);
  vs_stacks::State& s = vs_stacks::state();
  if (!on) {
    stacks_on.store(false);
    return 0;
  }
  if (s.fd < 0) {
    if (vs_stacks::selftest() != 1) {
      errno = ENOTSUP;
      return -1;
    }
    if (path == nullptr || !vs_stacks::open_file(s, path))
      return -1;
    s.ok = true;
  }
  if (!s.ok) {
    errno = ENOSPC;
    return -1;
  }
  stacks_on.store(true);
  return 1;
#else
  (void)path;
  (void)on;
  errno = ENOTSUP;
  return -1;
#endif
}

// Entries that could not be written (the file could not grow).
extern "C" __attribute__((visibility("default"))) uint64_t vs_torch_stream_lost(
    void) {
  return lost.load();
}

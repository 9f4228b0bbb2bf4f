// vs-test-torch-stacks.cpp — the allocator stream's Python stack gatherer
// (collector/python/vs_torch_stacks.hpp) without PyTorch, for tests: a
// library a Python program loads with ctypes to gather its own stacks
// into a stacks file, as the stream's tracker does on each allocator
// event (with the GIL, through ctypes.PyDLL, or without it, through
// ctypes.CDLL, as under PyTorch's operators).
#include "vs_torch_stacks.hpp"

#include <mutex>

namespace {
std::mutex lock;
}

// Checks the frame walker (with the GIL) and opens the stacks file at
// path.  0, or -1 (errno set; ENOTSUP: the walker does not know this
// Python or disagrees with the frame API).
extern "C" __attribute__((visibility("default"))) int vs_test_stacks_open(const char* path) {
#if VS_STACKS_WALKER
  std::lock_guard<std::mutex> guard(lock);
  vs_stacks::State& s = vs_stacks::state();
  if (vs_stacks::selftest() != 1) {
    errno = ENOTSUP;
    return -1;
  }
  if (!vs_stacks::open_file(s, path))
    return -1;
  s.ok = true;
  return 0;
#else
  (void)path;
  errno = ENOTSUP;
  return -1;
#endif
}

// The stack id of the calling thread's Python stack (0: none), interned
// and written as the tracker does.
extern "C" __attribute__((visibility("default"))) uint32_t vs_test_stacks_capture(void) {
#if VS_STACKS_WALKER
  static thread_local vs_stacks::Key keys[vs_stacks::kMaxDepth];
  std::lock_guard<std::mutex> guard(lock);
  return vs_stacks::intern(vs_stacks::state(), keys, vs_stacks::walk(keys));
#else
  return 0;
#endif
}

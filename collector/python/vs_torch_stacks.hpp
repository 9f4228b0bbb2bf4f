// vs_torch_stacks.hpp — the Python stack of the allocating thread, gathered
// by the allocator stream's trace tracker (vs_torch_stream.cpp) without the
// GIL, interned once per call site and appended to a side file.
//
// Included by vs_torch_stream.cpp when it is built against Python's headers
// (VS_PYTHON_STACKS); needs CPython 3.11, 3.12 or 3.13.
//
// What is read, and why it is safe without the GIL.  The allocator calls
// the tracker on the thread that allocates or frees, with its own lock
// held; PyTorch's Python bindings release the GIL around every operator,
// so that thread usually does not hold it, and taking it there could
// deadlock (a thread holding the GIL may wait for the allocator's lock).
// So nothing here takes the GIL, calls into the interpreter's allocating
// API or touches a reference count.  The thread's own thread state comes
// from PyGILState_GetThisThreadState() (a thread-specific key, documented
// as callable at any time); threads that never ran Python (autograd's
// device threads) have none and get no stack, as PyTorch's own gatherer
// gives them an empty one.  The frames read are the calling thread's own:
// only the thread that owns a frame chain pushes and pops its frames, and
// this thread is inside a C call (the operator), so its chain and each
// frame's code object (a strong reference of the frame), previous link
// and instruction pointer do not change while the tracker runs.  Another
// thread holding the GIL may at most give a frame a frame object
// (sys._current_frames), a field not read here.  Code objects, their
// names and line tables are immutable; a name is read from the string's
// own storage (PyUnicode_KIND/DATA), the line with PyCode_Addr2Line, which
// only decodes the line table.  The interpreter-frame layout is internal
// to CPython: it is spelled here per version, and vs_stacks_selftest(),
// run once with the GIL from Python, checks it against the public frame
// API (PyEval_GetFrame, PyFrame_GetBack/GetCode/GetLasti: what PyTorch's
// gatherer in torch/csrc/profiler/python/combined_traceback.cpp walks)
// before any stack is gathered.
//
// Cost: a walk of the frame chain into a thread-local array (pairs of
// code object and instruction offset, with the code's file and name
// strings as a guard against a code object freed and another made at the
// same address), a hash and one probe of an open-addressing table; no
// allocation, no line numbers.  A stack not seen before is resolved once
// (file, function, line per frame) and appended to the side file.
//
// Side file (torch-PID.stacks; reader: record/vs-torch-stacks.c), little-
// endian: a 16-byte header, "VSSTACK1", u32 version (1), u32 0; then
// entries, each u32 kind, u32 length of the payload, the payload, and
// u32 FNV-1a (32 bits) of kind, length and payload:
//   kind 1, a frame: u32 id, i32 line, u32 file length, u32 name length,
//           the file's UTF-8 bytes, the function's
//   kind 2, a stack: u32 id, u32 frame count, u32 frame ids, innermost
//           first (each defined by an earlier entry)
// Frame and stack ids count from 1 in the order of their entries.  A new
// stack's new frames and the stack itself go out in one write(), so the
// file survives the process's death (SIGKILL included) up to its last
// complete entry; a torn last entry is the reader's to skip.
#pragma once

#include <Python.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <unordered_map>
#include <vector>

#include <fcntl.h>
#include <unistd.h>

#if PY_VERSION_HEX >= 0x030B0000 && PY_VERSION_HEX < 0x030E0000
#define VS_STACKS_WALKER 1
#else
#define VS_STACKS_WALKER 0
#endif

namespace vs_stacks {

#if VS_STACKS_WALKER
// A bytecode unit: two bytes in every version (3.13 keeps _Py_CODEUNIT
// and _PyCode_CODE internal).
using CodeUnit = uint16_t;

// _PyCode_CODE: the code object's first instruction.
inline const CodeUnit* code_start(PyCodeObject* code) {
  return reinterpret_cast<const CodeUnit*>(code->co_code_adaptive);
}

// CPython's _PyInterpreterFrame, the fields up to `owner`
// (Include/internal/pycore_frame.h of each version).
#if PY_VERSION_HEX >= 0x030D0000
struct IFrame {
  PyObject* f_executable; // the code object (or None)
  IFrame* previous;
  PyObject *f_funcobj, *f_globals, *f_builtins, *f_locals, *frame_obj;
  const CodeUnit* instr_ptr; // the instruction executing
  int stacktop;
  uint16_t return_offset;
  char owner;
};
#elif PY_VERSION_HEX >= 0x030C0000
struct IFrame {
  PyCodeObject* f_code;
  IFrame* previous;
  PyObject *f_funcobj, *f_globals, *f_builtins, *f_locals, *frame_obj;
  const CodeUnit* prev_instr;
  int stacktop;
  uint16_t return_offset;
  char owner;
};
#else
struct IFrame {
  PyObject *f_func, *f_globals, *f_builtins, *f_locals;
  PyCodeObject* f_code;
  PyObject* frame_obj;
  IFrame* previous;
  const CodeUnit* prev_instr;
  int stacktop;
  bool is_entry;
  char owner;
};
#endif
constexpr char kOwnedByGenerator = 1;
constexpr char kOwnedByCStack = 3; // 3.12 and 3.13

inline IFrame* current_frame(PyThreadState* ts) {
#if PY_VERSION_HEX >= 0x030D0000
  return reinterpret_cast<IFrame*>(ts->current_frame);
#else
  return ts->cframe ? reinterpret_cast<IFrame*>(ts->cframe->current_frame) : nullptr;
#endif
}

inline PyCodeObject* frame_code(const IFrame* f) {
#if PY_VERSION_HEX >= 0x030D0000
  PyObject* x = f->f_executable;
  return x != nullptr && Py_IS_TYPE(x, &PyCode_Type) ? reinterpret_cast<PyCodeObject*>(x)
                                                     : nullptr;
#else
  return f->f_code;
#endif
}

inline const CodeUnit* frame_instr(const IFrame* f) {
#if PY_VERSION_HEX >= 0x030D0000
  return f->instr_ptr;
#else
  return f->prev_instr;
#endif
}

// _PyFrame_IsIncomplete: a frame not yet running its own code (or the C
// stack's shim): PyEval_GetFrame and PyFrame_GetBack skip them.
inline bool incomplete(const IFrame* f, PyCodeObject* code) {
#if PY_VERSION_HEX >= 0x030C0000
  if (f->owner == kOwnedByCStack)
    return true;
#endif
  return f->owner != kOwnedByGenerator &&
      frame_instr(f) < code_start(code) + code->_co_firsttraceable;
}

// PyFrame_GetLasti: the byte offset of the instruction, -1 before the first.
inline int32_t frame_lasti(const IFrame* f, PyCodeObject* code) {
  std::ptrdiff_t i = frame_instr(f) - code_start(code);
  return i < 0 ? -1 : int32_t(i * std::ptrdiff_t(sizeof(CodeUnit)));
}
#endif

// One frame as walked: what identifies it without reading any text.
struct Key {
  const void* code;
  const void* file; // the code's co_filename and co_name objects
  const void* name;
  int32_t lasti;
  int32_t pad;
};
static_assert(sizeof(Key) == 32, "keys are compared as bytes");

constexpr size_t kMaxDepth = 1024; // deeper stacks keep their innermost

struct Slot {
  uint64_t hash;
  uint32_t id; // 0: empty
  uint32_t n;
  size_t off; // into keys
};

// The interning state: touched only with the stream's lock held.
struct State {
  int fd = -1;
  bool ok = false; // the walker checked and the file writable
  std::vector<Slot> slots; // power of two
  std::vector<Key> keys;
  uint32_t stacks = 0, frames = 0;
  std::unordered_map<std::string, uint32_t> frame_ids;
  std::string buf;
};

inline State& state() {
  static State s;
  return s;
}

inline uint32_t fnv32(const void* p, size_t n, uint32_t h = 2166136261u) {
  const unsigned char* b = static_cast<const unsigned char*>(p);
  for (size_t i = 0; i < n; i++)
    h = (h ^ b[i]) * 16777619u;
  return h;
}

inline void put32(std::string& s, uint32_t v) {
  s.append(reinterpret_cast<const char*>(&v), 4);
}

// Appends one entry (kind, payload) to s with its check word.
inline void entry(std::string& s, uint32_t kind, const std::string& payload) {
  uint32_t len = uint32_t(payload.size());
  uint32_t h = fnv32(&kind, 4);
  h = fnv32(&len, 4, h);
  h = fnv32(payload.data(), payload.size(), h);
  put32(s, kind);
  put32(s, len);
  s += payload;
  put32(s, h);
}

// A str object's text as UTF-8, read from its own storage.
inline void utf8(PyObject* o, std::string& out) {
  out.clear();
  if (o == nullptr || !PyUnicode_Check(o))
    return;
  Py_ssize_t n = PyUnicode_GET_LENGTH(o);
  int kind = PyUnicode_KIND(o);
  const void* data = PyUnicode_DATA(o);
  for (Py_ssize_t i = 0; i < n; i++) {
    Py_UCS4 c = PyUnicode_READ(kind, data, i);
    if (c < 0x80) {
      out += char(c);
    } else if (c < 0x800) {
      out += char(0xC0 | (c >> 6));
      out += char(0x80 | (c & 0x3F));
    } else if (c < 0x10000) {
      if (c >= 0xD800 && c <= 0xDFFF)
        c = 0xFFFD; // a lone surrogate: not UTF-8
      out += char(0xE0 | (c >> 12));
      out += char(0x80 | ((c >> 6) & 0x3F));
      out += char(0x80 | (c & 0x3F));
    } else {
      out += char(0xF0 | (c >> 18));
      out += char(0x80 | ((c >> 12) & 0x3F));
      out += char(0x80 | ((c >> 6) & 0x3F));
      out += char(0x80 | (c & 0x3F));
    }
  }
}

#if VS_STACKS_WALKER
// Walks the calling thread's frames, innermost first, into keys[]; the
// count (at most kMaxDepth).  0 for a thread without Python frames.
inline size_t walk(Key* keys) {
  PyThreadState* ts = PyGILState_GetThisThreadState();
  if (ts == nullptr)
    return 0;
  size_t n = 0;
  for (IFrame* f = current_frame(ts); f != nullptr && n < kMaxDepth; f = f->previous) {
    PyCodeObject* code = frame_code(f);
    if (code == nullptr || incomplete(f, code))
      continue;
    Key& k = keys[n++];
    k.code = code;
    k.file = code->co_filename;
    k.name = code->co_name;
    k.lasti = frame_lasti(f, code);
    k.pad = 0;
  }
  return n;
}
#endif

inline uint64_t hash_keys(const Key* k, size_t n) {
  uint64_t h = 14695981039346656037ull ^ n;
  for (size_t i = 0; i < n; i++) {
    uint64_t a = reinterpret_cast<uintptr_t>(k[i].code) ^
        (uint64_t(uint32_t(k[i].lasti)) << 48) ^
        (reinterpret_cast<uintptr_t>(k[i].file) >> 3) ^
        (reinterpret_cast<uintptr_t>(k[i].name) << 7);
    h = (h ^ a) * 1099511628211ull;
    h ^= h >> 29;
  }
  return h;
}

// The id of frame (file, name, line), with its entry added to buf if new.
inline uint32_t frame_id(State& s, const std::string& file, const std::string& name, int32_t line,
                         std::string& buf) {
  std::string key;
  key.reserve(file.size() + name.size() + 16);
  key += file;
  key += '\0';
  key += name;
  key += '\0';
  key.append(reinterpret_cast<const char*>(&line), 4);
  auto it = s.frame_ids.find(key);
  if (it != s.frame_ids.end())
    return it->second;
  uint32_t id = ++s.frames;
  std::string p;
  put32(p, id);
  put32(p, uint32_t(line));
  put32(p, uint32_t(file.size()));
  put32(p, uint32_t(name.size()));
  p += file;
  p += name;
  entry(buf, 1, p);
  s.frame_ids.emplace(std::move(key), id);
  return id;
}

inline void grow(State& s) {
  std::vector<Slot> old;
  old.swap(s.slots);
  s.slots.assign(old.empty() ? 4096 : old.size() * 2, Slot{0, 0, 0, 0});
  size_t mask = s.slots.size() - 1;
  for (const Slot& o : old) {
    if (o.id == 0)
      continue;
    size_t i = o.hash & mask;
    while (s.slots[i].id != 0)
      i = (i + 1) & mask;
    s.slots[i] = o;
  }
}

// The stack id of keys[0..n) (innermost first): found, or resolved,
// written and added.  0 when n is 0 or the stack cannot be written.
inline uint32_t intern(State& s, const Key* keys, size_t n) {
  if (n == 0 || !s.ok)
    return 0;
  uint64_t h = hash_keys(keys, n);
  size_t mask = s.slots.size() - 1;
  size_t i = h & mask;
  for (; s.slots[i].id != 0; i = (i + 1) & mask) {
    const Slot& e = s.slots[i];
    if (e.hash == h && e.n == n && std::memcmp(&s.keys[e.off], keys, n * sizeof(Key)) == 0)
      return e.id;
  }
  // New: resolve each frame (file, function, line) and write it out.
  std::string& buf = s.buf;
  buf.clear();
  std::string file, name, p;
  std::vector<uint32_t> ids(n);
  uint32_t frames_before = s.frames;
  for (size_t k = 0; k < n; k++) {
    PyCodeObject* code = static_cast<PyCodeObject*>(const_cast<void*>(keys[k].code));
    utf8(code->co_filename, file);
    utf8(code->co_name, name);
    int32_t line = PyCode_Addr2Line(code, keys[k].lasti);
    ids[k] = frame_id(s, file, name, line, buf);
  }
  uint32_t id = s.stacks + 1;
  put32(p, id);
  put32(p, uint32_t(n));
  p.append(reinterpret_cast<const char*>(ids.data()), n * 4);
  entry(buf, 2, p);
  if (write(s.fd, buf.data(), buf.size()) != ssize_t(buf.size())) {
    // The file cannot take it: no more stacks (ids already written stay).
    s.ok = false;
    s.frames = frames_before;
    return 0;
  }
  s.stacks = id;
  if ((size_t(s.stacks) + 1) * 2 > s.slots.size()) {
    grow(s);
    mask = s.slots.size() - 1;
    i = h & mask;
    while (s.slots[i].id != 0)
      i = (i + 1) & mask;
  }
  s.slots[i] = Slot{h, id, uint32_t(n), s.keys.size()};
  s.keys.insert(s.keys.end(), keys, keys + n);
  return id;
}

// Opens the side file at path and writes its header.  False (errno set)
// when it cannot.
inline bool open_file(State& s, const char* path) {
  s.fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0644);
  if (s.fd < 0)
    return false;
  unsigned char header[16] = {};
  uint32_t version = 1;
  std::memcpy(header, "VSSTACK1", 8);
  std::memcpy(header + 8, &version, 4);
  if (write(s.fd, header, sizeof header) != ssize_t(sizeof header)) {
    int e = errno;
    close(s.fd);
    s.fd = -1;
    unlink(path);
    errno = e;
    return false;
  }
  grow(s);
  return true;
}

#if VS_STACKS_WALKER
// Compares walk() with the public frame API on the calling thread, which
// holds the GIL.  1 when they agree frame by frame, 0 otherwise.
inline int selftest() {
  static thread_local Key keys[kMaxDepth];
  size_t n = walk(keys);
  PyFrameObject* f = PyEval_GetFrame();
  Py_XINCREF(f);
  size_t i = 0;
  bool same = true;
  while (f != nullptr) {
    PyCodeObject* code = PyFrame_GetCode(f);
    if (i >= n || keys[i].code != code || keys[i].lasti != PyFrame_GetLasti(f))
      same = false;
    Py_DECREF(code);
    i++;
    PyFrameObject* back = PyFrame_GetBack(f);
    Py_DECREF(f);
    f = back;
  }
  return same && i == n && n > 0 ? 1 : 0;
}
#endif

} // namespace vs_stacks

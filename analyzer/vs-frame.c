/* SPDX-License-Identifier: MIT */
/* vs-frame.c — classifying frames as the user's own code or a library's,
 * and shortening their paths for display (see vs-frame.h).
 */
#include "vs-frame.h"
#include "vs-stack.h"
#include "vs-trace-format.h"

#include <string.h>

static const char *const system_fragments[] = {
  "/lib/python3",  "/usr/lib/python", "site-packages", "dist-packages", "/usr/local/cuda",
  "/usr/include/", "/torch/csrc/",    "/c10/",         "/aten/src/",
};

static const char *const system_prefixes[] = {
  "/lib/",     "/lib64/", "/usr/lib/",       "/usr/lib64/",
  "/usr/bin/", "/bin/",   "/usr/local/lib/", "<frozen ",
};

static const char *const system_libraries[] = {
  "libcuda",   "libcudart", "libcupti",  "libtorch", "libc10",
  "libpython", "libnccl",   "libcublas", "libcudnn",
};

/* Native functions of the profiler, the allocator, PyTorch's dispatcher
 * and the interpreter: never the user's code, wherever they were built. */
static const char *const library_function_prefixes[] = {
  "c10::",       "at::", "torch::", "caffe2::", "pybind11::", "std::",
  "__gnu_cxx::", "_Py",  "__libc_", "_start",   "THP",
};

static const char *const library_function_fragments[] = {
  "torch::unwind",
  "CapturedTraceback",
  "CUDACachingAllocator",
};

static const char *const native_source_suffixes[] = {
  ".cpp", ".cc", ".cxx", ".c", ".h", ".hpp", ".cu", ".cuh", ".o", ".S", ".s",
};

/* CPython's source folders: a native frame in one is the interpreter's own
 * (`Objects/methodobject.c:537 cfunction_call`, `Python/ceval.c`), whether
 * the path is relative or the folder of a source tree (`python-3.10/`). */
static const char *const interpreter_folders[] = {
  "Objects/", "Python/", "Modules/", "Parser/", "Include/", "Programs/",
};

/* The C and C++ runtime's own sources and objects: glibc's folders,
 * libstdc++'s thread launcher (`thread48.o`). */
static const char *const runtime_folders[] = {
  "sysdeps/",
  "nptl/",
  "csu/",
  "libio/",
};

/* Modules of the interpreter and the C and C++ runtime, by the start of
 * their file name. */
static const char *const runtime_modules[] = {
  "python",     "libpython", "libc.so", "libc-",    "libstdc++", "libgcc_s",
  "libpthread", "ld-linux",  "libm.so", "libdl.so", "ld.so",
};

/* Functions of the C and C++ runtime that carry no namespace: thread and
 * process start-up. */
static const char *const runtime_function_names[] = {
  "start_thread",
  "clone",
  "clone3",
  "__clone",
  "__clone3",
  "execute_native_thread_routine",
  "_start",
  "__libc_start_main",
  "__libc_start_call_main",
  NULL,
};

/* The same by prefix, with CPython's static helpers. */
static const char *const runtime_function_prefixes[] = {
  "pthread_", "cfunction_", "method_vectorcall", "slot_tp_", "pymain_", "_Py",
};

static gboolean
is_system_path (const char *path)
{
  g_autofree char *base = NULL;

  for (guint i = 0; i < G_N_ELEMENTS (system_fragments); i++)
    if (strstr (path, system_fragments[i]) != NULL)
      return TRUE;
  for (guint i = 0; i < G_N_ELEMENTS (system_prefixes); i++)
    if (g_str_has_prefix (path, system_prefixes[i]))
      return TRUE;
  base = g_path_get_basename (path);
  for (guint i = 0; i < G_N_ELEMENTS (system_libraries); i++)
    if (g_str_has_prefix (base, system_libraries[i]))
      return TRUE;
  return FALSE;
}

gboolean
vs_frame_is_user_code (const char *file, const char *module)
{
  if (file == NULL && module == NULL)
    return FALSE;
  if (file != NULL && (file[0] == '\0' || strcmp (file, "??") == 0 || is_system_path (file)))
    return FALSE;
  if (module != NULL && is_system_path (module))
    return FALSE;
  return TRUE;
}

/* CPython's C API: Py_RunMain, PyObject_Vectorcall, PyEval_EvalCode. */
static gboolean
is_cpython_function (const char *function)
{
  return g_str_has_prefix (function, "Py") && (g_ascii_isupper (function[2]) || function[2] == '_');
}

/* Whether path has folder as one of its folders (at its start or after a
 * '/'). */
static gboolean
has_folder (const char *path, const char *folder)
{
  for (const char *p = strstr (path, folder); p != NULL; p = strstr (p + 1, folder))
    if (p == path || p[-1] == '/')
      return TRUE;
  return FALSE;
}

/* Whether name ends in "+0x" and hex digits, as a frame its symbolizer
 * could not name is written (`python3.10+0x1a2b3`). */
static gboolean
is_offset_name (const char *name)
{
  const char *plus = strrchr (name, '+');

  if (plus == NULL || plus[1] != '0' || plus[2] != 'x' || plus[3] == '\0')
    return FALSE;
  for (const char *p = plus + 3; *p != '\0'; p++)
    if (!g_ascii_isxdigit (*p))
      return FALSE;
  return TRUE;
}

static gboolean
in_list (const char *s, const char *const *prefixes, guint n)
{
  for (guint i = 0; i < n; i++)
    if (g_str_has_prefix (s, prefixes[i]))
      return TRUE;
  return FALSE;
}

gboolean
vs_frame_is_runtime (int kind, const char *file, const char *module, const char *function,
                     gint64 line)
{
  if (kind == VS_FRAME_LABEL || kind == VS_FRAME_PYTHON)
    return FALSE;
  /* Unsymbolized: no file and no function, or a module+offset name. */
  if ((file == NULL || file[0] == '\0' || strcmp (file, "??") == 0)
      && (function == NULL || function[0] == '\0' || strcmp (function, "??") == 0))
    return TRUE;
  if (function != NULL && (is_offset_name (function) || g_str_has_prefix (function, "0x")))
    return TRUE;
  if (file != NULL && is_offset_name (file))
    return TRUE;
  if (file != NULL)
    {
      g_autofree char *base = g_path_get_basename (file);

      for (guint i = 0; i < G_N_ELEMENTS (interpreter_folders); i++)
        if (has_folder (file, interpreter_folders[i]))
          return TRUE;
      for (guint i = 0; i < G_N_ELEMENTS (runtime_folders); i++)
        if (has_folder (file, runtime_folders[i]))
          return TRUE;
      if (strstr (file, "/python3.") != NULL || strstr (file, "/python-3.") != NULL
          || strstr (file, "libstdc++") != NULL || strstr (file, "/glibc") != NULL)
        return TRUE;
      if (in_list (base, runtime_modules, G_N_ELEMENTS (runtime_modules)))
        return TRUE;
      /* A file with no folder and no line: a runtime object (thread48.o)
       * or a source PyTorch could not place. */
      if (line <= 0 && strchr (file, '/') == NULL)
        for (guint i = 0; i < G_N_ELEMENTS (native_source_suffixes); i++)
          if (g_str_has_suffix (file, native_source_suffixes[i]))
            return TRUE;
    }
  if (module != NULL)
    {
      g_autofree char *base = g_path_get_basename (module);

      if (in_list (base, runtime_modules, G_N_ELEMENTS (runtime_modules)))
        return TRUE;
    }
  if (function != NULL
      && (g_strv_contains (runtime_function_names, function)
          || in_list (function, runtime_function_prefixes, G_N_ELEMENTS (runtime_function_prefixes))
          || is_cpython_function (function)))
    return TRUE;
  return FALSE;
}

gboolean
vs_frame_is_user (int kind, const char *file, const char *module, const char *function, gint64 line)
{
  if (kind == VS_FRAME_LABEL || !vs_frame_is_user_code (file, module)
      || vs_frame_is_runtime (kind, file, module, function, line))
    return FALSE;
  if (kind == VS_FRAME_PYTHON)
    return TRUE;
  if (function != NULL)
    {
      for (guint i = 0; i < G_N_ELEMENTS (library_function_prefixes); i++)
        if (g_str_has_prefix (function, library_function_prefixes[i]))
          return FALSE;
      for (guint i = 0; i < G_N_ELEMENTS (library_function_fragments); i++)
        if (strstr (function, library_function_fragments[i]) != NULL)
          return FALSE;
      if (is_cpython_function (function))
        return FALSE;
    }
  /* A C/C++ frame without a line: PyTorch's own symbolization of its
   * frames in stacks="all" snapshots. */
  if (file != NULL && line <= 0)
    for (guint i = 0; i < G_N_ELEMENTS (native_source_suffixes); i++)
      if (g_str_has_suffix (file, native_source_suffixes[i]))
        return FALSE;
  return TRUE;
}

char *
vs_frame_display_path (const char *path, const char *base, gboolean full)
{
  static const char *const packages[] = { "/site-packages/", "/dist-packages/" };
  const char *p;

  g_return_val_if_fail (path != NULL, NULL);
  if (full || path[0] != '/')
    return g_strdup (path);
  for (guint i = 0; i < G_N_ELEMENTS (packages); i++)
    if ((p = g_strrstr (path, packages[i])) != NULL && p[strlen (packages[i])] != '\0')
      return g_strdup (p + strlen (packages[i]));
  /* The standard library: …/lib/python3.12/threading.py → python3.12/threading.py */
  if ((p = g_strrstr (path, "/python3")) != NULL && p > path && strncmp (p - 4, "/lib", 4) == 0
      && strchr (p + 1, '/') != NULL)
    return g_strdup (p + 1);
  if (base != NULL && base[0] == '/')
    {
      gsize n = strlen (base);

      while (n > 1 && base[n - 1] == '/')
        n--;
      if (strncmp (path, base, n) == 0 && path[n] == '/' && path[n + 1] != '\0')
        return g_strdup (path + n + 1);
    }
  return g_strdup (path);
}

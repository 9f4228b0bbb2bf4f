/* vs-frame.c — classifying frames as the user's own code or a library's,
 * and shortening their paths for display (see vs-frame.h).
 */
#include "vs-frame.h"
#include "vs-trace-writer.h"

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
  ".cpp", ".cc", ".cxx", ".c", ".h", ".hpp", ".cu", ".cuh",
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

gboolean
vs_frame_is_user (int kind, const char *file, const char *module, const char *function, gint64 line)
{
  if (kind == VS_FRAME_LABEL || !vs_frame_is_user_code (file, module))
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

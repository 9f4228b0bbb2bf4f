/* SPDX-License-Identifier: MIT */
/* vs-python.c — Python frames of the calling thread through the C API
 * found at run time.
 *
 * Workload: called in the allocation callbacks of a Python program, on
 * every device-level allocation and free (a few thousand per second at
 * most: PyTorch's caching allocator calls cudaMalloc only when a segment
 * grows).  A capture is a walk of PyFrame_GetBack with one call per frame
 * for the code object and one for the line; names are read only for stacks
 * never seen before.
 *
 * Safety: nothing is called unless Py_IsInitialized(), PyGILState_Check()
 * and a non-NULL current thread state all say this thread runs Python code
 * right now with the GIL.  Every new reference is released with Py_DecRef;
 * an attribute lookup that fails has its exception cleared.
 */
#include "vs-python.h"

#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

typedef void PyObject;

static struct
{
  int (*is_initialized) (void);
  int (*gil_check) (void);
  void *(*current_tstate) (void);
  PyObject *(*get_frame) (void *tstate);
  PyObject *(*frame_back) (PyObject *frame);
  PyObject *(*frame_code) (PyObject *frame);
  int (*frame_line) (PyObject *frame);
  PyObject *(*get_attr) (PyObject *o, const char *name);
  const char *(*as_utf8) (PyObject *s);
  void (*dec_ref) (PyObject *o);
  void (*err_clear) (void);
  /* For vs_python_call_hook: looked up apart, the capture does not need them. */
  int (*gil_ensure) (void);
  void (*gil_release) (int);
  PyObject *(*sys_get_object) (const char *name);
  PyObject *(*dict_get_item) (PyObject *d, const char *key);
  PyObject *(*call_object) (PyObject *f, PyObject *args);
  int (*is_finalizing) (void);
  uint64_t eval_lo, eval_hi; /* _PyEval_EvalFrameDefault's code */
  bool ready;
} P;

static pthread_once_t init_once = PTHREAD_ONCE_INIT;

static void *
sym (const char *name)
{
  return dlsym (RTLD_DEFAULT, name);
}

static void
init (void)
{
  P.is_initialized = (int (*) (void))sym ("Py_IsInitialized");
  P.gil_check = (int (*) (void))sym ("PyGILState_Check");
  /* The thread state the thread runs with now (NULL once it released the
   * GIL): 3.13 names it PyThreadState_GetUnchecked. */
  P.current_tstate = (void *(*)(void))sym ("PyThreadState_GetUnchecked");
  if (P.current_tstate == NULL)
    P.current_tstate = (void *(*)(void))sym ("_PyThreadState_UncheckedGet");
  P.get_frame = (PyObject * (*)(void *)) sym ("PyThreadState_GetFrame");
  P.frame_back = (PyObject * (*)(PyObject *)) sym ("PyFrame_GetBack");
  P.frame_code = (PyObject * (*)(PyObject *)) sym ("PyFrame_GetCode");
  P.frame_line = (int (*) (PyObject *))sym ("PyFrame_GetLineNumber");
  P.get_attr = (PyObject * (*)(PyObject *, const char *)) sym ("PyObject_GetAttrString");
  P.as_utf8 = (const char *(*)(PyObject *))sym ("PyUnicode_AsUTF8");
  P.dec_ref = (void (*) (PyObject *))sym ("Py_DecRef");
  P.err_clear = (void (*) (void))sym ("PyErr_Clear");
  P.ready = P.is_initialized && P.gil_check && P.current_tstate && P.get_frame && P.frame_back
            && P.frame_code && P.frame_line && P.get_attr && P.as_utf8 && P.dec_ref && P.err_clear;

  P.gil_ensure = (int (*) (void))sym ("PyGILState_Ensure");
  P.gil_release = (void (*) (int))sym ("PyGILState_Release");
  P.sys_get_object = (PyObject * (*)(const char *)) sym ("PySys_GetObject");
  P.dict_get_item = (PyObject * (*)(PyObject *, const char *)) sym ("PyDict_GetItemString");
  P.call_object = (PyObject * (*)(PyObject *, PyObject *)) sym ("PyObject_CallObject");
  P.is_finalizing = (int (*) (void))sym ("Py_IsFinalizing"); /* 3.13 */
  if (P.is_finalizing == NULL)
    P.is_finalizing = (int (*) (void))sym ("_Py_IsFinalizing");

  void *eval = sym ("_PyEval_EvalFrameDefault");
  Dl_info info;
  const ElfW (Sym) *s = NULL;
  if (eval != NULL && dladdr1 (eval, &info, (void **)&s, RTLD_DL_SYMENT) != 0 && s != NULL
      && s->st_size > 0)
    {
      P.eval_lo = (uint64_t)(uintptr_t)eval;
      P.eval_hi = P.eval_lo + s->st_size;
    }
}

bool
vs_python_init (void)
{
  pthread_once (&init_once, init);
  return P.ready;
}

bool
vs_python_is_eval_pc (uint64_t pc)
{
  return pc >= P.eval_lo && pc < P.eval_hi;
}

int
vs_python_capture (VsPyRef *out, int max)
{
  if (!P.ready || !P.is_initialized () || !P.gil_check ())
    return 0;
  void *tstate = P.current_tstate ();
  if (tstate == NULL)
    return 0;
  int n = 0;
  PyObject *f = P.get_frame (tstate); /* new reference or NULL */
  while (f != NULL && n < max)
    {
      PyObject *code = P.frame_code (f); /* new reference; the frame keeps one */
      out[n].code = (uintptr_t)code;
      out[n].line = P.frame_line (f);
      if (code != NULL)
        P.dec_ref (code);
      n++;
      PyObject *back = P.frame_back (f);
      P.dec_ref (f);
      f = back;
    }
  if (f != NULL)
    P.dec_ref (f);
  return n;
}

/* A copy of attribute name of o as UTF-8, or NULL (exception cleared). */
static char *
attr_string (PyObject *o, const char *name)
{
  PyObject *v = P.get_attr (o, name);
  if (v == NULL)
    {
      P.err_clear ();
      return NULL;
    }
  const char *s = P.as_utf8 (v);
  char *copy = s ? strdup (s) : NULL;
  if (s == NULL)
    P.err_clear ();
  P.dec_ref (v);
  return copy;
}

bool
vs_python_describe (uintptr_t code, char **file, char **function)
{
  *file = *function = NULL;
  if (!P.ready || code == 0 || !P.gil_check () || P.current_tstate () == NULL)
    return false;
  PyObject *c = (PyObject *)code;
  *file = attr_string (c, "co_filename");
  *function = attr_string (c, "co_qualname"); /* 3.11+ */
  if (*function == NULL)
    *function = attr_string (c, "co_name");
  return *file != NULL || *function != NULL;
}

bool
vs_python_call_hook (const char *module, const char *function)
{
  pthread_once (&init_once, init);
  if (!P.ready || !P.gil_ensure || !P.gil_release || !P.sys_get_object || !P.dict_get_item
      || !P.call_object || !P.is_initialized ())
    return false;
  if (P.is_finalizing != NULL && P.is_finalizing ())
    return false;
  int g = P.gil_ensure ();
  bool ok = false;
  PyObject *modules = P.sys_get_object ("modules");                 /* borrowed */
  PyObject *m = modules ? P.dict_get_item (modules, module) : NULL; /* borrowed */
  PyObject *f = m ? P.get_attr (m, function) : NULL;
  if (f != NULL)
    {
      PyObject *r = P.call_object (f, NULL);
      ok = r != NULL;
      if (r != NULL)
        P.dec_ref (r);
      P.dec_ref (f);
    }
  if (!ok)
    P.err_clear ();
  P.gil_release (g);
  return ok;
}

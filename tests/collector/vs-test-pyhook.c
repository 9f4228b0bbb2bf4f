/* SPDX-License-Identifier: MIT */
/* vs-test-pyhook.c — vs_python_call_hook (vs-python.c) called from a
 * thread Python has never seen, as the collector's control thread calls
 * the PyTorch hook at a termination signal.  Loaded by test-pyhook.py
 * with ctypes, which releases the GIL around the call.
 */
#include <pthread.h>

#include "vs-python.h"

typedef struct
{
  const char *module, *function;
  int ok;
} VsHookCall;

static void *
call_main (void *arg)
{
  VsHookCall *c = arg;
  c->ok = vs_python_call_hook (c->module, c->function);
  return NULL;
}

__attribute__ ((visibility ("default"))) int vs_test_call_hook_from_thread (const char *module,
                                                                            const char *function);

/* Calls module.function() on a new thread; returns 1 when it ran without
 * raising, 0 when not, -1 when no thread could be started. */
int
vs_test_call_hook_from_thread (const char *module, const char *function)
{
  VsHookCall c = { module, function, 0 };
  pthread_t t;
  if (pthread_create (&t, NULL, call_main, &c) != 0)
    return -1;
  pthread_join (t, NULL);
  return c.ok;
}

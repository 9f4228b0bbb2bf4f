"""framework_truth.py — the ground truth the JAX and CuPy samples print.

Each sample calls `install(name, framework)` first.  At exit — also after
an uncaught out-of-memory error, whose text it keeps — it prints one line

  GROUND_TRUTH {"sample": ..., "framework": "jax"|"cupy", "stats": {...},
                "error": ..., "notes": {...}}

with the framework's own account of its allocator: for JAX each device's
`memory_stats()` (bytes_in_use, peak_bytes_in_use, pool_bytes,
bytes_limit, ...) read once the work is done (and, for a failed run, at
the failure: `notes.stats_at_failure`), for CuPy the default memory pool's
`used_bytes()`, `total_bytes()` and their high-water marks, which the
sample keeps itself with a CuPy MemoryHook read after every malloc of the
pool (CuPy has no peak statistic of its own; both grow only there).  Tests compare vramscope's reports with
these numbers.
"""
import atexit
import json
import os
import sys

_state = {"sample": None, "framework": None, "error": None, "notes": {}, "stats": None}


def note(key, value):
    """Adds key: value to the ground truth."""
    _state["notes"][key] = value


def jax_stats():
    """memory_stats() of JAX's first GPU: the BFC allocator's own figures."""
    import jax
    st = jax.devices()[0].memory_stats() or {}
    return {k: int(v) for k, v in st.items() if isinstance(v, (int, float))}


def cupy_stats(peak):
    """The default memory pool's figures, with the sample's high-water marks."""
    import cupy
    pool = cupy.get_default_memory_pool()
    return {"used_bytes": int(pool.used_bytes()), "total_bytes": int(pool.total_bytes()),
            "peak_used_bytes": int(peak["used"]), "peak_total_bytes": int(peak["total"])}


def cupy_peak_hook(peak):
    """A CuPy MemoryHook keeping the default pool's high-water marks in peak
    ("used", "total"), read after every malloc of the pool — where both
    grow, so the marks are exact.  CuPy has no peak statistic of its own;
    this is its documented hook (thread-local: use it as `with hook:`
    around the sample's work)."""
    import cupy
    from cupy.cuda import memory_hook

    pool = cupy.get_default_memory_pool()

    class PeakHook(memory_hook.MemoryHook):
        name = "PeakHook"

        def malloc_postprocess(self, **kwargs):
            peak["used"] = max(peak["used"], pool.used_bytes())
            peak["total"] = max(peak["total"], pool.total_bytes())

    return PeakHook()


def _excepthook(kind, value, tb):
    text = str(value).splitlines()[0] if str(value) else ""
    _state["error"] = "%s: %s" % (kind.__name__, text)
    _previous(kind, value, tb)


_previous = sys.excepthook


def _emit():
    truth = {"sample": _state["sample"], "framework": _state["framework"],
             "error": _state["error"], "notes": _state["notes"],
             "env": {k: v for k, v in os.environ.items()
                     if k.startswith(("XLA_PYTHON_CLIENT_", "CUPY_GPU_MEMORY_LIMIT"))}}
    try:
        if _state["framework"] == "jax":
            truth["stats"] = jax_stats()
        elif _state["stats"] is not None:
            truth["stats"] = _state["stats"]()
    except Exception as e:  # the truth must still print
        truth["stats_error"] = "%s: %s" % (type(e).__name__, e)
    print("GROUND_TRUTH " + json.dumps(truth, sort_keys=True), flush=True)


def install(name, framework, stats=None):
    """Registers the exit print; stats() gives CuPy's figures."""
    global _previous
    _state["sample"] = name
    _state["framework"] = framework
    _state["stats"] = stats
    _previous = sys.excepthook
    sys.excepthook = _excepthook
    atexit.register(_emit)
# SPDX-License-Identifier: MIT

"""torch_truth.py — the ground truth the PyTorch samples print about themselves.

Each diagnosis sample (torch-batch-too-large.py, torch-kept-outputs.py, ...)
calls `install(name, settings)` first.  At exit — also after an uncaught
torch.cuda.OutOfMemoryError — it prints one line

  GROUND_TRUTH {"sample": ..., "settings": {...}, "memory_stats": {...}, ...}

with the settings the sample ran with (batch, cap, AMP, ...), what
PyTorch's allocator was configured with (PYTORCH_CUDA_ALLOC_CONF, the
per-process memory fraction), its complete torch.cuda.memory_stats(), and
the exception that ended the program if one did, and writes the same JSON to
the file named by --truth when given.  Tests compare vramscope's reports
with these numbers.
"""
import atexit
import json
import os
import sys

_state = {"sample": None, "settings": {}, "error": None, "path": None, "notes": {}}


def note(key, value):
    """Adds key: value to the ground truth (e.g. the bytes a sample keeps)."""
    _state["notes"][key] = value


def _excepthook(kind, value, tb):
    _state["error"] = "%s: %s" % (kind.__name__, str(value).splitlines()[0] if str(value) else "")
    sys.__excepthook__(kind, value, tb)


def _emit():
    import torch
    truth = {
        "sample": _state["sample"],
        "settings": _state["settings"],
        "alloc_conf": os.environ.get("PYTORCH_CUDA_ALLOC_CONF"),
        "error": _state["error"],
        "notes": _state["notes"],
    }
    if torch.cuda.is_available() and torch.cuda.is_initialized():
        st = torch.cuda.memory_stats()
        truth["memory_stats"] = st
        truth["pytorch"] = {
            "peak_reserved": st.get("reserved_bytes.all.peak"),
            "final_reserved": st.get("reserved_bytes.all.current"),
            "peak_allocated": st.get("requested_bytes.all.peak"),
            "final_allocated": st.get("requested_bytes.all.current"),
            "alloc_count": st.get("allocation.all.allocated"),
            "failed": st.get("num_ooms"),
        }
        props = torch.cuda.get_device_properties(0)
        truth["device_total_bytes"] = props.total_memory
    text = json.dumps(truth, sort_keys=True)
    print("GROUND_TRUTH " + text, flush=True)
    if _state["path"]:
        with open(_state["path"], "w") as f:
            f.write(text + "\n")


def install(name, settings, path=None):
    """Registers the exit hook; settings is a dict of what the sample ran
    with; path, when given, also receives the JSON."""
    _state["sample"] = name
    _state["settings"] = dict(settings)
    _state["path"] = path
    sys.excepthook = _excepthook
    atexit.register(_emit)


def cap_memory(gib):
    """Caps PyTorch's allocator at gib GiB of device 0 with the per-process
    memory fraction (so a sample runs out of memory the same way on any
    GPU); returns the fraction set."""
    import torch
    total = torch.cuda.get_device_properties(0).total_memory
    fraction = min(1.0, gib * (1 << 30) / total)
    torch.cuda.set_per_process_memory_fraction(fraction)
    _state["settings"]["memory_fraction"] = fraction
    _state["settings"]["limit_bytes"] = int(fraction * total)
    return fraction
# SPDX-License-Identifier: MIT

#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# make-snapshot-corpus.py — records one PyTorch memory snapshot per option
# combination that the installed PyTorch offers, each with the run's own
# torch.cuda.memory_stats() taken at the same instant.
#
#   python3 make-snapshot-corpus.py --list            the case names
#   python3 make-snapshot-corpus.py OUTDIR CASE       one case, in this process
#
# Each case must run in a fresh interpreter (its allocator history starts
# empty; the allocator backend is chosen at start-up).  It writes
# CASE.pickle (the snapshot, as torch.cuda.memory._dump_snapshot writes it)
# and CASE.json: the settings used, what the installed PyTorch accepted or
# refused, memory_stats(), and facts read back from the snapshot (keys, the
# actions seen and how often, whether entries carry time_us) so that the
# tests can say which format each fixture is.  A case whose options the
# installed PyTorch refuses writes CASE.json with "refused" and no pickle.
# Small tensors and few steps: every pickle stays well under 1 MB.
import collections
import inspect
import json
import os
import pickle
import sys
import traceback

import vs_torch_train

CASES = [
    "stacks-python",   # context all, stacks python, snapshot markers
    "stacks-all",      # context all, stacks all (C++ frames first)
    "stacks-none",     # context None: no frames anywhere
    "context-state",   # stacks on live blocks only
    "context-alloc",   # stacks on allocs, not on frees
    "wrap",            # max_entries small enough to wrap several times
    "segments-only",   # enabled="state": no history at all
    "oom-observer",    # dumped inside the failure by an OOM observer
    "expandable",      # expandable_segments: segment_map / segment_unmap
    "async",           # backend:cudaMallocAsync
    "compile",         # torch.compile, compile_context, annotations
    "annotations",     # record_function phases as external annotations
    "metadata",        # user metadata / annotate entries where offered
    "late",            # recording starts with blocks already live
]
# Every combination of enabled x context x stacks, on the same small
# training loop: matrix-ENABLED-CONTEXT-STACKS ("none" for context None).
CASES += ["matrix-%s-%s-%s" % (e, c, s)
          for e in ("all", "state")
          for c in ("none", "state", "alloc", "all")
          for s in ("python", "all")]

ALLOC_CONF = {
    "expandable": "expandable_segments:True",
    "async": "backend:cudaMallocAsync",
    "oom-observer": "garbage_collection_threshold:0.8,max_split_size_mb:64",
}


def accepted_kwargs(fn, wanted):
    """The subset of WANTED that FN's signature names, and the rest."""
    try:
        params = inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return dict(wanted), []
    if any(p.kind == p.VAR_KEYWORD for p in params.values()):
        return dict(wanted), []
    ok = {k: v for k, v in wanted.items() if k in params}
    return ok, sorted(k for k in wanted if k not in params)


def record(torch, info, **wanted):
    fn = torch.cuda.memory._record_memory_history
    kwargs, dropped = accepted_kwargs(fn, wanted)
    info["record_kwargs"] = {k: v for k, v in kwargs.items()}
    # How many entries the history keeps: enabled="state" keeps one.
    if wanted.get("enabled", "all") == "state":
        info["max_entries"] = 1
    elif "max_entries" in wanted:
        info["max_entries"] = wanted["max_entries"]
    if dropped:
        info["record_kwargs_not_offered"] = dropped
    # What had happened before the history began: the counts inside the
    # trace are memory_stats() at the end minus these.
    info["memory_stats_at_record_start"] = torch.cuda.memory_stats()
    fn(**kwargs)


def model_and_opt(torch):
    model = torch.nn.Sequential(
        torch.nn.Linear(128, 256), torch.nn.ReLU(),
        torch.nn.Linear(256, 10)).cuda()
    return model, torch.optim.Adam(model.parameters())


def train(torch, model, opt, steps, batch=32):
    vs_torch_train.train(torch, model, opt, steps, batch, 128)


def describe(path):
    """Facts about the written snapshot, read with Python's own pickle (this
    runs on the machine that wrote it, on our own file)."""
    with open(path, "rb") as f:
        snap = pickle.load(f)
    facts = {"keys": sorted(snap.keys()) if isinstance(snap, dict) else None}
    if not isinstance(snap, dict):
        return facts
    traces = snap.get("device_traces") or []
    facts["devices_with_traces"] = len(traces)
    actions = collections.Counter()
    entry_keys = collections.Counter()
    with_frames = 0
    for t in traces:
        for e in t:
            actions[e.get("action")] += 1
            for k in e:
                entry_keys[k] += 1
            with_frames += bool(e.get("frames"))
    facts["actions"] = dict(actions)
    facts["entry_keys"] = dict(entry_keys)
    facts["entries_with_frames"] = with_frames
    segs = snap.get("segments") or []
    facts["segments"] = len(segs)
    states = collections.Counter()
    block_frames = 0
    for s in segs:
        for b in s.get("blocks", []):
            states[b.get("state")] += 1
            block_frames += bool(b.get("frames"))
    facts["block_states"] = dict(states)
    facts["blocks_with_frames"] = block_frames
    if segs:
        facts["segment_keys"] = sorted(segs[0].keys())
    ann = snap.get("external_annotations")
    if ann is not None:
        facts["external_annotations"] = len(ann)
        if ann:
            facts["annotation_keys"] = sorted(ann[0].keys())
    settings = snap.get("allocator_settings")
    if settings is not None:
        facts["allocator_settings"] = repr(settings)
    for k in snap:
        if k not in ("segments", "device_traces", "allocator_settings",
                     "external_annotations"):
            v = snap[k]
            facts["other:" + k] = (len(v) if hasattr(v, "__len__")
                                   else repr(v))
    return facts


def finish(torch, out, name, info):
    """Stats and snapshot back to back: neither allocates device memory."""
    stats = torch.cuda.memory_stats()
    path = os.path.join(out, name + ".pickle")
    try:
        torch.cuda.memory._dump_snapshot(path)
    except Exception as e:  # the backend may refuse snapshots
        info["snapshot_error"] = "%s: %s" % (type(e).__name__, e)
    write_json(torch, out, name, info, stats)


def write_json(torch, out, name, info, stats):
    path = os.path.join(out, name + ".pickle")
    free, total = torch.cuda.mem_get_info()
    info.update({
        "workload": name,
        "torch_version": torch.__version__,
        "device_name": torch.cuda.get_device_name(0),
        "device_total_bytes": total,
        "device_free_bytes": free,
        "allocator_backend": torch.cuda.get_allocator_backend(),
        "alloc_conf": os.environ.get("PYTORCH_CUDA_ALLOC_CONF", ""),
        "memory_stats": stats,
    })
    if os.path.exists(path):
        info["pickle_bytes"] = os.path.getsize(path)
        try:
            info["snapshot"] = describe(path)
        except Exception as e:
            info["describe_error"] = "%s: %s" % (type(e).__name__, e)
    with open(os.path.join(out, name + ".json"), "w") as f:
        json.dump(info, f, indent=1, sort_keys=True, default=repr)


def markers(torch, info):
    """Taking a snapshot puts a `snapshot` entry in the history."""
    torch.cuda.memory._snapshot()
    info["markers_taken"] = info.get("markers_taken", 0) + 1


# The cases that record with these settings (record's keywords), then
# train for that many steps (the matrix-ENABLED-CONTEXT-STACKS cases too,
# 2 steps).
TRAINED = {
    "stacks-all": (dict(enabled="all", context="all", stacks="all"), 2),
    "stacks-none": (dict(enabled="all", context=None, stacks="python"), 2),
    "context-state": (dict(enabled="all", context="state", stacks="python"), 2),
    "context-alloc": (dict(enabled="all", context="alloc", stacks="python"), 2),
    "wrap": (dict(enabled="all", context="all", stacks="python", max_entries=40), 4),
    "segments-only": (dict(enabled="state", context="state", stacks="python"), 2),
}


def run(name, out):
    if name in ALLOC_CONF:
        os.environ["PYTORCH_CUDA_ALLOC_CONF"] = ALLOC_CONF[name]
    import torch
    info = {}
    model = opt = None
    if name == "stacks-python":
        record(torch, info, enabled="all", context="all", stacks="python")
        model, opt = model_and_opt(torch)
        train(torch, model, opt, 2)
        markers(torch, info)
        train(torch, model, opt, 1)
        markers(torch, info)
    elif name in TRAINED or name.startswith("matrix-"):
        if name in TRAINED:
            wanted, steps = TRAINED[name]
        else:
            _, e, ctx, st = name.split("-")
            wanted = dict(enabled=e, context=None if ctx == "none" else ctx, stacks=st)
            steps = 2
        record(torch, info, **wanted)
        model, opt = model_and_opt(torch)
        train(torch, model, opt, steps)
    elif name == "oom-observer":
        # A small per-process limit makes the failure cheap and certain.
        # Recorded as OOM-dump recipes do: _record_memory_history's
        # defaults (stacks="all") and a max_entries.
        torch.cuda.set_per_process_memory_fraction(0.01)
        record(torch, info, max_entries=100000)
        seen = []

        def observer(device, alloc, device_allocated, device_free):
            if seen:
                return
            seen.append([device, alloc, device_allocated, device_free])
            # Inside the failure: the oom entry and num_ooms are in place.
            finish(torch, out, name, info)

        torch._C._cuda_attach_out_of_memory_observer(observer)
        held = []
        info_after = None
        try:
            for i in range(10000):
                held.append(torch.empty(96 << 20, dtype=torch.uint8,
                                        device="cuda"))
                if i % 3 == 2:
                    del held[-2]  # leaves holes; two of three are kept
        except torch.cuda.OutOfMemoryError as e:
            info_after = str(e).splitlines()[0][:300]
            print("caught:", info_after)
        info["observer_args"] = seen
        if not seen:
            raise SystemExit("the OOM observer was not called")
        # The json was written inside the observer; add what came after.
        path = os.path.join(out, name + ".json")
        with open(path) as f:
            data = json.load(f)
        data["observer_args"] = seen
        data["caught_message"] = info_after
        with open(path, "w") as f:
            json.dump(data, f, indent=1, sort_keys=True)
        return
    elif name == "expandable":
        record(torch, info, enabled="all", context="all", stacks="python")
        model, opt = model_and_opt(torch)
        train(torch, model, opt, 2)
        ts = [torch.empty(24 << 20, dtype=torch.uint8, device="cuda")
              for _ in range(5)]
        del ts[:3]
        torch.cuda.empty_cache()  # unmaps free pages: segment_unmap
        ts.append(torch.empty(50 << 20, dtype=torch.uint8, device="cuda"))
    elif name == "async":
        try:
            record(torch, info, enabled="all", context="all",
                   stacks="python")
        except Exception as e:
            info["record_error"] = "%s: %s" % (type(e).__name__, e)
        model, opt = model_and_opt(torch)
        train(torch, model, opt, 2)
    elif name in ("compile", "annotations"):
        record(torch, info, enabled="all", context="all", stacks="python",
               compile_context=(name == "compile"),
               global_record_annotations=True)
        model, opt = model_and_opt(torch)
        step_model = model
        if name == "compile":
            step_model = torch.compile(model)
        for i in range(2):
            with torch.profiler.record_function("step%d" % i):
                with torch.profiler.record_function("forward"):
                    x = torch.randn(32, 128, device="cuda")
                    loss = step_model(x).square().mean()
                with torch.profiler.record_function("backward"):
                    opt.zero_grad(set_to_none=True)
                    loss.backward()
                with torch.profiler.record_function("optimizer"):
                    opt.step()
        torch.cuda.synchronize()
    elif name == "metadata":
        record(torch, info, enabled="all", context="all", stacks="python")
        model, opt = model_and_opt(torch)
        setter = getattr(torch.cuda.memory, "_set_memory_metadata", None)
        annotate = getattr(torch.cuda.memory, "_annotate_memory", None)
        info["metadata_offered"] = setter is not None
        info["annotate_offered"] = annotate is not None
        if setter:
            setter("phase=train")
        train(torch, model, opt, 1)
        if setter:
            setter("")
        if annotate:
            t = torch.empty(1 << 20, device="cuda")
            try:
                annotate(t.untyped_storage().data_ptr(), "kept buffer")
            except Exception as e:
                info["annotate_error"] = "%s: %s" % (type(e).__name__, e)
        markers(torch, info)
        train(torch, model, opt, 1)
    elif name == "late":
        model, opt = model_and_opt(torch)
        train(torch, model, opt, 1)
        keep = torch.empty(4 << 20, dtype=torch.uint8, device="cuda")
        record(torch, info, enabled="all", context="all", stacks="python")
        train(torch, model, opt, 1)
        del keep
    else:
        raise SystemExit("unknown case " + name)
    finish(torch, out, name, info)


def main():
    if sys.argv[1:] == ["--list"]:
        print("\n".join(CASES))
        return
    if len(sys.argv) != 3:
        raise SystemExit("usage: make-snapshot-corpus.py OUTDIR CASE | --list")
    out, name = sys.argv[1], sys.argv[2]
    os.makedirs(out, exist_ok=True)
    try:
        run(name, out)
    except SystemExit:
        raise
    except BaseException:
        # What the installed PyTorch refused, for the record.
        with open(os.path.join(out, name + ".error.txt"), "w") as f:
            f.write(traceback.format_exc())
        raise


if __name__ == "__main__":
    main()

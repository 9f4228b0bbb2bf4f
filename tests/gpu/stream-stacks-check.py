#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""stream-stacks-check.py — the Python stacks vramscope's allocator stream
gathers, compared event by event with PyTorch's own history.

Run under `vramscope record` with VRAMSCOPE_TORCH_HISTORY=1, so that both
are on: the hook's tracker writes every allocator event to
$VRAMSCOPE_SPOOL_DIR/torch-PID.stream with a stack id into
torch-PID.stacks, and PyTorch records its history with Python stacks.
The program allocates in the ways that matter (a training step, with
autograd's device thread; nested calls, a generator, a comprehension, a
lambda; a Python thread; a block used on a second stream, whose free
completes later; empty_cache; a caught out-of-memory error), then takes a
snapshot and checks the stream's account at that instant against the
allocator's own (reserved bytes: the snapshot's segments and memory_stats();
requested bytes: memory_stats()), and matches the stream's records of each
device with the history's entries: same action, address and size in
the same order (the history's tail), and the same frames (file, function,
line) for every one.  Writes OUT.json (counts, first mismatches, memory
stats) and copies the stream, the stacks file and the snapshot (pickle)
beside it as OUT.stream, OUT.stacks and OUT.pickle.

Without the history (VRAMSCOPE_TORCH_HISTORY unset) it checks only that
the stacks file reads and that the program's own allocations have stacks.

  python3 stream-stacks-check.py OUT
Exits 0 when everything matched, 1 otherwise.
"""
import json
import os
import pickle
import shutil
import sys
import threading

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from vs_stream_files import read_stacks, read_stream  # noqa: E402

ACTIONS = {"alloc": 1, "free_requested": 2, "free_completed": 3, "segment_alloc": 4,
           "segment_free": 5, "segment_map": 6, "segment_unmap": 7, "oom": 8}
NAMES = {v: k for k, v in ACTIONS.items()}


# The workload -------------------------------------------------------------

def nested(depth, n):
    if depth:
        return nested(depth - 1, n)
    return torch.empty(n, device="cuda")


def gen(k):
    for i in range(k):
        yield torch.ones(1000 + i, device="cuda")


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.a = torch.nn.Linear(256, 512)
        self.b = torch.nn.Linear(512, 10)

    def forward(self, x):
        return self.b(torch.relu(self.a(x)))


def train(steps):
    net = Net().cuda()
    opt = torch.optim.Adam(net.parameters())
    x = torch.randn(64, 256, device="cuda")
    y = torch.randint(0, 10, (64,), device="cuda")
    for _ in range(steps):
        opt.zero_grad(set_to_none=True)
        loss = torch.nn.functional.cross_entropy(net(x), y)
        loss.backward()
        opt.step()
    return loss.item()


def side_stream():
    s = torch.cuda.Stream()
    t = torch.empty(1 << 20, device="cuda")
    with torch.cuda.stream(s):
        u = t * 2
    t.record_stream(s)
    del t  # its free completes once s has run
    s.synchronize()
    return u.sum().item()


def in_thread():
    kept = []
    th = threading.Thread(target=lambda: kept.append(nested(2, 4096)))
    th.start()
    th.join()
    return kept


def workload():
    train(3)
    keep = [nested(5, 1 << 16) for _ in range(3)]
    keep += list(gen(3))
    keep += (lambda: [torch.zeros(77, device="cuda")])()
    keep += in_thread()
    side_stream()
    big = torch.empty(64 << 20, dtype=torch.uint8, device="cuda")
    del big
    torch.cuda.empty_cache()
    try:
        torch.empty(1 << 50, dtype=torch.uint8, device="cuda")
    except RuntimeError:  # torch.cuda.OutOfMemoryError
        pass
    keep.append(nested(1, 123))
    train(2)
    return keep


# The comparison -----------------------------------------------------------

def frames_of(entry):
    return [(f.get("filename", ""), f.get("name", ""), int(f.get("line", 0)))
            for f in entry.get("frames") or []]


def main():
    out = sys.argv[1]
    spool = os.environ.get("VRAMSCOPE_SPOOL_DIR", "")
    kept = workload()
    torch.cuda.synchronize()
    snap = torch.cuda.memory._snapshot()
    pid = os.getpid()
    stream_path = os.path.join(spool, "torch-%d.stream" % pid)
    stacks_path = os.path.join(spool, "torch-%d.stacks" % pid)
    result = {"pid": pid, "python": sys.version, "torch": torch.__version__,
              "memory_stats": torch.cuda.memory_stats(), "problems": []}
    problems = result["problems"]
    info = stream_path + ".info"
    result["stream_info"] = open(info).read() if os.path.exists(info) else None
    if not os.path.exists(stream_path) or not os.path.exists(stacks_path):
        problems.append("no stream or stacks file in %r: %s" % (
            spool, sorted(os.listdir(spool)) if os.path.isdir(spool) else "no spool"))
    else:
        records = read_stream(stream_path)
        stacks, torn = read_stacks(stacks_path)
        result["records"] = len(records)
        result["stacks"] = len(stacks)
        result["stacks_torn"] = torn
        traces = snap.get("device_traces") or []
        history = any(traces)
        result["history"] = history
        per_action = {}
        shown = 0
        for dev, trace in enumerate(traces):
            hist = [e for e in trace if e.get("action") in ACTIONS]
            # Nothing was allocated since the snapshot: the history is the
            # tail of the stream (which started just before it).
            recs = [r for r in records if r[4] == dev and r[7] in NAMES]
            if len(recs) < len(hist):
                problems.append("device %d: %d stream records, %d history entries"
                                % (dev, len(recs), len(hist)))
                continue
            recs = recs[len(recs) - len(hist):]
            for r, e in zip(recs, hist):
                a = NAMES[r[7]]
                c = per_action.setdefault(a, {"events": 0, "same": 0, "empty": 0})
                c["events"] += 1
                addr = e.get("addr", e.get("device_free", -1))  # an oom's is device_free
                if a != e["action"] or r[1] != addr or r[2] != e.get("size"):
                    problems.append("device %d: out of step: stream %s %#x %d, history %s %r %r"
                                    % (dev, a, r[1], r[2], e["action"], addr, e.get("size")))
                    break
                want = frames_of(e)
                got = stacks.get(r[6], []) if r[6] else []
                if r[6] and r[6] not in stacks:
                    problems.append("stack id %d not in the stacks file" % r[6])
                if got == want:
                    c["same"] += 1
                    c["empty"] += not want
                elif shown < 8:
                    shown += 1
                    problems.append({"device": dev, "action": a, "addr": r[1], "tid": r[5],
                                     "stack_id": r[6], "stream": got, "history": want})
        result["per_action"] = per_action
        for a, c in per_action.items():
            if c["same"] != c["events"]:
                problems.append("%s: %d of %d events with the same frames"
                                % (a, c["same"], c["events"]))
        # The stream's account against the allocator's own, at the
        # snapshot: reserved bytes (its segments) and requested bytes.
        reserved = requested = 0
        for r in records:
            reserved += {4: r[2], 6: r[2], 5: -r[2], 7: -r[2]}.get(r[7], 0)
            requested += {1: r[2], 3: -r[2]}.get(r[7], 0)
        segs = sum(seg.get("total_size", 0) for seg in snap.get("segments") or [])
        st = result["memory_stats"]
        result["reserved"] = [reserved, segs, st.get("reserved_bytes.all.current")]
        result["requested"] = [requested, st.get("requested_bytes.all.current")]
        if not reserved == segs == st.get("reserved_bytes.all.current"):
            problems.append("reserved bytes: stream %d, snapshot's segments %d, memory_stats %r"
                            % (reserved, segs, st.get("reserved_bytes.all.current")))
        if requested != st.get("requested_bytes.all.current"):
            problems.append("requested bytes: stream %d, memory_stats %r"
                            % (requested, st.get("requested_bytes.all.current")))
        if not history:
            own = [r for r in records if r[7] == 1 and r[6] != 0]
            if not own:
                problems.append("no allocation has a stack")
            mine = [s for s in stacks.values() if any(f[1] == "nested" for f in s)]
            if not mine:
                problems.append("no stack through nested()")
        for src, ext in ((stream_path, ".stream"), (stacks_path, ".stacks")):
            if os.path.getsize(src) < (4 << 20):
                shutil.copyfile(src, out + ext)
    with open(out + ".pickle", "wb") as f:
        pickle.dump(snap, f, protocol=4)
    with open(out + ".json", "w") as f:
        json.dump(result, f, indent=1, sort_keys=True, default=str)
    print(json.dumps({k: result.get(k) for k in ("records", "stacks", "history", "per_action")},
                     sort_keys=True))
    for p in problems[:20]:
        print("PROBLEM", p)
    print("stream-stacks-check: %s" % ("ok" if not problems else "FAILED"))
    del kept
    return 0 if not problems else 1


if __name__ == "__main__":
    sys.exit(main())

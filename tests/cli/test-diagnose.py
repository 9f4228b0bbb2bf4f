#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""test-diagnose.py VRAMSCOPE DATA_DIR — `report diagnose`, `roles`,
`growth` and `oom` on the traces recorded on a GPU and on imported
snapshots, against what each program is known to have done.  TAP output.

  torch-eval-leak.db  ResNet-18 capped at 6 GiB with the per-process memory
                      fraction, keeping every evaluation output with its
                      graph: the failures are the allocator's limit (CUDA
                      had 133 GiB free), never fragmentation; memory grows
                      every step at the evaluate line; SGD's momentum
                      buffers are exactly the parameters' bytes
                      (11,227,812 fp32 values).
  torch-train.db      a healthy training loop: no finding at all.
  sample-oom.db       cudaMalloc of 1 TiB: the device is full.
  torch-ddp.db        NCCL's buffers outside PyTorch's allocator.
  snapshots/*.pickle  imported: oom (device full), fragmentation
                      (fragmentation, expandable segments recommended),
                      expandable (segments already expandable: never
                      recommended), train (no finding).
"""
import csv
import io
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from tap import done, ok  # noqa: E402

vramscope, data = sys.argv[1], sys.argv[2]




def run(*args):
    p = subprocess.run([vramscope, *args], capture_output=True, text=True)
    if p.returncode != 0:
        raise RuntimeError("vramscope %s: exit %d: %s" % (" ".join(args), p.returncode, p.stderr))
    return p.stdout


def rows(*args):
    return list(csv.DictReader(io.StringIO(run("report", "--format", "csv", *args))))


def trace(name):
    return os.path.join(data, name)


# -- the bundled OOM: allocator limit, growth at the evaluate line -------
leak = trace("torch-eval-leak.db")
findings = rows(leak, "diagnose")
names = [f["finding"] for f in findings]
ok(names[:2] == ["growth-per-iteration", "oom-allocator-limit"],
   "eval-leak: the growth (the root cause) first, then the failure at the allocator's limit", names)
ok("oom-fragmentation" not in names and "oom-device-full" not in names,
   "eval-leak: not fragmentation, not a full device", names)
oom = findings[1]
ok(oom["bytes"] == "25690112" and oom["count"] == "29" and oom["allocator"] == "pytorch"
   and oom["time_ns"] == "1125998034",
   "eval-leak: the fatal request, the 29th failure (25690112 bytes at 1.126 s), heads it", oom)
ok("the failure that ended the run" in oom["evidence"]
   and "28 earlier ones of this kind were survived" in oom["evidence"]
   and "tried to allocate 26.00 MiB" in oom["evidence"],
   "eval-leak: the fatal failure in PyTorch's rounding, the survived ones apart", oom)
ok("133.05 GiB free" in oom["evidence"], "eval-leak: evidence names CUDA's free memory", oom)
growth = [f for f in findings if f["finding"] == "growth-per-iteration"]
ok(len(growth) == 1 and growth[0]["bytes"] == "690538496" and growth[0]["count"] == "7"
   and growth[0]["site"] == "samples/torch-eval-leak.py:66 evaluate",
   "eval-leak: 658.55 MiB growth per step at the evaluate line", growth)
ok("first stop the growth" in oom["remedy"], "eval-leak: the OOM's remedy points at the growth",
   oom["remedy"])

causes = rows(leak, "oom")
ok(len(causes) == 29 and all(r["cause"] == "oom-allocator-limit" for r in causes),
   "eval-leak: report oom names the cause of each failure",
   [r["cause"] for r in causes])
ok(all(not v.startswith("-") for r in causes for v in r.values() if v),
   "eval-leak: report oom has no negative value")

roles = {r["role"]: int(r["bytes"]) for r in rows(leak, "roles")}
summary = rows(leak, "summary")
peak = int([s for s in summary if s["allocator"] == "all"][0]["peak_allocated_bytes"])
ok(sum(roles.values()) == peak, "eval-leak: roles sum to the peak", (roles, peak))
ok(roles["optimizer-state"] == 11227812 * 4,
   "eval-leak: SGD momentum = ResNet-18's 11,227,812 fp32 parameters", roles)
ok(max(roles, key=roles.get) == "activations", "eval-leak: activations dominate", roles)

iterations = rows(leak, "growth")
ok(len(iterations) == 9 and all(r["growth_bytes"] == "690538496" for r in iterations[2:]),
   "eval-leak: 9 steps from NVTX ranges, each keeping 658.55 MiB", iterations)

import sqlite3

worst = [r for r in rows(leak, "fragmentation") if r["instant"] == "worst"]
# Where free memory inside reserved hurt: just before a segment the large
# pool had to take (a request its free blocks could not serve) or a failed
# request, the most reserved - allocated; computed here from the tables.
con = sqlite3.connect(leak)
series = con.execute("SELECT ts, seq, reserved_bytes - allocated_bytes FROM series"
                     " WHERE allocator_id = 0 ORDER BY ts, seq").fetchall()
missed = con.execute("SELECT alloc_ts, alloc_seq FROM block WHERE level = 3"
                     " AND bytes != 2097152").fetchall()
missed += [(ts, 2 ** 63 - 1) for (ts,) in con.execute("SELECT ts FROM failed_alloc")]
truth = 0
for ts, seq in missed:
    before = [r for r in series if (r[0], r[1]) < (ts, seq)]
    if before:
        truth = max(truth, before[-1][2])
ok(len(worst) == 2 and int(worst[0]["free_bytes"]) == truth and truth > 0
   and int(worst[0]["allocated_bytes"]) > 0,
   "eval-leak: the worst fragmentation is where free memory inside reserved missed a request, "
   "never an empty cache", (worst, truth))

# -- a healthy loop: no false alarm --------------------------------------
ok(rows(trace("torch-train.db"), "diagnose") == [], "healthy training loop: no finding")
steps = rows(trace("torch-train.db"), "growth")
ok(len(steps) == 13 and all(r["growth_bytes"] == "0" for r in steps[2:]),
   "healthy training loop: 13 steps, no growth after the first", steps)

# -- other causes --------------------------------------------------------
ok([f["finding"] for f in rows(trace("sample-oom.db"), "diagnose")] == ["oom-device-full"],
   "cudaMalloc of 1 TiB: the device is full")
sl = rows(trace("sample-leak.db"), "diagnose")
leaks = [f for f in sl if f["finding"] == "leak-at-exit"]
ok(len(leaks) == 1 and leaks[0]["bytes"] == str(10 * 256 * 1024) and leaks[0]["count"] == "10",
   "sample-leak: the 10 kept 256 KiB buffers leak at exit", sl)
gr = [f for f in sl if f["finding"] == "growth-per-iteration"]
ok(len(gr) == 1 and gr[0]["bytes"] == str(256 * 1024) and "cudaFree" not in gr[0]["remedy"]
   and "torch" not in gr[0]["remedy"],
   "sample-leak: 256 KiB growth per NVTX iteration, a remedy for plain CUDA", gr)
ddp = rows(trace("torch-ddp.db"), "diagnose")
ok([(f["finding"], f["device"]) for f in ddp] == [("outside-allocator", "0"),
                                                  ("outside-allocator", "1")]
   and all("ncclCuMemAlloc" in f["evidence"] for f in ddp),
   "DDP: NCCL's buffers outside the allocator on both GPUs", ddp)

with tempfile.TemporaryDirectory() as tmp:
    def imported(name):
        out = os.path.join(tmp, name + ".db")
        run("import", os.path.join(data, "snapshots", name + ".pickle"), "-o", out)
        return rows(out, "diagnose")

    f = imported("oom")
    ok([x["finding"] for x in f] == ["oom-device-full"] and f[0]["count"] == "2",
       "snapshot oom: two failures, device full", f)
    f = imported("fragmentation")
    frag = [x for x in f if x["finding"] == "fragmentation"]
    ok(len(frag) == 1 and "expandable_segments:True" in frag[0]["remedy"],
       "snapshot fragmentation: fragmentation, expandable segments recommended", f)
    f = imported("expandable")
    ok(all("expandable_segments:True" not in x["remedy"] for x in f),
       "snapshot with expandable segments on: never recommended", f)
    ok(imported("train") == [], "snapshot of a training loop: no finding")

    # The settings in meta, as the PyTorch hook records them.
    import shutil
    import sqlite3
    capped = os.path.join(tmp, "capped.db")
    shutil.copy(leak, capped)
    total = sqlite3.connect(capped).execute("SELECT total_bytes FROM device").fetchone()[0]
    fraction = 6 * (1 << 30) / total
    with sqlite3.connect(capped) as db:
        db.execute("INSERT INTO meta VALUES ('pytorch.memory_fraction.0', ?)", (repr(fraction),))
    f = [x for x in rows(capped, "diagnose") if x["finding"].startswith("oom-")][0]
    ok(f["finding"] == "oom-allocator-limit" and "limit of 6.00 GiB" in f["evidence"]
       and "6.00 GiB allowed" in f["evidence"] and "memory fraction" not in f["remedy"]
       and "only postpones" in f["remedy"],
       "a recorded fraction: the limit (6 GiB) is the evidence; with growth, no larger cap", f)
    ok("per-process memory fraction" in run("report", "--width", "100", capped)
       or "memory fraction 0.0" in run("report", "--width", "100", capped),
       "the diagnosis shows the allocator's settings")
    expandable = os.path.join(tmp, "fragmentation.db")
    with sqlite3.connect(expandable) as db:
        db.execute("INSERT OR REPLACE INTO meta VALUES ('pytorch.expandable_segments', '1')")
    f = [x for x in rows(expandable, "diagnose") if x["finding"] == "fragmentation"]
    ok(len(f) == 1 and "expandable_segments:True" not in f[0]["remedy"]
       and "already on" in f[0]["remedy"],
       "expandable segments on in meta: never recommended", f)

# -- diff ----------------------------------------------------------------
same = list(csv.DictReader(io.StringIO(run("diff", "--format", "csv", leak, leak))))
ok(len(same) > 10 and all(r["delta"] == "0" for r in same), "diff of a trace with itself: no delta")
pair = list(csv.DictReader(io.StringIO(run("diff", "--format", "csv", leak,
                                           trace("torch-train.db")))))
train_peak = int([s for s in rows(trace("torch-train.db"), "summary")
                  if s["allocator"] == "all"][0]["peak_allocated_bytes"])
pk = [r for r in pair if r["section"] == "peak" and r["name"] == "peak_allocated_bytes"][0]
ok(int(pk["a"]) == peak and int(pk["b"]) == train_peak and int(pk["delta"]) == train_peak - peak,
   "diff: peaks of A and B with their delta", pk)
fl = [r for r in pair if r["section"] == "failures"][0]
ok((fl["a"], fl["b"], fl["delta"]) == ("29", "0", "-29"), "diff: failures side by side", fl)
site = [r for r in pair if r["section"] == "site" and r["name"].endswith(":66 evaluate")]
ok(len(site) == 1 and site[0]["b"] == "0", "diff: a site only A has is 0 in B", site)

# -- the samples, recorded on an H200 (tests/gpu/record-diagnose-samples.sh)
# Each names its cause; each .json is the program's own memory_stats().
def sample(name):
    return os.path.join(data, "diagnose", "torch-%s.db" % name)


def line_of(source, text):
    """The site `samples/SOURCE:N FUNCTION` names, N the one line of the
    sample that holds text: a trace that no longer matches its sample's
    lines fails here (record it again)."""
    path = os.path.join(data, "..", "..", "samples", source)
    with open(path) as f:
        found = [i + 1 for i, line in enumerate(f) if text in line]
    assert len(found) == 1, (source, text, found)
    return "samples/%s:%d" % (source, found[0])


def truth(name):
    import json
    with open(os.path.join(data, "diagnose", "torch-%s.json" % name)) as f:
        return json.load(f)


def finding_names(name):
    return [f["finding"] for f in rows(sample(name), "diagnose")]


def role_bytes(name):
    return {r["role"]: int(r["bytes"]) for r in rows(sample(name), "roles")}


f = rows(sample("batch-too-large"), "diagnose")
ok([x["finding"] for x in f] == ["oom-allocator-limit"]
   and f[0]["site"] == line_of("torch_sample.py", "loss = run.loss_fn(run.model(run.images)")
   + " train_step"
   and "limit of 3.00 GiB" in f[0]["evidence"] and "activations hold" in f[0]["remedy"]
   and f[0]["count"] == str(truth("batch-too-large")["pytorch"]["failed"]),
   "batch too large: the 3 GiB cap refused it in train_step; activations' remedies", f)
meta = {x["key"]: x["value"] for x in rows(sample("batch-too-large"), "meta")}
ok(abs(float(meta["pytorch.memory_fraction.0"])
       - truth("batch-too-large")["settings"]["memory_fraction"]) < 1e-12
   and meta["pytorch.expandable_segments"] == "0" and "pytorch.allocator_settings" in meta,
   "the hook recorded the fraction the program set, and the allocator's settings (report meta)",
   meta)
r = role_bytes("batch-too-large")
ok(max(r, key=r.get) == "activations", "batch too large: activations dominate", r)

f = rows(sample("kept-outputs"), "diagnose")
steps = truth("kept-outputs")["notes"]["allocated_growth_per_step"]
ok([x["finding"] for x in f] == ["growth-per-iteration"]
   and f[0]["site"] == line_of("torch-kept-outputs.py", "# the bug") + " log_loss"
   and abs(int(f[0]["bytes"]) - sorted(steps)[len(steps) // 2]) < 0.03 * sorted(steps)[len(steps) // 2],
   "outputs kept with their graph: growth per step at log_loss, within 3 % of "
   "memory_allocated()'s (block sizes)", (f, steps))
ok(len(rows(sample("kept-outputs"), "growth")) == 16,
   "outputs kept: 16 steps found from the allocation pattern (no annotations)")

f = rows(sample("eval-no-grad"), "diagnose")
ok([x["finding"] for x in f] == ["forward-without-backward"]
   and ":evaluate" not in f[0]["site"] and "evaluate" in f[0]["site"]
   and "torch.no_grad()" in f[0]["remedy"],
   "validation without no_grad: activations no backward used, at evaluate", f)

f = rows(sample("frag-mixed"), "diagnose")
ok([x["finding"] for x in f] == ["oom-fragmentation"] and f[0]["bytes"] == str(64 << 20)
   and "240.00 MiB free" in f[0]["evidence"] and "largest free block is 10.00 MiB" in f[0]["evidence"]
   and "expandable_segments:True" in f[0]["remedy"],
   "mixed sizes: the 64 MiB request failed on fragmentation; expandable segments", f)
text = run("report", "--width", "100", sample("frag-mixed-expandable"))
ok(finding_names("frag-mixed-expandable") == [] and "expandable_segments on" in text
   and "Remedy" not in text and "To lower the peak" not in text,
   "mixed sizes with expandable segments: it fits, and they are not recommended", text)

r = role_bytes("optimizer-state")
pb = truth("optimizer-state")["notes"]["parameter_bytes"]
ok(r["parameters"] == pb and r["optimizer-state"] == 2 * pb,
   "Adam: parameters = the model's bytes, optimizer state = exactly twice that", (r, pb))
text = run("report", "--width", "100", sample("optimizer-state"))
ok(finding_names("optimizer-state") == [] and "To lower the peak: optimizer state" in text
   and "8-bit optimizer" in text, "optimizer state dominating: the advice follows it", text)

amp = list(csv.DictReader(io.StringIO(run("diff", "--format", "csv", sample("amp-fp32"),
                                          sample("amp-bf16")))))
act = [x for x in amp if x["section"] == "role" and x["name"] == "activations"][0]
pk = [x for x in amp if x["section"] == "peak" and x["name"] == "peak_allocated_bytes"][0]
ok(int(act["delta"]) < 0 and int(pk["delta"]) < 0
   and int(act["a"]) == role_bytes("amp-fp32")["activations"]
   and int(act["b"]) == role_bytes("amp-bf16")["activations"],
   "AMP: bf16 autocast lowers the activations and the peak", (act, pk))

ok(finding_names("healthy") == [] and finding_names("amp-fp32") == []
   and finding_names("amp-bf16") == [],
   "healthy loops (with periodic no_grad evaluation; fp32; bf16): no false alarm")
steps = rows(sample("healthy"), "growth")
ok(len(steps) == 12 and all(x["growth_bytes"] == "0" for x in steps[2:]),
   "healthy loop: its 12 steps found from the allocation pattern, no growth", steps)

with tempfile.TemporaryDirectory() as tmp:
    out = os.path.join(tmp, "stacks-all.db")
    run("import", os.path.join(data, "diagnose", "stacks-all.pickle"), "-o", out)
    sites = [x["site"] for x in rows(out, "peak", "--by", "site")]
    ok(sites and all(x.startswith("samples/torch-stacks-all.py:") or x.startswith("backward pass")
                     for x in sites),
       "stacks=\"all\" snapshot: every site is a line of the program or the backward pass, "
       "never a C++ frame of the profiler or allocator", sites)

# -- one screen ----------------------------------------------------------
for name in sorted(os.listdir(data)) + ["diagnose/" + n for n in
                                        sorted(os.listdir(os.path.join(data, "diagnose")))]:
    if not name.endswith(".db"):
        continue
    text = run("report", "--width", "100", trace(name))
    lines = text.splitlines()
    ok(len(lines) <= 40 and max(len(l) for l in lines) <= 100,
       "%s: the diagnosis fits 40 lines of 100 columns" % name,
       "%d lines, widest %d" % (len(lines), max(len(l) for l in lines)))
ok(run("report", "--width", "100", leak) == run("report", "--width", "100", leak, "diagnose"),
   "report FILE is report FILE diagnose")

# Never propose what is already in effect: autocast seen through the stacks.
bf16 = run("report", "--width", "100", sample("amp-bf16"))
fp32 = run("report", "--width", "100", sample("amp-fp32"))
# (Words compared with the text's line wrapping undone.)
bf16 = " ".join(bf16.split())
fp32 = " ".join(fp32.split())
ok("bf16 autocast" not in bf16 and "autocast already on" in bf16,
   "amp-bf16: autocast is on (its frames are in the stacks): not proposed again", bf16)
ok("bf16 autocast" in fp32, "amp-fp32: bf16 autocast is proposed", fp32)
done()

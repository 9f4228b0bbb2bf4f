#!/usr/bin/env python3
"""torch-ladder.py — one training run of a ladder: the same model and loop
at one batch size (or sequence length), for `vramscope predict`.

  python3 torch-ladder.py --model resnet18|gpt2 --batch B [--seq L]
      [--steps S] [--limit-bytes N] [--dtype fp32|bf16] [--checkpoint]
      --truth RUN.json [--snapshot RUN.pickle]

resnet18: torchvision's ResNet-18 (random weights) on 224x224 images, SGD
with momentum.  gpt2: transformers' GPT-2 small built from GPT2Config (no
download), labels = inputs, AdamW.  Inputs are synthetic and seeded, so two
runs differ only by the batch size or sequence length.  --dtype bf16 runs
the forward pass under torch.autocast; --checkpoint checkpoints each block
(ResNet layer / GPT-2 block).

--snapshot records PyTorch's allocator history from before the model is
built (Python stacks) and writes the snapshot at the end.  --limit-bytes
caps the allocator with set_per_process_memory_fraction; an out-of-memory
error ends the loop and is recorded.  RUN.json receives the settings, the
cap PyTorch computes (allowed_bytes), whether it ran out of memory, the
device's capacity and torch.cuda.memory_stats().
"""
import argparse
import json
import sys

import torch

p = argparse.ArgumentParser()
p.add_argument("--model", choices=["resnet18", "gpt2"], required=True)
p.add_argument("--batch", type=int, required=True)
p.add_argument("--seq", type=int, default=256)
p.add_argument("--steps", type=int, default=3)
p.add_argument("--limit-bytes", type=int, default=0)
p.add_argument("--dtype", choices=["fp32", "bf16"], default="fp32")
p.add_argument("--checkpoint", action="store_true")
p.add_argument("--truth", required=True)
p.add_argument("--snapshot")
args = p.parse_args()

torch.manual_seed(0)
dev = torch.device("cuda")
free0, total = torch.cuda.mem_get_info()
allowed = None
if args.limit_bytes > 0:
    fraction = min(1.0, args.limit_bytes / total)
    torch.cuda.set_per_process_memory_fraction(fraction)
    allowed = int(fraction * float(total))
if args.snapshot:
    torch.cuda.memory._record_memory_history(max_entries=2000000, stacks="python")


def run_blocks(blocks, x):
    """Runs blocks in order, each checkpointed when --checkpoint."""
    from torch.utils.checkpoint import checkpoint

    for b in blocks:
        x = checkpoint(b, x, use_reentrant=False) if args.checkpoint else b(x)
    return x


def resnet_step(model, opt):
    x = torch.randn(args.batch, 3, 224, 224, device=dev)
    y = torch.randint(0, 1000, (args.batch,), device=dev)
    with torch.autocast("cuda", dtype=torch.bfloat16, enabled=args.dtype == "bf16"):
        if args.checkpoint:
            m = model
            h = m.maxpool(m.relu(m.bn1(m.conv1(x))))
            h = run_blocks([m.layer1, m.layer2, m.layer3, m.layer4], h)
            out = m.fc(torch.flatten(m.avgpool(h), 1))
        else:
            out = model(x)
        loss = torch.nn.functional.cross_entropy(out, y)
    loss.backward()
    opt.step()
    opt.zero_grad(set_to_none=True)


def gpt2_step(model, opt):
    ids = torch.randint(0, 50257, (args.batch, args.seq), device=dev)
    with torch.autocast("cuda", dtype=torch.bfloat16, enabled=args.dtype == "bf16"):
        loss = model(input_ids=ids, labels=ids).loss
    loss.backward()
    opt.step()
    opt.zero_grad(set_to_none=True)


truth = {
    "model": args.model,
    "batch": args.batch,
    "seq": args.seq if args.model == "gpt2" else None,
    "steps": args.steps,
    "dtype": args.dtype,
    "checkpoint": args.checkpoint,
    "limit_bytes": args.limit_bytes or None,
    "allowed_bytes": allowed,
    "device_total_bytes": total,
    "device_free_bytes_at_start": free0,
    "oom": False,
    "oom_step": None,
    "torch_version": torch.__version__,
    "device_name": torch.cuda.get_device_name(0),
}
step = -1
try:
    if args.model == "resnet18":
        import torchvision

        model = torchvision.models.resnet18().to(dev)
        opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
        do_step = resnet_step
    else:
        import transformers

        cfg = transformers.GPT2Config(n_positions=max(1024, args.seq))
        model = transformers.GPT2LMHeadModel(cfg).to(dev)
        if args.checkpoint:
            model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
        opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
        do_step = gpt2_step
    model.train()
    for step in range(args.steps):
        do_step(model, opt)
    torch.cuda.synchronize()
except torch.cuda.OutOfMemoryError as e:
    truth["oom"] = True
    truth["oom_step"] = step
    truth["error"] = str(e).splitlines()[0]

if args.snapshot:
    torch.cuda.memory._dump_snapshot(args.snapshot)
    torch.cuda.memory._record_memory_history(enabled=None)
truth["memory_stats"] = torch.cuda.memory_stats()
with open(args.truth, "w") as f:
    json.dump(truth, f, sort_keys=True)
    f.write("\n")
st = truth["memory_stats"]
print("LADDER %s batch=%d seq=%s oom=%s requested_peak=%d reserved_peak=%d" % (
    args.model, args.batch, truth["seq"], truth["oom"], st.get("requested_bytes.all.peak", 0),
    st.get("reserved_bytes.all.peak", 0)), flush=True)
sys.exit(0)
# SPDX-License-Identifier: MIT

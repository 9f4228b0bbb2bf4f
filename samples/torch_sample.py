"""torch_sample.py — what the PyTorch diagnosis samples share.

torch-healthy.py, torch-kept-outputs.py, torch-eval-no-grad.py,
torch-amp.py, torch-batch-too-large.py and torch-eval-leak.py all train
torchvision's ResNet-18 (100 classes, random weights, seed 0) with SGD
(lr 0.01, momentum 0.9) and cross-entropy on one synthetic batch of --batch
images of --size x --size pixels that stays on the GPU for the whole run;
torch-optimizer-state.py shares their options and their NVTX steps.  This
module holds that much: the options, the setup, the plain training step and
the NVTX ranges.  What a sample demonstrates (the line a diagnosis of its
trace points at: a kept output, an evaluation without no_grad, autocast,
Adam's state, a batch too large) stays in the sample's own file.

  p = torch_sample.parser(steps=12, batch=32)   # the sample adds its own
  args = torch_sample.start(p, "healthy")       # parses, installs the truth
  run = torch_sample.setup(args)                # model, optimizer, batch
  loss = torch_sample.train_step(run)
"""
import argparse
import contextlib
import types

import torch
import torchvision

import torch_truth


def parser(steps, batch, size=128):
    """An argument parser with the options every sample takes, at that
    sample's defaults: --steps, --batch, --size (image side in pixels;
    none when size is None) and --truth (a file that also receives the
    ground truth, torch_truth.py).  The sample adds its own options before
    calling start()."""
    p = argparse.ArgumentParser()
    p.add_argument("--steps", type=int, default=steps)
    p.add_argument("--batch", type=int, default=batch)
    if size is not None:
        p.add_argument("--size", type=int, default=size)
    p.add_argument("--truth", help="also write the ground truth JSON to this file")
    return p


def start(p, name):
    """Parses the command line with p and installs the ground truth
    (torch_truth.install) under name, a format string filled from the
    options (e.g. "amp-{amp}"); returns the options."""
    args = p.parse_args()
    torch_truth.install(name.format(**vars(args)), vars(args), args.truth)
    return args


def setup(args, cap_gib=None):
    """Builds what a ResNet-18 sample trains on cuda: with cap_gib, first
    caps PyTorch's allocator at that many GiB (torch_truth.cap_memory, so
    the sample runs out of memory the same way on any GPU); then seeds
    torch with 0 and makes, in this order, the model, its SGD optimizer,
    the loss and one batch of args.batch random images with their labels.
    Returns them as a namespace (dev, model, optimizer, loss_fn, images,
    labels)."""
    dev = torch.device("cuda")
    if cap_gib is not None:
        torch_truth.cap_memory(cap_gib)
    torch.manual_seed(0)
    model = torchvision.models.resnet18(num_classes=100).to(dev)
    return types.SimpleNamespace(
        dev=dev,
        model=model,
        optimizer=torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9),
        loss_fn=torch.nn.CrossEntropyLoss(),
        images=torch.randn(args.batch, 3, args.size, args.size, device=dev),
        labels=torch.randint(0, 100, (args.batch,), device=dev))


def train_step(run):
    """One plain training step of run (from setup) on its batch: forward,
    backward, optimizer step; returns the loss as a float."""
    run.optimizer.zero_grad(set_to_none=True)
    loss = run.loss_fn(run.model(run.images), run.labels)
    loss.backward()
    run.optimizer.step()
    return loss.item()


@contextlib.contextmanager
def nvtx_range(name):
    """An NVTX range around the with block.  An exception in the block
    leaves the range open, as the samples' traces record it: the step that
    ran out of memory is still open when the program ends."""
    torch.cuda.nvtx.range_push(name)
    yield
    torch.cuda.nvtx.range_pop()


def ranged_steps(steps, step_fn, line):
    """Calls step_fn() steps times, each call in an NVTX range "step N",
    and prints line % (N, what step_fn returned) after each."""
    for step in range(steps):
        with nvtx_range("step %d" % step):
            result = step_fn()
        print(line % (step, result), flush=True)


def train_and_evaluate(run, step, evaluate):
    """Step number step of a loop that validates after every training
    step: train_step(run) in an NVTX range "train", then evaluate() in a
    range "evaluate", both inside a range "step N" that ends once the GPU
    has finished them.  Returns the loss and what evaluate() returned."""
    with nvtx_range("step %d" % step):
        with nvtx_range("train"):
            loss = train_step(run)
        with nvtx_range("evaluate"):
            result = evaluate()
        torch.cuda.synchronize()
    return loss, result
# SPDX-License-Identifier: MIT

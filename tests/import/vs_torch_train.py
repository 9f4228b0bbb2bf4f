# SPDX-License-Identifier: MIT
"""vs_torch_train.py — the training step the snapshot makers
(make-snapshots.py, make-snapshot-corpus.py) run on a GPU: random inputs,
a classification loss over 10 classes, an optimizer step."""


def train(torch, model, opt, steps, batch, features):
    """Runs steps steps of model with opt on random batches of batch rows
    of features inputs (labels of 10 classes), on the GPU; returns once
    the GPU finished them."""
    for _ in range(steps):
        x = torch.randn(batch, features, device="cuda")
        y = torch.randint(0, 10, (batch,), device="cuda")
        loss = torch.nn.functional.cross_entropy(model(x), y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
    torch.cuda.synchronize()

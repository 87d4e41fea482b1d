#!/usr/bin/env python3
"""A small real trainer: an MLP on scikit-learn's bundled digits data set.

It reads its hyperparameters from the command line (as `sweep` renders
them) and reports each epoch's metrics through the sweep package
(examples/clients/python/sweep.py): to $SWEEP_METRICS_URL when sweep set
it, else as `@metrics` lines on stdout. It checkpoints into $SWEEP_CHECKPOINT_DIR each
epoch, so that a retried or resumed trial picks up where it stopped.

When the sweep answers that the run should stop (an early-stopping rule),
it keeps its checkpoint and exits 0. On SIGTERM it saves where it is, in
the middle of an epoch if need be, and exits 143 (128 + SIGTERM), so that
a preempted trial is retried rather than taken as finished.
"""
import argparse
import ast
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "clients", "python"))
import sweep  # noqa: E402

import torch  # noqa: E402
from sklearn.datasets import load_digits  # noqa: E402
from sklearn.model_selection import train_test_split  # noqa: E402


def parse():
    p = argparse.ArgumentParser()
    p.add_argument("--lr", type=float, default=0.01)
    p.add_argument("--batch_size", type=int, default=64)
    p.add_argument("--hidden", type=int, default=64)
    p.add_argument("--dropout", type=float, default=0.0)
    p.add_argument("--epochs", type=int, default=8)
    p.add_argument("--optimizer", type=str, default="{'name': 'adam'}")
    return p.parse_args()


def save(path, model, optim, epoch, perm=None, next_batch=0):
    """Writes the checkpoint atomically. `epoch` epochs are complete; with
    `perm`, the next one is under way at batch offset `next_batch`."""
    state = {"model": model.state_dict(), "optim": optim.state_dict(),
             "epoch": epoch, "rng": torch.get_rng_state()}
    if perm is not None:
        state.update(perm=perm, next=next_batch)
    torch.save(state, path + ".tmp")
    os.replace(path + ".tmp", path)


def main():
    a = parse()
    sweep.handle_sigterm()
    opt = ast.literal_eval(a.optimizer) if a.optimizer.startswith("{") else {"name": a.optimizer}
    torch.manual_seed(0)
    x, y = load_digits(return_X_y=True)
    xtr, xva, ytr, yva = train_test_split(x / 16.0, y, test_size=0.25, random_state=0)
    xtr, xva = torch.tensor(xtr, dtype=torch.float32), torch.tensor(xva, dtype=torch.float32)
    ytr, yva = torch.tensor(ytr), torch.tensor(yva)
    model = torch.nn.Sequential(
        torch.nn.Linear(64, a.hidden), torch.nn.ReLU(), torch.nn.Dropout(a.dropout),
        torch.nn.Linear(a.hidden, 10))
    if opt.get("name") == "sgd":
        optim = torch.optim.SGD(model.parameters(), lr=a.lr, momentum=float(opt.get("momentum", 0.0)))
    else:
        optim = torch.optim.Adam(model.parameters(), lr=a.lr)
    ckpt = os.path.join(os.environ.get("SWEEP_CHECKPOINT_DIR", "."), "model.pt")
    start, perm, first = 0, None, 0
    if os.path.exists(ckpt):
        state = torch.load(ckpt)
        model.load_state_dict(state["model"])
        optim.load_state_dict(state["optim"])
        start = state["epoch"]
        if "rng" in state:
            torch.set_rng_state(state["rng"])
        perm, first = state.get("perm"), state.get("next", 0)
    lossf = torch.nn.CrossEntropyLoss()
    for epoch in range(start, a.epochs):
        model.train()
        if perm is None:
            perm, first = torch.randperm(len(xtr)), 0
        for i in range(first, len(xtr), a.batch_size):
            if sweep.terminated():
                save(ckpt, model, optim, epoch, perm, i)
                print("train_mlp: SIGTERM in epoch %d: checkpoint saved" % (epoch + 1),
                      file=sys.stderr)
                return 143
            idx = perm[i:i + a.batch_size]
            optim.zero_grad()
            lossf(model(xtr[idx]), ytr[idx]).backward()
            optim.step()
        perm = None
        model.eval()
        with torch.no_grad():
            out = model(xva)
            val_loss = lossf(out, yva).item()
            acc = (out.argmax(1) == yva).float().mean().item()
        # Report, then checkpoint: a crash in between repeats the epoch
        # (restored RNG, same values) rather than leave a step unreported.
        stop = sweep.report(step=epoch + 1, val_loss=val_loss, val_acc=acc)
        save(ckpt, model, optim, epoch + 1)
        if stop:
            if sweep.terminated():
                print("train_mlp: SIGTERM after epoch %d: checkpoint saved" % (epoch + 1),
                      file=sys.stderr)
                return 143
            print("train_mlp: the sweep stopped this run after epoch %d" % (epoch + 1),
                  file=sys.stderr)
            return 0
    return 0


if __name__ == "__main__":
    sys.exit(main())

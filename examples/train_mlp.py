#!/usr/bin/env python3
"""A small real trainer: an MLP on scikit-learn's bundled digits data set.

It reads its hyperparameters from the command line (as `sweep` renders
them), reports `@metrics` lines on stdout, and checkpoints into
$SWEEP_CHECKPOINT_DIR each epoch so that a retried or resumed trial picks
up where it stopped.
"""
import argparse
import ast
import json
import os
import sys

import torch
from sklearn.datasets import load_digits
from sklearn.model_selection import train_test_split


def parse():
    p = argparse.ArgumentParser()
    p.add_argument("--lr", type=float, default=0.01)
    p.add_argument("--batch_size", type=int, default=64)
    p.add_argument("--hidden", type=int, default=64)
    p.add_argument("--dropout", type=float, default=0.0)
    p.add_argument("--epochs", type=int, default=8)
    p.add_argument("--optimizer", type=str, default="{'name': 'adam'}")
    return p.parse_args()


def main():
    a = parse()
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
    start = 0
    if os.path.exists(ckpt):
        state = torch.load(ckpt)
        model.load_state_dict(state["model"])
        optim.load_state_dict(state["optim"])
        start = state["epoch"]
    lossf = torch.nn.CrossEntropyLoss()
    for epoch in range(start, a.epochs):
        model.train()
        perm = torch.randperm(len(xtr))
        for i in range(0, len(xtr), a.batch_size):
            idx = perm[i:i + a.batch_size]
            optim.zero_grad()
            lossf(model(xtr[idx]), ytr[idx]).backward()
            optim.step()
        model.eval()
        with torch.no_grad():
            out = model(xva)
            val_loss = lossf(out, yva).item()
            acc = (out.argmax(1) == yva).float().mean().item()
        print("@metrics " + json.dumps({"step": epoch + 1, "val_loss": val_loss, "val_acc": acc}), flush=True)
        torch.save({"model": model.state_dict(), "optim": optim.state_dict(), "epoch": epoch + 1}, ckpt + ".tmp")
        os.replace(ckpt + ".tmp", ckpt)
    return 0


if __name__ == "__main__":
    sys.exit(main())

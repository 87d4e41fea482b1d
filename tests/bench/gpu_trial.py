#!/usr/bin/env python3
"""A small PyTorch trial for tests/bench/gpu_packing.sh: an MLP trained on
synthetic data on the GPU CUDA_VISIBLE_DEVICES gives it, for a fixed
number of steps. Small on purpose: one such trial leaves a large GPU
mostly idle, which is what packing is for."""
import argparse

import torch


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--steps", type=int, default=3000)
    p.add_argument("--hidden", type=int, default=1024)
    a = p.parse_args()
    torch.manual_seed(a.seed)
    dev = torch.device("cuda")
    x = torch.randn(16384, 512, device=dev)
    y = (x @ torch.randn(512, 10, device=dev)).argmax(1)
    model = torch.nn.Sequential(
        torch.nn.Linear(512, a.hidden), torch.nn.ReLU(),
        torch.nn.Linear(a.hidden, a.hidden), torch.nn.ReLU(),
        torch.nn.Linear(a.hidden, 10)).to(dev)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    for step in range(a.steps):
        idx = torch.randint(0, x.shape[0], (256,), device=dev)
        loss = torch.nn.functional.cross_entropy(model(x[idx]), y[idx])
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        if step % 1000 == 999:
            print('@metrics {"step": %d, "loss": %.5f}' % (step, loss.item()),
                  flush=True)


if __name__ == "__main__":
    main()

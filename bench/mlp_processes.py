"""The MLP training step of issue 16, each contender alone in its own process.

Run: ``.venv/bin/python bench/mlp_processes.py`` (about a minute; ``--rounds 2`` for a smoke run).

``bench/stack.py`` times minidl and torch in one process, in alternating blocks. This script
takes the other route, the one issue 16's harness takes: a fresh Python process per contender
and round (torch, minidl, torch, minidl, ...), so no thread pool, allocator or cache state of
one library is left for the other. Each process builds the same MLP 784-256-10 on the same
batch of 128, warms up, then times ``steps`` training steps (forward, cross-entropy, backward,
SGD) in several samples and prints the median sample. The table gives, per contender, the
median over rounds and the best round, and the ratio minidl / torch (<= 1 is the target).
The instruction set numba compiles for is printed with the figures.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from minidl_book.peers import environment_pins, unpinned_env  # noqa: E402

_COMMON = """
import time, statistics, numpy as np
rng = np.random.default_rng(0)
x = rng.standard_normal((128, 784)).astype(np.float32)
y = rng.integers(0, 10, 128).astype(np.int64)
def timed(step, steps, samples=7):
    for _ in range(30):
        step()
    out = []
    for _ in range(samples):
        t0 = time.perf_counter()
        for _ in range(steps):
            step()
        out.append((time.perf_counter() - t0) / steps)
    return statistics.median(out)
"""

_TORCH = _COMMON + """
import torch
torch.set_num_threads({threads})
model = torch.nn.Sequential(torch.nn.Linear(784, 256), torch.nn.ReLU(), torch.nn.Linear(256, 10))
opt = torch.optim.SGD(model.parameters(), lr=0.01)
loss_fn, tx, ty = torch.nn.CrossEntropyLoss(), torch.from_numpy(x), torch.from_numpy(y)
def step():
    opt.zero_grad()
    loss_fn(model(tx), ty).backward()
    opt.step()
print(timed(step, {steps}))
"""

_MINIDL = _COMMON + """
from minidl.dispatch import Device
from minidl.nn import CrossEntropyLossConfig, LinearConfig, Relu, Sequential
from minidl.optim import SgdConfig
from minidl.tensor import Tensor
device = Device.flex().autodiff()
state = {{"model": Sequential(LinearConfig(784, 256).init(device), Relu(),
                             LinearConfig(256, 10).init(device))}}
loss_fn, optim = CrossEntropyLossConfig().init(), SgdConfig().init()
tx, ty = Tensor.from_numpy(x, device=device), Tensor.from_numpy(y, device=device)
def step():
    model = state["model"]
    state["model"] = optim.step(0.01, model, loss_fn(model(tx), ty).backward())
print(timed(step, {steps}))
"""

_REPORT = """
import torch
torch.set_num_threads({threads})
from minidl_book.peers import format_peer_report
print(format_peer_report())
"""


def run(source: str, threads: int) -> float:
    """Seconds per step, as printed by a fresh process running ``source``."""
    env = unpinned_env(PYTHONPATH=str(ROOT), NUMBA_NUM_THREADS=str(threads), OMP_NUM_THREADS=str(threads))
    env.setdefault("NUMBA_CACHE_DIR", str(ROOT / ".numba_cache"))
    out = subprocess.run([sys.executable, "-c", source], env=env, capture_output=True, text=True,
                         check=True, cwd=ROOT)
    return float(out.stdout.split()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5, help="processes per contender")
    parser.add_argument("--steps", type=int, default=100, help="steps per timed sample")
    parser.add_argument("--threads", type=int, default=2, help="threads for numba and torch")
    args = parser.parse_args()
    from minidl.backends.flex.kernels.isa import ISA

    times: dict[str, list[float]] = {"torch": [], "minidl flex().autodiff()": []}
    for _ in range(args.rounds):
        times["torch"].append(run(_TORCH.format(threads=args.threads, steps=args.steps), args.threads))
        times["minidl flex().autodiff()"].append(run(_MINIDL.format(steps=args.steps), args.threads))
    print(f"MLP 784-256-10 step, batch 128, {args.threads} thread(s), one process per contender and "
          f"round ({args.rounds} rounds); numba compiles for {ISA}; load {os.getloadavg()[0]:.2f}")
    base = statistics.median(times["torch"])
    for name, ts in times.items():
        med = statistics.median(ts)
        print(f"  {name:<26} median {med * 1e6:8.1f} us  best {min(ts) * 1e6:8.1f} us  "
              f"ratio {med / base:.2f}")
    print("target: minidl / torch <= 1 (issue 16)")
    # what a child process (the same environment as the timed ones) runs with
    env = unpinned_env(PYTHONPATH=str(ROOT), NUMBA_NUM_THREADS=str(args.threads), OMP_NUM_THREADS=str(args.threads))
    env.setdefault("NUMBA_CACHE_DIR", str(ROOT / ".numba_cache"))
    report = subprocess.run([sys.executable, "-c", _REPORT.format(threads=args.threads)], env=env,
                            capture_output=True, text=True, check=True, cwd=ROOT).stdout.strip()
    print("peers (in a child process like the timed ones): " + report.replace("\n", "\n  "))
    if environment_pins():
        print(f"(this process inherited {environment_pins()}; the children ran without it)")


if __name__ == "__main__":
    main()

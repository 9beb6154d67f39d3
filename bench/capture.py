"""The captured training step (``minidl.capture``) against eager minidl, torch eager and
``torch.compile``, each contender alone in its own process.

Run: ``.venv/bin/python bench/capture.py`` (a few minutes; ``--rounds 1 --steps 20`` for a
smoke run). Workloads are ``minidl_book.workloads``' two steps: the MLP 784-256-10 (batch 128,
SGD) and the training chapter's digits CNN (batch 32, Adam). Every contender reads the loss
back each step, as the torch step (``loss.item()``) and the chapter's loop do. Each process
gets ``minidl_book.peers.unpinned_env()`` with both libraries' thread counts set to
``--threads``, warms up, and prints the median of several timed samples; the table gives
the median over rounds and the ratio to torch eager, which runs torch's fused optimizer
(``minidl_book.workloads.TORCH_BEST_IMPL``: ``Adam(fused=True)``, ``SGD(fused=True)``).
Targets (issue 32): captured MLP <= 0.6x torch eager, captured CNN <= 0.8x. ``bench/steps.py``
times the same contenders beside torch's default optimizer, ranked against torch at its best.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

#: each minidl contender names its device: ``flex`` or ``fusion`` (both with autodiff)
CONTENDERS = ("torch eager", "torch.compile", "minidl eager", "minidl captured",
              "minidl fusion eager", "minidl fusion captured")
TARGETS = {"mlp": 0.6, "cnn": 0.8}


def _timed(step, steps: int, samples: int = 5) -> float:
    for _ in range(10):
        step()
    out = []
    for _ in range(samples):
        t0 = time.perf_counter()
        for _ in range(steps):
            step()
        out.append((time.perf_counter() - t0) / steps)
    return statistics.median(out)


def device_of(contender: str):
    """``Device.fusion().autodiff()`` for the fusion contenders, else ``flex().autodiff()``."""
    from minidl import Device

    return (Device.fusion() if "fusion" in contender else Device.flex()).autodiff()


def child(workload: str, contender: str, steps: int) -> None:
    from minidl_book import workloads
    from minidl_book.capture_lab import captured_step

    mini, torch_build = workloads.WORKLOADS[workload]
    if contender == "torch eager":
        step = torch_build(False)
    elif contender == "torch.compile":
        step = torch_build(True)
    elif contender.endswith("eager"):
        step = mini(device_of(contender))
    else:
        step, _ = captured_step(workload, device_of(contender))
    print(_timed(step, steps))


def run(workload: str, contender: str, steps: int, threads: int) -> float | None:
    from minidl_book.peers import unpinned_env

    env = unpinned_env(PYTHONPATH=str(ROOT), NUMBA_NUM_THREADS=str(threads), OMP_NUM_THREADS=str(threads),
                       MKL_NUM_THREADS=str(threads))
    env.setdefault("NUMBA_CACHE_DIR", str(ROOT / ".numba_cache"))
    out = subprocess.run([sys.executable, __file__, "--child", workload, contender, "--steps", str(steps)],
                         env=env, capture_output=True, text=True, cwd=ROOT)
    if out.returncode != 0:
        print(f"  ({contender} on {workload} failed: {out.stderr.strip().splitlines()[-1:]})")
        return None
    return float(out.stdout.split()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--steps", type=int, default=50)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--workloads", default="mlp,cnn")
    parser.add_argument("--child", nargs=2, metavar=("WORKLOAD", "CONTENDER"))
    args = parser.parse_args()
    if args.child:
        child(*args.child, args.steps)
        return
    os.environ.update(NUMBA_NUM_THREADS=str(args.threads), OMP_NUM_THREADS=str(args.threads))
    import torch

    torch.set_num_threads(args.threads)
    from minidl_book.peers import format_peer_report

    print(format_peer_report())
    print(f"load before: {os.getloadavg()[0]:.2f}")
    for workload in args.workloads.split(","):
        times: dict[str, list[float]] = {c: [] for c in CONTENDERS}
        for _ in range(args.rounds):
            for contender in CONTENDERS:
                t = run(workload, contender, args.steps, args.threads)
                if t is not None:
                    times[contender].append(t)
        base = statistics.median(times["torch eager"])
        print(f"\n{workload}: one process per contender and round ({args.rounds} rounds, "
              f"{args.threads} threads), load {os.getloadavg()[0]:.2f}")
        for name, ts in times.items():
            if ts:
                med = statistics.median(ts)
                print(f"  {name:<22} median {med * 1e6:9.1f} us  best {min(ts) * 1e6:9.1f} us  "
                      f"ratio to torch eager {med / base:.2f}")
        ratios = {name: statistics.median(times[name]) / base
                  for name in ("minidl captured", "minidl fusion captured") if times[name]}
        for name, ratio in ratios.items():
            print(f"  {name} / torch eager = {ratio:.2f}")
        if ratios:
            print(f"  best captured / torch eager = {min(ratios.values()):.2f} "
                  f"(target <= {TARGETS[workload]})")


if __name__ == "__main__":
    main()

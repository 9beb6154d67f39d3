"""Fusion on the GPU (issue 41): the fusion chapter's 8-op chain on ``Device.fusion_wgpu()``
(``Fusion[Wgpu]``: one generated WGSL kernel) against eager ``Device.wgpu()`` (one dispatch per
op), read back as one number, swept over sizes, each size in a fresh process; then two training
steps (the capture tests' MLP, the training chapter's digits CNN, both Adam with dropout) on
eager ``Device.wgpu().autodiff()``, on ``Device.fusion_wgpu().autodiff()``, and captured there
(``minidl.capture``: the step's dispatches replayed in one pass), each workload in a fresh
process (targets: the CNN step fused >= 2x faster with >= 3x fewer dispatches; captured faster
again).

Run: ``.venv/bin/python bench/gpu_fusion.py`` (``--quick`` for fewer sizes and repeats). It
prints the adapter, then per size the median and best time of one call (the chain, then
element 0 read back: a sync and a 4-byte read), the dispatches each call makes, and
``eager / fused`` (> 1: fusion is faster). Targets: >= 5x from 64K elements, >= 2x at 4K.

Contenders run in alternating blocks of repeats in one process per size, so both see the same
machine; the machine is shared and noisy (say so when quoting). Printed, never asserted.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("NUMBA_CACHE_DIR", str(ROOT / ".numba_cache"))

SIZES = (1 << 12, 1 << 14, 1 << 16, 1 << 18, 1 << 20)


def child(n: int, budget: float, rounds: int) -> dict:
    """One size, measured in this (fresh) process."""
    import numpy as np

    from minidl import Device, Tensor
    from minidl.backends.wgpu.runtime import runtime
    from minidl_book.fusion_sweep import chain

    data = np.random.default_rng(0).standard_normal(n).astype(np.float32)
    devices = {"eager": Device.wgpu(), "fused": Device.fusion_wgpu()}
    xs = {name: Tensor.from_numpy(data, dev) for name, dev in devices.items()}

    def call(x) -> float:
        return chain(x).slice([slice(0, 1)]).into_scalar()  # the chain, then one number read back

    values = {name: call(x) for name, x in xs.items()}
    assert values["eager"] == values["fused"], values
    rt = runtime(0)
    dispatches = {}
    for name, x in xs.items():
        call(x)  # warm: pipelines compiled, the plan searched
        with rt.record_dispatches() as made:
            call(x)
        dispatches[name] = len(made)
    reps = {}
    for name, x in xs.items():
        t0 = time.perf_counter()
        call(x)
        reps[name] = int(
            min(max(3, budget / rounds / 2 / max(time.perf_counter() - t0, 1e-6)), 400)
        )
    times: dict[str, list[float]] = {name: [] for name in xs}
    for _ in range(rounds):
        for name, x in xs.items():
            for _ in range(reps[name]):
                t0 = time.perf_counter()
                call(x)
                times[name].append(time.perf_counter() - t0)
    return {
        "n": n,
        "adapter": rt.adapter_name,
        "dispatches": dispatches,
        "median": {k: float(np.median(v)) for k, v in times.items()},
        "best": {k: float(np.min(v)) for k, v in times.items()},
    }


def step_child(workload: str, budget: float, rounds: int) -> dict:
    """A training step (``mlp``: the capture tests' MLP, Adam, dropout 0.3; ``cnn``: the
    training chapter's digits CNN, Adam, dropout 0.2) on eager GPU, fused, and captured on the
    fused device, measured in this (fresh) process."""
    import numpy as np

    from minidl import Device
    from minidl.backends.wgpu.runtime import runtime
    from minidl.capture import capture

    if workload == "mlp":
        from tests.capture.helpers import Trainer, batches

        def make(device):
            return Trainer("adam", dropout=0.3, device=device)

        def data(device):
            return batches(1, device=device)[0]
    else:
        from tests.gpu.capture_steps import CnnTrainer, cnn_batches

        make = CnnTrainer

        def data(device):
            return cnn_batches(1, device)[0]

    rt = runtime(0)
    fused, eager = Device.fusion_wgpu().autodiff(), Device.wgpu().autodiff()
    runs = {}
    for name, device in (("eager GPU", eager), ("fused", fused), ("captured", fused)):
        trainer, (x, y) = make(device), data(device)
        if name == "captured":
            graph = capture(fused, trainer.step, x, y, 1e-3, optimizers=[trainer.optim])
            runs[name] = lambda graph=graph, x=x, y=y: graph.replay(x, y, 1e-3).to_numpy()
        else:
            runs[name] = lambda trainer=trainer, x=x, y=y: trainer.step(x, y, 1e-3).to_numpy()
    dispatches, one = {}, {}
    for name, run in runs.items():
        run()
        run()  # warm: pipelines compiled, plans searched
        start = rt.dispatches
        t0 = time.perf_counter()
        run()
        one[name] = max(time.perf_counter() - t0, 1e-6)
        dispatches[name] = rt.dispatches - start
    times: dict[str, list[float]] = {name: [] for name in runs}
    for _ in range(rounds):
        for name, run in runs.items():
            for _ in range(int(min(max(2, budget / rounds / len(runs) / one[name]), 200))):
                t0 = time.perf_counter()
                run()
                times[name].append(time.perf_counter() - t0)
    return {
        "workload": workload,
        "adapter": rt.adapter_name,
        "dispatches": dispatches,
        "median": {k: float(np.median(v)) for k, v in times.items()},
        "best": {k: float(np.min(v)) for k, v in times.items()},
    }


def fmt(s: float) -> str:
    return f"{s * 1e6:9.1f} us" if s < 1e-3 else f"{s * 1e3:9.2f} ms"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="three sizes, smaller budgets")
    ap.add_argument("--child", type=int, default=None, help=argparse.SUPPRESS)
    ap.add_argument("--step-child", default=None, help=argparse.SUPPRESS)
    ap.add_argument(
        "--budget", type=float, default=None, help="seconds per size (default 3, --quick 1)"
    )
    args = ap.parse_args()
    budget = args.budget or (1.0 if args.quick else 3.0)
    rounds = 3 if args.quick else 5
    if args.child is not None:
        print(json.dumps(child(args.child, budget, rounds)))
        return
    if args.step_child:
        print(json.dumps(step_child(args.step_child, budget * 2, rounds)))
        return
    sizes = (1 << 12, 1 << 16, 1 << 20) if args.quick else SIZES
    rows = []
    for n in sizes:
        out = subprocess.run(
            [sys.executable, __file__, "--child", str(n), "--budget", str(budget)]
            + (["--quick"] if args.quick else []),
            capture_output=True,
            text=True,
            check=True,
            env={**os.environ, "PYTHONPATH": str(ROOT)},
        )
        rows.append(json.loads(out.stdout.strip().splitlines()[-1]))
    print(
        f"# the 8-op chain on the GPU, fused (Device.fusion_wgpu()) vs eager (Device.wgpu()), "
        f"read back as one number; adapter: {rows[0]['adapter']}; load average {os.getloadavg()[0]:.2f}"
    )
    print(
        "(each size in a fresh process; median over alternating blocks; a shared machine: ratios within a row "
        "are comparable)\n"
    )
    print(
        f"{'elements':>10} {'eager':>12} {'fused':>12} {'dispatches e/f':>15} {'eager / fused':>14} "
        f"{'(best e/f)':>11}"
    )
    for r in rows:
        ratio = r["median"]["eager"] / r["median"]["fused"]
        best = r["best"]["eager"] / r["best"]["fused"]
        d = r["dispatches"]
        print(
            f"{r['n']:>10} {fmt(r['median']['eager'])} {fmt(r['median']['fused'])} "
            f"{d['eager']:>7} / {d['fused']:<5} {ratio:>14.2f} {best:>11.2f}"
        )
    print("\ntargets: eager / fused >= 5 from 64K elements, >= 2 at 4K")
    steps = []
    for workload in ("mlp", "cnn"):
        out = subprocess.run(
            [sys.executable, __file__, "--step-child", workload, "--budget", str(budget)]
            + (["--quick"] if args.quick else []),
            capture_output=True,
            text=True,
            check=True,
            env={**os.environ, "PYTHONPATH": str(ROOT)},
        )
        steps.append(json.loads(out.stdout.strip().splitlines()[-1]))
    print(
        "\n# training steps (the loss read back every step) on eager GPU, fused, and captured on the "
        "fused device; each workload in a fresh process\n"
    )
    print(
        f"{'step':>6} {'eager GPU':>12} {'fused':>12} {'captured':>12} {'dispatches e/f/c':>18} "
        f"{'eager / fused':>14} {'fused / captured':>17}"
    )
    for r in steps:
        m, d = r["median"], r["dispatches"]
        print(
            f"{r['workload']:>6} {fmt(m['eager GPU'])} {fmt(m['fused'])} {fmt(m['captured'])} "
            f"{d['eager GPU']:>8}/{d['fused']}/{d['captured']:<5} {m['eager GPU'] / m['fused']:>14.2f} "
            f"{m['fused'] / m['captured']:>17.2f}"
        )
    cnn = steps[-1]["dispatches"]
    print(
        f"\ntargets: the CNN step eager / fused >= 2 with >= 3x fewer dispatches (here "
        f"{cnn['eager GPU'] / cnn['fused']:.1f}x); the captured step faster again"
    )


if __name__ == "__main__":
    main()

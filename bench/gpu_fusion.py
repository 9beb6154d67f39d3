"""Fusion on the GPU (issue 41): the fusion chapter's 8-op chain on ``Device.fusion_wgpu()``
(``Fusion[Wgpu]``: one generated WGSL kernel) against eager ``Device.wgpu()`` (one dispatch per
op), read back as one number, swept over sizes, each size in a fresh process; then the training
chapter's CNN step (digits, batch 32, Adam) on ``Device.fusion_wgpu().autodiff()`` against
``Device.wgpu().autodiff()``, in a fresh process too (targets: >= 2x faster, >= 3x fewer dispatches).

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


def cnn_child(budget: float, rounds: int) -> dict:
    """The CNN training step on both GPU devices, measured in this (fresh) process."""
    import numpy as np

    from minidl import Device
    from minidl.backends.wgpu.runtime import runtime
    from minidl_book.workloads import minidl_cnn_step

    rt = runtime(0)
    steps, dispatches = {}, {}
    for name, dev in (("eager", Device.wgpu()), ("fused", Device.fusion_wgpu())):
        step = steps[name] = minidl_cnn_step(dev.autodiff())
        step()
        step()  # warm: pipelines compiled, the plans searched
        with rt.record_dispatches() as made:
            step()
        dispatches[name] = len(made)
    times: dict[str, list[float]] = {name: [] for name in steps}
    one = {}
    for name, step in steps.items():
        t0 = time.perf_counter()
        step()
        one[name] = max(time.perf_counter() - t0, 1e-6)
    for _ in range(rounds):
        for name, step in steps.items():
            for _ in range(int(min(max(2, budget / rounds / 2 / one[name]), 100))):
                t0 = time.perf_counter()
                step()  # the loss is read back: a sync per step
                times[name].append(time.perf_counter() - t0)
    return {
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
    ap.add_argument("--cnn-child", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument(
        "--budget", type=float, default=None, help="seconds per size (default 3, --quick 1)"
    )
    args = ap.parse_args()
    budget = args.budget or (1.0 if args.quick else 3.0)
    rounds = 3 if args.quick else 5
    if args.child is not None:
        print(json.dumps(child(args.child, budget, rounds)))
        return
    if args.cnn_child:
        print(json.dumps(cnn_child(budget * 2, rounds)))
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
    out = subprocess.run(
        [sys.executable, __file__, "--cnn-child", "--budget", str(budget)]
        + (["--quick"] if args.quick else []),
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    r = json.loads(out.stdout.strip().splitlines()[-1])
    d = r["dispatches"]
    print(
        "\n# the CNN training step (digits, batch 32, Adam), fused vs eager GPU, a fresh process\n"
    )
    print(
        f"{'':>10} {'eager':>12} {'fused':>12} {'dispatches e/f':>15} {'eager / fused':>14} {'(best e/f)':>11}"
    )
    print(
        f"{'step':>10} {fmt(r['median']['eager'])} {fmt(r['median']['fused'])} {d['eager']:>7} / {d['fused']:<5} "
        f"{r['median']['eager'] / r['median']['fused']:>14.2f} {r['best']['eager'] / r['best']['fused']:>11.2f}"
    )
    print(
        f"\ntargets: eager / fused >= 2, dispatches >= 3x fewer (here {d['eager'] / d['fused']:.1f}x)"
    )


if __name__ == "__main__":
    main()

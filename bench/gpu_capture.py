"""Capture on the fused GPU device (issue 41): a training step captured on
``Device.fusion_wgpu().autodiff()`` (its dispatches replayed in one compute pass) against the
same step run eagerly on that device (recorded, fused, drained every step) and on eager
``Device.wgpu().autodiff()``, each step's loss read back (a sync per step).

Run: ``.venv/bin/python bench/gpu_capture.py`` (``--quick``: smaller budgets). Each workload
runs in a fresh process; the contenders alternate in blocks within it, so they see the same
machine (shared and noisy: say the load when quoting). It prints the adapter, the median step
time and dispatches per step of each, and the ratios (> 1: the captured step is faster).
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


def child(workload: str, budget: float, rounds: int) -> dict:
    """One workload's three contenders, measured in this (fresh) process."""
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
    ap.add_argument("--quick", action="store_true", help="smaller budgets")
    ap.add_argument("--child", default=None, help=argparse.SUPPRESS)
    ap.add_argument("--budget", type=float, default=None, help="seconds per workload (default 6, --quick 2)")
    args = ap.parse_args()
    budget = args.budget or (2.0 if args.quick else 6.0)
    rounds = 3 if args.quick else 5
    if args.child:
        print(json.dumps(child(args.child, budget, rounds)))
        return
    rows = []
    for workload in ("mlp", "cnn"):
        out = subprocess.run([sys.executable, __file__, "--child", workload, "--budget", str(budget)]
                             + (["--quick"] if args.quick else []), capture_output=True, text=True,
                             check=True, env={**os.environ, "PYTHONPATH": str(ROOT)})
        rows.append(json.loads(out.stdout.strip().splitlines()[-1]))
    print(f"# a training step captured on the fused GPU device vs run eagerly there and on eager GPU; "
          f"adapter: {rows[0]['adapter']}; load average {os.getloadavg()[0]:.2f}")
    print("(each workload in a fresh process; median over alternating blocks; the loss read back every step)\n")
    print(f"{'step':>6} {'eager GPU':>12} {'fused':>12} {'captured':>12} {'dispatches e/f/c':>18} "
          f"{'fused / captured':>17} {'eager / captured':>17}")
    for r in rows:
        m, d = r["median"], r["dispatches"]
        print(f"{r['workload']:>6} {fmt(m['eager GPU'])} {fmt(m['fused'])} {fmt(m['captured'])} "
              f"{d['eager GPU']:>6}/{d['fused']}/{d['captured']:<6} {m['fused'] / m['captured']:>17.2f} "
              f"{m['eager GPU'] / m['captured']:>17.2f}")


if __name__ == "__main__":
    main()

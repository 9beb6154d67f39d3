"""The MLP step beside a competing CPU-bound process (issue 38's "steps that keep their speed
under load"), flex eager against torch at its best, per thread policy.

Run: ``PYTHONPATH=. .venv/bin/python bench/under_load.py`` (a few minutes; ``--rounds 1``).

For each policy (threads, numba's threading layer, the OpenMP wait policy) and each contender
(minidl on ``Device.flex().autodiff()``, torch eager with its fused SGD), a fresh process runs
the MLP 784-256-10 step (``minidl_book.workloads``, b128, SGD): ``--warmup`` steps, then
``--steps`` timed ones (200), first alone, then beside ``python -c "while True: pass"`` (pinned
nowhere, started just before and killed just after). It prints the mean step (wall clock: a
step that waits for a core is slower, which is the point here), the slowdown, and the worst
run of 20 consecutive steps (a worker spinning for a core it does not get shows there).

The machine this runs on may be shared: the load average is printed before each measurement,
and ``--rounds`` repeats the whole grid so the spread shows. Rows are comparable only within
one round.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from minidl_book.peers import unpinned_env  # noqa: E402

CHILD = """
import json, time
import numpy as np, numba, torch
from minidl import Device
import minidl.backends.flex  # its kernels start numba's workers with minidl's wait policy
from minidl_book.workloads import minidl_mlp_step, torch_mlp_step
contender = {contender!r}
numba.set_num_threads({threads})
torch.set_num_threads({threads})
step = torch_mlp_step() if contender == "torch" else minidl_mlp_step(Device.flex().autodiff())
for _ in range({warmup}):
    step()
times = []
for _ in range({steps}):
    t0 = time.perf_counter()
    step()
    times.append(time.perf_counter() - t0)
runs = [sum(times[i:i + 20]) / 20 for i in range(0, len(times) - 19, 20)]
print("RESULT " + json.dumps({{"mean": sum(times) / len(times), "worst20": max(runs),
                              "layer": numba.threading_layer() if numba.get_num_threads() > 1 else "-"}}))
"""

#: name -> (threads, environment); each is applied to both contenders
POLICIES = {
    "1 thread": (1, {}),
    # libgomp's own default: OMP_WAIT_POLICY unset spins 300,000 rounds (about 3 ms) per region;
    # the explicit count keeps it for numba's workers too, which minidl otherwise makes passive
    "2 threads, libgomp default spin (both)": (2, {"NUMBA_THREADING_LAYER": "omp", "GOMP_SPINCOUNT": "300000"}),
    "2 threads, minidl's choice (numba passive)": (2, {"NUMBA_THREADING_LAYER": "omp"}),
    "2 threads, OMP_WAIT_POLICY=PASSIVE (both)": (2, {"NUMBA_THREADING_LAYER": "omp", "OMP_WAIT_POLICY": "PASSIVE"}),
    "2 threads, GOMP_SPINCOUNT=10000 (both)": (2, {"NUMBA_THREADING_LAYER": "omp", "GOMP_SPINCOUNT": "10000"}),
    "2 threads, numba workqueue": (2, {"NUMBA_THREADING_LAYER": "workqueue"}),
}


def run(contender: str, threads: int, env_extra: dict, steps: int, warmup: int) -> dict:
    """One fresh process: the mean step of ``contender`` over ``steps`` steps (seconds)."""
    n = str(threads)
    env = unpinned_env(PYTHONPATH=str(ROOT), OMP_NUM_THREADS=n, MKL_NUM_THREADS=n,
                       OPENBLAS_NUM_THREADS=n, NUMBA_NUM_THREADS=str(max(threads, 2)), **env_extra)
    env.setdefault("NUMBA_CACHE_DIR", str(ROOT / ".numba_cache"))
    source = CHILD.format(contender=contender, threads=threads, steps=steps, warmup=warmup)
    done = subprocess.run([sys.executable, "-c", source], env=env, capture_output=True, text=True, cwd=ROOT)
    lines = [ln for ln in done.stdout.splitlines() if ln.startswith("RESULT ")]
    if not lines:
        return {"error": (done.stderr or done.stdout).strip().splitlines()[-1:]}
    return json.loads(lines[-1][len("RESULT "):])


def beside_competitor(fn):
    """``fn()`` while ``python -c "while True: pass"`` runs (pinned nowhere)."""
    spin = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    try:
        time.sleep(0.2)
        return fn()
    finally:
        spin.kill()
        spin.wait()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--warmup", type=int, default=30)
    parser.add_argument("--policies", default=None, help="semicolon-separated subset of the names")
    args = parser.parse_args()
    policies = {k: v for k, v in POLICIES.items()
                if not args.policies or k in [p.strip() for p in args.policies.split(";")]}
    results: dict[tuple[str, str], list[tuple[float, float, float]]] = {}
    print(f"MLP step, mean of {args.steps} steps (wall), alone and beside one `while True: pass`; "
          f"{os.cpu_count()} CPUs")
    for r in range(args.rounds):
        for name, (threads, env_extra) in policies.items():
            for contender in ("flex", "torch"):
                load = os.getloadavg()[0]
                alone = run(contender, threads, env_extra, args.steps, args.warmup)
                loaded = beside_competitor(lambda c=contender, t=threads, e=env_extra: run(c, t, e, args.steps, args.warmup))
                if "error" in alone or "error" in loaded:
                    print(f"  {name:<42}{contender:<6} error: {alone.get('error') or loaded.get('error')}")
                    continue
                ratio = loaded["mean"] / alone["mean"]
                results.setdefault((name, contender), []).append((alone["mean"], loaded["mean"], ratio))
                print(f"  round {r}  {name:<42}{contender:<6} layer {alone['layer']:<9} alone "
                      f"{alone['mean'] * 1e3:6.2f} ms  loaded {loaded['mean'] * 1e3:6.2f} ms  x{ratio:4.2f}  "
                      f"worst 20 steps {loaded['worst20'] * 1e3:6.2f} ms  (load {load:.1f})", flush=True)
    print("\nmedian over rounds: slowdown beside the competitor (target <= 2x and <= torch's)")
    for name in policies:
        row = []
        for contender in ("flex", "torch"):
            got = results.get((name, contender))
            if got:
                row.append(f"{contender} x{statistics.median(g[2] for g in got):.2f} "
                           f"({statistics.median(g[0] for g in got) * 1e3:.2f} -> "
                           f"{statistics.median(g[1] for g in got) * 1e3:.2f} ms)")
        print(f"  {name:<42}" + "   ".join(row))


if __name__ == "__main__":
    main()

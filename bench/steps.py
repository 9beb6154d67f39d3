"""The book's two training steps, each contender alone in its own process (issue 31).

Run: ``.venv/bin/python bench/steps.py`` (a few minutes; ``--rounds 2 --quick`` for a smoke
run, ``--only cnn`` for one workload, ``--no-compile`` to leave ``torch.compile`` out).

The workloads are ``minidl_book.workloads``: the training chapter's digits CNN (batch 32,
Adam) and the MLP 784-256-10 (batch 128, SGD), each step reading its loss back as a float
(as the chapter's loop does). Contenders: torch eager, ``torch.compile`` (the model compiled
by inductor, which needs only the C compiler, so it works offline), minidl on
``Device.flex().autodiff()`` and on ``Device.fusion().autodiff()``. Every contender runs in a
fresh process per round, the rounds alternating (torch, compile, flex, fusion, torch, ...),
started with ``minidl_book.peers.unpinned_env()`` and the same thread count for numba and
torch (``torch.set_num_threads`` = numba's threads), so no pool or cache state of one is left
for another. Each process warms up, times several samples of ``steps`` steps, and prints
the median sample; the table gives the median over rounds, the best round and ratios.

Beside the times, one step is counted on the minidl devices: the backend calls it makes
(outermost calls into ``Flex`` or ``Fusion[Flex]``), and on the fusion device the stream's
drains (sync points that ran something) and the kernels it launched. Printed, never
asserted: the machine is shared (the load is printed with the table).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

CONTENDERS = ("torch eager", "torch.compile", "flex().autodiff()", "fusion().autodiff()")

_CHILD = """
import json, statistics, time
import numba, torch
numba.set_num_threads({threads}); torch.set_num_threads({threads})
from minidl import Device
from minidl_book.peers import format_peer_report
from minidl_book.workloads import WORKLOADS
minidl_step, torch_step = WORKLOADS[{workload!r}]
contender = {contender!r}
start = time.perf_counter()
if contender.startswith("torch"):
    step = torch_step(contender == "torch.compile")
else:
    device = Device.flex().autodiff() if contender.startswith("flex") else Device.fusion().autodiff()
    step = minidl_step(device)
for _ in range({warmup}):
    step()
first = time.perf_counter() - start
samples = []
for _ in range({samples}):
    t0 = time.perf_counter()
    for _ in range({steps}):
        step()
    samples.append((time.perf_counter() - t0) / {steps})
out = {{"seconds": statistics.median(samples), "warmup": first, "peers": format_peer_report()}}
if not contender.startswith("torch"):
    from minidl.backends.flex import Flex
    from minidl.debug.op_timer import BackendOpTimer
    from minidl.dispatch.route import backend_for
    inner = backend_for(device).inner_backend()
    with BackendOpTimer(inner) as timer:
        step()
    out["backend_calls"] = sum(timer.calls.values())
    out["backend"] = inner.__name__
    if hasattr(getattr(inner, "stream", None), "counts"):  # Fusion[Flex] (Flex's stream is its RNG)
        before = inner.stream.counts()
        step()
        after = inner.stream.counts()
        out["stream"] = {{k: after[k] - before[k] for k in after}}
print("RESULT " + json.dumps(out))
"""


def run(workload: str, contender: str, args: argparse.Namespace) -> dict:
    """One fresh process timing ``contender`` on ``workload``; its RESULT line, parsed."""
    from minidl_book.peers import unpinned_env

    threads = str(args.threads)
    env = unpinned_env(PYTHONPATH=str(ROOT), NUMBA_NUM_THREADS=threads, OMP_NUM_THREADS=threads)
    env.setdefault("NUMBA_CACHE_DIR", str(ROOT / ".numba_cache"))
    source = _CHILD.format(threads=args.threads, workload=workload, contender=contender,
                           warmup=args.warmup, samples=args.samples, steps=args.steps)
    done = subprocess.run([sys.executable, "-c", source], env=env, capture_output=True, text=True,
                          cwd=ROOT, timeout=1800)
    lines = [ln for ln in done.stdout.splitlines() if ln.startswith("RESULT ")]
    if done.returncode or not lines:
        tail = (done.stderr or done.stdout).strip().splitlines()[-3:]
        return {"error": " | ".join(tail)}
    return json.loads(lines[-1][len("RESULT "):])


def table(workload: str, results: dict[str, list[dict]], args: argparse.Namespace) -> None:
    """Median and best per contender, ratios against torch eager and flex().autodiff()."""
    medians = {}
    for name, runs in results.items():
        ok = [r["seconds"] for r in runs if "seconds" in r]
        if ok:
            medians[name] = (statistics.median(ok), min(ok), len(ok))
    print(f"\n## {workload.upper()} step, {args.threads} thread(s) each side, one process per contender "
          f"and round ({args.rounds} rounds, alternating); load {os.getloadavg()[0]:.2f}")
    torch_t = medians.get("torch eager", (None,))[0]
    flex_t = medians.get("flex().autodiff()", (None,))[0]
    print(f"  {'contender':<22}{'median':>10}{'best':>10}{'/ torch eager':>15}{'flex / it':>11}")
    for name in CONTENDERS:
        if name not in medians:
            errors = [r["error"] for r in results.get(name, []) if "error" in r]
            print(f"  {name:<22}  not run: {errors[0] if errors else 'left out (--no-compile)'}")
            continue
        med, best, _ = medians[name]
        vs_torch = f"{med / torch_t:.2f}" if torch_t else "-"
        speedup = f"{flex_t / med:.2f}" if flex_t else "-"
        print(f"  {name:<22}{med * 1e3:>8.2f}ms{best * 1e3:>8.2f}ms{vs_torch:>15}{speedup:>11}")
    for name in ("flex().autodiff()", "fusion().autodiff()"):
        counted = next((r for r in results.get(name, []) if "backend_calls" in r), None)
        if counted:
            line = f"  one step on {name}: {counted['backend_calls']} {counted['backend']} calls"
            if "stream" in counted:
                s = counted["stream"]
                line += (f"; {s['drains']} drains, {s['launches']} fused kernels launched, "
                         f"{s['inner_ops']} ops run on the inner backend, {s['searches']} searches")
            print(line)
    targets = {"cnn": "fusion >= 1.3x faster than flex; flex <= 2.2x torch eager",
               "mlp": "fusion >= 1.1x faster than flex"}
    print(f"  targets (issue 31): {targets[workload]}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=4, help="processes per contender")
    parser.add_argument("--steps", type=int, default=50, help="steps per timed sample")
    parser.add_argument("--samples", type=int, default=5, help="timed samples per process")
    parser.add_argument("--warmup", type=int, default=20, help="untimed steps first")
    parser.add_argument("--threads", type=int, default=2, help="threads for numba and torch")
    parser.add_argument("--only", choices=["cnn", "mlp"], default=None)
    parser.add_argument("--no-compile", action="store_true", help="leave torch.compile out")
    parser.add_argument("--quick", action="store_true", help="fewer steps per sample")
    args = parser.parse_args()
    if args.quick:
        args.steps, args.samples, args.warmup = 10, 3, 5
    contenders = [c for c in CONTENDERS if not (args.no_compile and c == "torch.compile")]
    peers_printed = False
    for workload in [args.only] if args.only else ["cnn", "mlp"]:
        results: dict[str, list[dict]] = {c: [] for c in contenders}
        for _ in range(args.rounds):
            for contender in contenders:
                result = run(workload, contender, args)
                results[contender].append(result)
                if not peers_printed and "peers" in result:
                    print(result["peers"])
                    peers_printed = True
        table(workload, results, args)


if __name__ == "__main__":
    main()

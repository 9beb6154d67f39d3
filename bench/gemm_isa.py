"""gemm per instruction set: Flex's packed kernel against OpenBLAS (NumPy), torch and the FMA peak.

Run natively and as an AVX2 build on the same machine (numba, OpenBLAS and torch all told so)::

    .venv/bin/python bench/gemm_isa.py           # the host's ISA, every peer on its own kernels
    .venv/bin/python bench/gemm_isa.py --avx2    # NUMBA_CPU_NAME=haswell NUMBA_CPU_FEATURES=-avx512f
                                                 # OPENBLAS_CORETYPE=Haswell ATEN_CPU_CAPABILITY=avx2 ...

The contenders' processes start from ``minidl_book.peers.unpinned_env()``: an
``OPENBLAS_CORETYPE`` inherited from the shell is dropped (``--avx2`` sets its own, and says so).

(``NUMBA_CPU_NAME`` alone keeps the host's features, AVX-512 included: ``isa.AVX2_BUILD``.)

Prints the ISA numba compiles for, the variant that ISA picked (micro-tile ``gemm.MR x gemm.NR``
in vector registers, the KC / SUB blocking), the FMA peak of one core (``minidl_book.peak``),
then for square n and the products of an MLP 784-256-10 training step at batch 128
(``x @ W``, ``x.T @ dy`` and ``dy @ W.T``, the transposes as views; then the output layer's
``h @ W2``, ``h.T @ g``, ``g @ W2.T``, which take the unpacked small kernel), GFLOP/s of Flex, OpenBLAS
and torch, each as a fraction of peak x threads, and Flex / OpenBLAS, Flex / torch (> 1: Flex
faster). Each contender runs in its own process (as the issue's harness does: two thread pools
in one process fight over the two cores), ``--rounds`` processes each, alternating, best of
``--repeats`` calls in each. Ratios within one run; never
asserted. With ``--threads 1`` Flex runs its serial kernel and all are timed in CPU time of the
calling thread, which a busy neighbour barely disturbs (wall time otherwise: check ``uptime``).
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

from minidl_book.peers import environment_pins, unpinned_env  # noqa: E402

#: every library told to use AVX2 only: numba (CPU name and features), OpenBLAS, torch, oneDNN, MKL
AVX2_ENV = {"NUMBA_CPU_NAME": "haswell", "NUMBA_CPU_FEATURES": "-avx512f", "OPENBLAS_CORETYPE": "Haswell",
            "ATEN_CPU_CAPABILITY": "avx2", "ONEDNN_MAX_CPU_ISA": "AVX2", "MKL_ENABLE_INSTRUCTIONS": "AVX2"}


def child_env(avx2: bool) -> dict[str, str]:
    """The contenders' environment: no inherited peer pin; with ``avx2`` the AVX2 build of every
    side, OpenBLAS's Haswell kernels included (a pin chosen here, and printed, not inherited)."""
    return unpinned_env(**(AVX2_ENV if avx2 else {}))

#: (name, m, k, n, A transposed view?, B transposed view?)
MLP = [("x@W", 128, 784, 256, False, False), ("x.T@dy", 784, 128, 256, True, False),
       ("dy@W.T", 128, 256, 784, False, True),
       # the output layer's three: small enough for one thread, n or k of 10 (gemm_small)
       ("h@W2", 128, 256, 10, False, False), ("h.T@g", 256, 128, 10, True, False),
       ("g@W2.T", 128, 10, 256, False, True)]  # fmt: skip


def _operands(np, m: int, k: int, n: int, ta: bool, tb: bool):
    rng = np.random.default_rng(0)
    a = rng.standard_normal((k, m) if ta else (m, k)).astype(np.float32)
    b = rng.standard_normal((n, k) if tb else (k, n)).astype(np.float32)
    return (a.T if ta else a), (b.T if tb else b)


def _time_one(who: str, threads: int, cases, repeats: int) -> list[float]:
    """Best time of each case for one contender, alone in this process (as the harness runs it)."""
    import numpy as np
    import torch

    from minidl.backends.flex.kernels import gemm
    from minidl_book.peers import limit_pools

    limit_pools(threads).__enter__()  # held until this child process exits
    clock = time.thread_time if threads == 1 else time.perf_counter
    if threads == 1:
        gemm.PARALLEL_MIN_WORK = 1 << 62  # the serial kernel, on this thread
    out = []
    for _, m, k, n, ta, tb in cases:
        a, b = _operands(np, m, k, n, ta, tb)
        if who == "flex":
            fn = lambda a=a, b=b: gemm.matmul(a, b)  # noqa: E731
        elif who == "blas":
            fn = lambda a=a, b=b: a @ b  # noqa: E731
        else:
            x = torch.from_numpy(np.ascontiguousarray(a.T)).T if ta else torch.from_numpy(a)
            y = torch.from_numpy(np.ascontiguousarray(b.T)).T if tb else torch.from_numpy(b)
            fn = lambda x=x, y=y: torch.mm(x, y)  # noqa: E731
        fn()  # compile or load from the cache, wake the pool
        best = float("inf")
        for _ in range(repeats * (20 if m * n * k < 1e8 else 1)):
            t0 = clock()
            fn()
            best = min(best, clock() - t0)
        out.append(best)
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--sizes", type=int, nargs="*", default=[256, 512, 1024, 2048])
    ap.add_argument("--no-mlp", action="store_true", help="skip the MLP step's six products")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--rounds", type=int, default=2, help="processes per contender, alternating")
    ap.add_argument("--only", choices=["flex", "blas", "torch"], help=argparse.SUPPRESS)
    ap.add_argument("--avx2", action="store_true", help="run every contender as an AVX2 build")
    args = ap.parse_args()
    cases = [(f"n={n}", n, n, n, False, False) for n in args.sizes]
    cases += [] if args.no_mlp else MLP
    if args.only:  # a child process: one contender, times as JSON on stdout
        print(json.dumps(_time_one(args.only, args.threads, cases, args.repeats)))
        return

    import numba
    import torch

    from minidl.backends.flex.kernels import gemm, gemm_micro, gemm_pack, gemm_small, isa
    from minidl_book.peak import fma_peak

    # the children's own report: their environment, not this process's
    report = subprocess.run([sys.executable, "-c", "from minidl_book.peers import format_peer_report, "
                             f"limit_pools; limit_pools({args.threads}).__enter__(); print(format_peer_report())"],
                            capture_output=True, text=True, check=True, env=child_env(args.avx2), cwd=ROOT)
    blas = report.stdout.strip().replace("\n", "; ")
    if environment_pins():
        print(f"(this process inherited {environment_pins()}; the contenders run without it"
              f"{', as an AVX2 build (--avx2)' if args.avx2 else ''})")
    peak = fma_peak()
    print(f"ISA {isa.ISA} (numba cpu {isa.CPU_NAME}); avx512f in /proc/cpuinfo: "
          f"{'avx512f' in Path('/proc/cpuinfo').read_text()}; machine shared, load {os.getloadavg()[0]:.1f}")
    print(f"variant: outer-product micro-tile {gemm.MR}x{gemm.NR} float32 ({gemm.MR}x{gemm_micro.NV} "
          f"vectors of {gemm.LANES} lanes), KC {gemm_pack.KC}, SUB {gemm_pack.SUB}, MC {gemm.MC}; "
          f"unpacked below m*n*k {gemm.SMALL_MAX_WORK} (tiles {gemm_small.MR2}x{gemm_small.NV2}, "
          f"{gemm_small.MR1}x{gemm_small.NV1} vectors); B's rows read in place up to m "
          f"{gemm.B_IN_PLACE_MAX_M}, a packed B up to {gemm.B_WORKER_MAX_BYTES // 1024} KiB packed by each worker")
    print(f"peers in the contenders' processes: {blas}")
    print(f"torch {torch.__version__}; threads {args.threads}, numba layer {numba.config.THREADING_LAYER}")
    print(f"FMA peak: {peak['gflops']:.0f} GFLOP/s per core ({peak['lanes']} lanes)")
    print(f"each contender in its own process ({args.rounds} rounds, alternating), best of "
          f"{args.repeats} (x20 for small products), "
          f"timed in {'CPU time of the calling thread' if args.threads == 1 else 'wall time'}")
    roof = peak["gflops"] * args.threads
    times = {who: [float("inf")] * len(cases) for who in ("flex", "blas", "torch")}
    for _ in range(args.rounds):  # rounds alternate the contenders: a neighbour's load hits all
        for who in times:
            cmd = [sys.executable, __file__, "--only", who, "--threads", str(args.threads),
                   "--repeats", str(args.repeats), "--sizes", *map(str, args.sizes)]  # fmt: skip
            cmd += ["--no-mlp"] if args.no_mlp else []
            proc = subprocess.run(cmd, capture_output=True, text=True, check=True, env=child_env(args.avx2))
            got = json.loads(proc.stdout.strip().splitlines()[-1])
            times[who] = [min(x, y) for x, y in zip(times[who], got, strict=True)]
    print(f"{'shape':>22} {'flex GF/s':>10} {'of peak':>8} {'blas GF/s':>10} {'of peak':>8} "
          f"{'torch GF/s':>11} {'of peak':>8} {'flex/blas':>9} {'flex/torch':>10}")
    for i, (name, m, k, n, _, _) in enumerate(cases):
        gf = {who: 2 * m * n * k / times[who][i] / 1e9 for who in times}
        print(f"{name + f' {m}x{k}x{n}':>22} {gf['flex']:>10.1f} {gf['flex'] / roof:>8.2f} {gf['blas']:>10.1f} "
              f"{gf['blas'] / roof:>8.2f} {gf['torch']:>11.1f} {gf['torch'] / roof:>8.2f} "
              f"{gf['flex'] / gf['blas']:>9.2f} {gf['flex'] / gf['torch']:>10.2f}")
    print(f"load after: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()

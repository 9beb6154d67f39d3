"""gemm per instruction set: Flex's packed kernel against OpenBLAS (NumPy) and the FMA peak.

Run natively and as an AVX2 build on the same machine (numba and OpenBLAS both told so)::

    .venv/bin/python bench/gemm_isa.py                       # the host's ISA (unset OPENBLAS_CORETYPE)
    NUMBA_CPU_NAME=haswell OPENBLAS_CORETYPE=Haswell .venv/bin/python bench/gemm_isa.py

Prints the ISA numba compiles for, the micro-tile that ISA picked (``gemm.MR x gemm.NR``), the
FMA peak of one core (``minidl.book.peak``), then GFLOP/s at each n for Flex and OpenBLAS with
``--threads`` threads (best of ``--repeats``, alternating, a pause between contenders), each as
a fraction of peak x threads, and Flex / OpenBLAS. Ratios within one run; never asserted.
With ``--threads 1`` Flex runs its serial kernel and both are timed in CPU time of the
calling thread, which a busy neighbour barely disturbs (wall time otherwise).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("NUMBA_CACHE_DIR", str(ROOT / ".numba_cache"))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--sizes", type=int, nargs="+", default=[1024, 2048])
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()

    import numba
    import numpy as np
    from threadpoolctl import threadpool_info, threadpool_limits

    from minidl.backends.flex.kernels import gemm, isa
    from minidl.book.peak import fma_peak

    numba.set_num_threads(args.threads)
    threadpool_limits(args.threads)
    blas = [f"{p['internal_api']} {p.get('architecture')} x{p['num_threads']}" for p in threadpool_info()]
    peak = fma_peak()
    print(f"ISA {isa.ISA} (numba cpu {isa.CPU_NAME}); avx512f in /proc/cpuinfo: "
          f"{'avx512f' in Path('/proc/cpuinfo').read_text()}; machine shared, load {os.getloadavg()[0]:.1f}")
    print(f"micro-tile {gemm.MR}x{gemm.NR}, {gemm.LANES} lanes; BLAS {blas}; threads {args.threads}")
    print(f"FMA peak: {peak['gflops']:.0f} GFLOP/s per core ({peak['lanes']} lanes)")
    roof = peak["gflops"] * args.threads
    clock = time.thread_time if args.threads == 1 else time.perf_counter
    if args.threads == 1:
        gemm.PARALLEL_MIN_WORK = 1 << 62  # the serial kernel, on this thread
    print(f"timed in {'CPU time of this thread' if args.threads == 1 else 'wall time'}")
    print(f"{'n':>6} {'flex GF/s':>10} {'of peak':>8} {'blas GF/s':>10} {'of peak':>8} {'flex/blas':>9}")
    for n in args.sizes:
        rng = np.random.default_rng(0)
        a = rng.standard_normal((n, n)).astype(np.float32)
        b = rng.standard_normal((n, n)).astype(np.float32)
        gemm.matmul(a, b)  # compile or load from cache
        best = {"flex": float("inf"), "blas": float("inf")}
        for _ in range(args.repeats):
            for name, fn in (("flex", lambda a=a, b=b: gemm.matmul(a, b)), ("blas", lambda a=a, b=b: a @ b)):
                t0 = clock()
                fn()
                best[name] = min(best[name], clock() - t0)
                time.sleep(0.05)  # let the other pool's threads go back to sleep
        gf = {k: 2 * n**3 / v / 1e9 for k, v in best.items()}
        print(f"{n:>6} {gf['flex']:>10.1f} {gf['flex'] / roof:>8.2f} {gf['blas']:>10.1f} "
              f"{gf['blas'] / roof:>8.2f} {gf['flex'] / gf['blas']:>9.2f}")


if __name__ == "__main__":
    main()

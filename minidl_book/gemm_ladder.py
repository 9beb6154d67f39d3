"""The performance chapter's gemm ladder: float32 kernels for ``C = A @ B``, each one
idea closer to Flex's gemm (``minidl/backends/flex/kernels/gemm.py``, ``gemm_pack.py``,
``gemm_micro.py``).

* :func:`naive`: the definition, a dot product per value of C. Its inner loop walks down a
  column of B, one 64-byte cache line per value it uses.
* i-k-j, the reader's first build-it (:mod:`.build_gemm`): the loop order alone (a value of
  A scales a row of B into a row of C, every byte of each line used). It is timed by its
  checker, so it is not in :data:`RUNGS`; :func:`traffic` knows it as ``"i-k-j"``.
* :func:`blocked`: the i-k-j order over blocks of ``KB`` rows of B, which stay in L2 while
  every row of A uses them.
* :func:`packed`: B copied into strips ``NR`` columns wide and A into panels ``MR`` rows tall,
  one register tile per (panel, strip) pair: Flex's micro-kernel
  (:func:`~minidl.backends.flex.kernels.gemm_micro.micro_tile`) without Flex's blocking of k,
  reads in place, edge tiles or threads.

:func:`traffic` gives each rung's roofline counts: its flops and the bytes its loops move from
the memory its operands stream from (the modelled reuse, not the least traffic of
:func:`.roofline.gemm_counts`), with the working set that decides that memory. Nothing here
mirrors burn: burn-flex's gemm is the ladder's top rung.
"""

from __future__ import annotations

import functools
import inspect
import textwrap

import numpy as np
from numba import njit

from minidl.backends.flex.kernels._common import JIT_FAST
from minidl.backends.flex.kernels.gemm_micro import MR, NV, VBYTES, address, micro_tile
from minidl_book.roofline import Counts, Point, place

NR = NV * VBYTES // 4  # float32 columns of the register tile (32 on AVX-512, 16 on AVX2)
KB = 64  # rows of B in one block of the blocked kernel (256 KiB at n = 1024)
LINE = 64  # bytes per cache line

__all__ = ["KB", "MR", "NR", "RUNGS", "biggest_step", "naive", "packed", "points",
           "show", "source", "blocked", "time_rungs", "traffic", "STEPS"]


@njit(**JIT_FAST)
def naive(a, b, c):
    m, k = a.shape
    n = b.shape[1]
    for i in range(m):
        for j in range(n):
            s = np.float32(0)
            for p in range(k):  # down column j of B: a new cache line per step
                s += a[i, p] * b[p, j]
            c[i, j] = s


@njit(**JIT_FAST)
def blocked(a, b, c):
    m, k = a.shape
    c[:] = 0
    for p0 in range(0, k, KB):  # these KB rows of B stay in L2 for all rows of A
        for i in range(m):
            crow = c[i]
            for p in range(p0, min(p0 + KB, k)):
                aip = a[i, p]
                brow = b[p]
                for j in range(crow.size):  # along a row: whole lines, vectors
                    crow[j] += aip * brow[j]


@njit(**JIT_FAST)
def packed(a, b, c):
    m, k = a.shape
    n = b.shape[1]  # a multiple of NR (the chapter's 1024 is)
    strips = np.empty((n // NR, k, NR), np.float32)
    for s in range(n // NR):  # B in strips NR wide, each one contiguous run
        strips[s] = b[:, s * NR : (s + 1) * NR]
    panel = np.zeros((k, MR), np.float32)  # A's next MR rows, column by column
    out = np.empty((-(-m // MR) * MR, n), np.float32)  # C in whole panels of rows
    for i in range(0, m, MR):
        rows = min(MR, m - i)
        panel[:, :rows] = a[i : i + rows].T
        panel[:, rows:] = 0
        for s in range(n // NR):  # an MR x NR tile of C in registers for all of k
            micro_tile(k,  # steps of the reduction
                       address(panel), 1, MR,  # A's panel: start, row step, column step
                       address(strips[s]), NR,  # B's strip: start, row step
                       address(out[i, s * NR :]), n,  # C's tile: start, row step
                       True, out)  # True: write C (not add to it); out: the dtype
    c[:] = out[:m]


RUNGS = {"naive": naive, "blocked": blocked, "packed": packed}
#: the ladder's steps, each named for its cause: (step, from rung, to rung)
STEPS = (("loop order", "naive", "i-k-j"), ("blocking", "i-k-j", "blocked"),
         ("register tile", "blocked", "packed"))


def source(kernel) -> str:
    """The Python source of a rung (``naive``, ``blocked`` or ``packed``) without its decorator,
    as the chapter shows it."""
    lines = textwrap.dedent(inspect.getsource(kernel.py_func)).splitlines()
    return "\n".join(ln for ln in lines if not ln.startswith("@"))


def show(kernel) -> None:
    """Display a rung's source (:func:`source`) as a code block in a notebook."""
    from IPython.display import Code, display

    display(Code(source(kernel), language="python"))


def time_rungs(a: np.ndarray, b: np.ndarray, naive_rows: int = 128, budget: float = 2.0,
               rounds: int = 3, rungs=("naive", "blocked", "packed"),
               stat: str = "median") -> dict[str, tuple[float, int]]:
    """``{rung: (CPU seconds per call, rows of C computed)}`` on ``a @ b``, on this thread,
    the rungs interleaved round by round; ``stat``: the ``"median"`` or ``"best"`` round.

    The naive rung computes only C's first ``naive_rows`` rows (each row costs it the same;
    the whole product would take seconds per call); the others compute all of C."""
    from minidl_book.roofline import median_seconds

    m, n = a.shape[0], b.shape[1]
    rows = {name: min(naive_rows, m) if name == "naive" else m for name in rungs}
    outs = {name: np.empty((r, n), np.float32) for name, r in rows.items()}
    runs = {name: functools.partial(RUNGS[name], a[:r], b, outs[name]) for name, r in rows.items()}
    times = median_seconds(runs, budget=budget, rounds=rounds)
    return {name: (times[name][stat], rows[name]) for name in rows}


def traffic(rung: str, m: int, k: int, n: int) -> tuple[Counts, float]:
    """``(counts, working set in bytes)`` of a rung on ``[m, k] @ [k, n]``, float32.

    The bytes are what the rung's loops move per multiply-add from where its operands live,
    counted as reuse:

    * naive: each step reads ``b[p, j]`` from a line of its own, a whole line per
      multiply-add. The ``k`` lines of a column lie a row (``4n`` bytes, 4 KiB at n = 1024)
      apart, so in a cache whose set index spans at least a row they use only one set in
      ``4n / LINE`` (all in one L1 set; 32 of L2's 2048 here, which hold 256 of the 1024
      lines): to a cache they take the room of the ``4kn`` bytes they span, all of B, and
      they stream from the level that holds B (L3 here), not from L2.
    * i-k-j: each value of B is read once per row of A, 4 bytes per multiply-add, from
      wherever all of B (its working set) lives.
    * blocked: each value of a block of B (``KB`` rows, held in L2) is read once per row of A,
      4 bytes per multiply-add; the row of C it adds to stays in L1. Its working set is the
      block.
    * packed: a step of the reduction reads ``MR`` values of the panel and ``NR`` of the strip
      for ``MR x NR`` multiply-adds into registers; its working set is a strip and a panel.
    """
    flops = 2.0 * m * n * k
    macs = m * n * k
    if rung == "naive":
        return Counts(flops, float(LINE * macs)), 4.0 * k * n
    if rung == "i-k-j":
        return Counts(flops, 4.0 * macs), 4.0 * k * n
    if rung == "blocked":
        return Counts(flops, 4.0 * macs), 4.0 * KB * n
    if rung == "packed":
        return Counts(flops, 4.0 * macs * (MR + NR) / (MR * NR)), 4.0 * k * (MR + NR)
    raise ValueError(f"no rung {rung!r}: one of {sorted(RUNGS)}")


def points(times: dict[str, tuple[float, int]], k: int, n: int) -> list[Point]:
    """The rungs timed by :func:`time_rungs` as roofline points: each one's flops and modelled
    traffic (:func:`traffic`) for the rows of C it computed, and its time."""
    out = []
    for name, (seconds, rows) in times.items():
        counts, working_set = traffic(name, rows, k, n)
        out.append(place(name, counts, seconds, working_set))
    return out


def step_gains(times: dict[str, tuple[float, int]]) -> dict[str, float]:
    """Each step of :data:`STEPS` as the factor it multiplied the speed (flops per second)
    by; ``times`` holds the four rungs (naive, i-k-j, blocked, packed), all on ``[rows,
    k] @ [k, n]`` with the same k and n."""
    rate = {name: rows / seconds for name, (seconds, rows) in times.items()}
    return {step: rate[b] / rate[a] for step, a, b in STEPS}


def biggest_step(times: dict[str, tuple[float, int]]) -> str:
    """The step of :data:`STEPS` (``"loop order"``, ``"blocking"``, ``"register tile"``)
    that multiplied the speed most."""
    gains = step_gains(times)
    return max(gains, key=gains.get)

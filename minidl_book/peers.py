"""Peers at their best: the environment a timing process runs in, and what each peer chose.

Some machines set ``OPENBLAS_CORETYPE`` (and ``OPENBLAS_L2_SIZE``) in the environment, because
older OpenBLAS builds computed wrong results on their CPUs. A current OpenBLAS pinned that way
runs, say, its Haswell (AVX2) kernels on an AVX-512 CPU, and a benchmark against it compares with
a handicapped peer. A process that times a peer starts from :func:`unpinned_env` instead, and
every table prints :func:`peer_report`: OpenBLAS's core type as threadpoolctl reads it, torch's
CPU capability, the thread counts of each side, and the instruction set numba compiles for.

The pins are read when a library loads, so a process that has already imported NumPy keeps
the kernels it chose: :func:`environment_pins` says what was inherited, and a benchmark that
finds a pin in its own environment re-runs its timing in a child process with
:func:`unpinned_env` (see ``bench/``).
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path

#: Environment variables that pin a peer's kernel choice below what the CPU supports.
PEER_PINS = ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE")


def environment_pins(env: Mapping[str, str] | None = None) -> dict[str, str]:
    """The peer pins present in ``env`` (default: this process's environment)."""
    env = os.environ if env is None else env
    return {name: env[name] for name in PEER_PINS if name in env}


def unpinned_env(env: Mapping[str, str] | None = None, **extra: str) -> dict[str, str]:
    """A copy of ``env`` (default: this process's) without the peer pins, plus ``extra``."""
    out = {k: v for k, v in (os.environ if env is None else env).items() if k not in PEER_PINS}
    out.update(extra)
    return out


def torch_blas() -> str:
    """The BLAS torch's ``mm`` runs, as ``torch.__config__.show()`` names it (``"MKL 2024.2"``;
    torch's wheels link MKL into libtorch, on torch's own OpenMP threads, which
    ``torch.set_num_threads`` sets), or ``""`` without torch."""
    try:
        import torch
    except ImportError:
        return ""
    config = torch.__config__.show()
    found = re.search(r"Math Kernel Library Version ([0-9.]+)", config)
    if found:
        return f"MKL {found.group(1)}"
    found = re.search(r"BLAS_INFO=(\w+)", config)
    return found.group(1) if found else "unknown BLAS"


def _threads(n: object) -> str:
    return f"{n} thread" if n == 1 else f"{n} threads"


def _pool_owner(filepath: str) -> str:
    """The package folder a native library was loaded from (``numpy.libs``, ``torch/lib``)."""
    parts = Path(filepath).parts
    if "site-packages" in parts:
        rest = parts[parts.index("site-packages") + 1:]
        return "/".join(rest[:-1]) or rest[-1]
    return str(Path(filepath).parent)


def numba_owns(pool_path: str) -> bool:
    """Whether the OpenMP runtime at ``pool_path`` is the one numba's ``omp`` threading layer
    runs on: the system's libgomp (torch and scikit-learn bring their own, inside their
    packages)."""
    return "site-packages" not in Path(pool_path).parts


class limit_pools:  # noqa: N801 (used as a context manager, like threadpoolctl's)
    """Every thread pool this process holds at ``threads``: each pool threadpoolctl finds
    (NumPy's and SciPy's OpenBLAS, the OpenMP runtimes of torch, scikit-learn and numba's
    ``omp`` layer), torch's intra-op threads and numba's (``numba.set_num_threads``, which
    sizes each of its OpenMP teams).

    A pool that loads after the ``with`` was entered is not limited: import every library
    first (this class imports NumPy and, if installed, torch and scipy.linalg), and read :func:`peer_report`
    inside, which says each pool's thread count."""

    def __init__(self, threads: int = 1):
        self.threads = threads

    def __enter__(self) -> limit_pools:
        import numba
        import numpy as np  # noqa: F401
        import threadpoolctl

        # numba's workers start here at the latest: with Flex's wait policy (passive), as in
        # any process that runs Flex's kernels (bench/README.md, "Under load")
        from minidl.backends.flex.kernels._common import start_workers_passive

        start_workers_passive()
        self._numba = numba.get_num_threads()
        numba.set_num_threads(min(self.threads, numba.config.NUMBA_NUM_THREADS))
        try:
            import torch

            self._torch = torch.get_num_threads()
            torch.set_num_threads(self.threads)
        except ImportError:
            self._torch = None
        try:  # SciPy's own OpenBLAS loads with scipy.linalg, often after torch imported scipy
            import scipy.linalg  # noqa: F401
        except ImportError:
            pass
        self._pools = []
        for lib in threadpoolctl.ThreadpoolController().lib_controllers:
            self._pools.append((lib, lib.num_threads))
            lib.set_num_threads(self.threads)
        return self

    def __exit__(self, *exc) -> None:
        import numba

        for lib, threads in self._pools:
            lib.set_num_threads(threads)
        numba.set_num_threads(self._numba)
        if self._torch is not None:
            import torch

            torch.set_num_threads(self._torch)


def peer_report() -> dict[str, object]:
    """What each side runs with in this process: kernels and thread counts.

    Keys: ``numba_isa`` and ``numba_cpu`` (what minidl's kernels are compiled for),
    ``numba_threads``, ``torch_capability``, ``torch_threads`` and ``torch_blas`` (if torch
    imports), ``numpy_blas`` (the pool NumPy's ``a @ b`` runs on), ``blas`` (one entry per
    BLAS/OpenMP pool threadpoolctl sees: library, version, core type, threads, owner) and
    ``pins`` (the pins this process inherited; empty means peers chose freely)."""
    import numba
    import numpy as np
    import threadpoolctl

    from minidl.backends.flex.kernels import isa

    report: dict[str, object] = {
        "numba_isa": isa.ISA,
        "numba_cpu": isa.CPU_NAME,
        "numba_threads": numba.get_num_threads(),
        "pins": environment_pins(),
    }
    try:
        import torch

        report["torch_capability"] = torch.backends.cpu.get_cpu_capability()
        report["torch_threads"] = torch.get_num_threads()
        report["torch_mkldnn"] = bool(torch.backends.mkldnn.is_available())
        report["torch_blas"] = torch_blas()
    except ImportError:  # a minidl-only process
        pass
    numpy_dir = Path(np.__file__).resolve().parent
    pools = []
    for pool in threadpoolctl.threadpool_info():
        path = pool.get("filepath") or ""
        entry = {
            "library": pool.get("internal_api"),
            "version": pool.get("version"),
            "core_type": pool.get("architecture"),
            "threads": pool.get("num_threads"),
            "owner": _pool_owner(path) if path else "",
        }
        if pool.get("user_api") == "openmp" and path and numba_owns(path):
            entry["owner"] = "system, numba's omp layer"
        pools.append(entry)
        in_numpy = path.startswith(str(numpy_dir)) or "numpy.libs" in path
        if pool.get("user_api") == "blas" and in_numpy:
            report["numpy_blas"] = entry
    report["blas"] = pools
    return report


def format_peer_report(report: Mapping[str, object] | None = None) -> str:
    """:func:`peer_report` as a few printable lines: who ran each side's products on how many
    threads, every other pool, and a warning if a peer is pinned."""
    r = dict(peer_report() if report is None else report)
    lines = [f"minidl (numba): {r['numba_isa']} ({r['numba_cpu']}), {_threads(r['numba_threads'])}"]
    if "torch_capability" in r:
        blas = r.get("torch_blas")
        lines.append(f"torch: CPU capability {r['torch_capability']}, {_threads(r['torch_threads'])}"
                     + (f", its matmul by {blas}" if blas else ""))
    numpy_blas = r.get("numpy_blas")
    if numpy_blas:
        lines.append(f"NumPy's a @ b: {numpy_blas['library']} {numpy_blas.get('version') or ''}, "
                     f"core type {numpy_blas.get('core_type') or '-'}, {_threads(numpy_blas['threads'])}")
    others = [p for p in r.get("blas", []) if p is not numpy_blas and p != numpy_blas]
    if others:
        lines.append("other pools: " + "; ".join(
            f"{p['library']} ({p.get('owner') or '?'})"
            + (f" core type {p['core_type']}" if p.get("core_type") else "")
            + f" {_threads(p['threads'])}" for p in others))
    pins = r.get("pins") or {}
    if pins:
        named = ", ".join(f"{k}={v}" for k, v in pins.items())
        lines.append(f"WARNING: this process inherited {named}: that peer is pinned, not at its best")
    return "\n".join(lines)

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
from collections.abc import Mapping

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


def peer_report() -> dict[str, object]:
    """What each side runs with in this process: kernels and thread counts.

    Keys: ``numba_isa`` and ``numba_cpu`` (what minidl's kernels are compiled for),
    ``numba_threads``, ``torch_capability`` and ``torch_threads`` (if torch imports),
    ``blas`` (one entry per BLAS/OpenMP pool threadpoolctl sees: library, version, core type,
    threads) and ``pins`` (the pins this process inherited; empty means peers chose freely)."""
    import numba
    import numpy as np  # noqa: F401  (loads NumPy's OpenBLAS, so threadpoolctl can see it)
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
    except ImportError:  # a minidl-only process
        pass
    report["blas"] = [
        {
            "library": pool.get("internal_api"),
            "version": pool.get("version"),
            "core_type": pool.get("architecture"),
            "threads": pool.get("num_threads"),
        }
        for pool in threadpoolctl.threadpool_info()
    ]
    return report


def format_peer_report(report: Mapping[str, object] | None = None) -> str:
    """:func:`peer_report` as a few printable lines, ending with a warning if a peer is pinned."""
    r = dict(peer_report() if report is None else report)
    lines = [f"minidl (numba): {r['numba_isa']} ({r['numba_cpu']}), {r['numba_threads']} threads"]
    if "torch_capability" in r:
        lines.append(f"torch: CPU capability {r['torch_capability']}, {r['torch_threads']} threads")
    for pool in r.get("blas", []):
        core = pool.get("core_type") or "-"
        lines.append(
            f"{pool['library']} {pool.get('version') or ''}: core type {core}, "
            f"{pool['threads']} threads"
        )
    pins = r.get("pins") or {}
    if pins:
        named = ", ".join(f"{k}={v}" for k, v in pins.items())
        lines.append(f"WARNING: this process inherited {named}: that peer is pinned, not at its best")
    return "\n".join(lines)

"""Which instruction set numba compiles the kernels for, read without compiling anything.

numba targets the host CPU unless ``NUMBA_CPU_NAME`` / ``NUMBA_CPU_FEATURES`` say otherwise
(that is how an AVX2 build is measured on an AVX-512 machine: ``NUMBA_CPU_NAME=haswell``).
The gemm micro-kernel picks its register tile from :data:`ISA`: AVX-512 has 32 vector
registers of 16 float32, AVX2 has 16 registers of 8, so a tile that fits one spills on the
other. burn-flex gets the same choice from its SIMD crate's runtime dispatch.
"""

from __future__ import annotations

import os

#: CPU names (LLVM's) whose default feature set includes AVX-512F.
_AVX512_CPUS = frozenset({
    "skylake-avx512", "cascadelake", "cooperlake", "cannonlake", "icelake-client",
    "icelake-server", "tigerlake", "rocketlake", "sapphirerapids", "emeraldrapids",
    "graniterapids", "znver4", "znver5", "x86-64-v4",
})


def _features() -> tuple[str, str]:
    name = os.environ.get("NUMBA_CPU_NAME", "").strip()
    features = os.environ.get("NUMBA_CPU_FEATURES", "").strip()
    if name and name != "host":
        return name, features
    import llvmlite.binding as llvm  # a query of the host, no code generation

    return llvm.get_host_cpu_name(), features or llvm.get_host_cpu_features().flatten()


def detect() -> str:
    """``"avx512"`` if the kernels are compiled with AVX-512F, else ``"avx2"``."""
    name, features = _features()
    flags = features.split(",") if features else []
    if "+avx512f" in flags:
        return "avx512"
    if "-avx512f" in flags or flags:
        return "avx2"
    return "avx512" if name in _AVX512_CPUS else "avx2"


#: The instruction set numba compiles for in this process (chosen once, at import).
ISA: str = detect()
CPU_NAME: str = _features()[0]

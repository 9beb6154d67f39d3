"""Which instruction set numba compiles the kernels for, read without compiling anything.

numba targets the host CPU unless ``NUMBA_CPU_NAME`` / ``NUMBA_CPU_FEATURES`` say otherwise.
A CPU name alone does not change the features: numba still passes the host's, so on an
AVX-512 machine ``NUMBA_CPU_NAME=haswell`` compiles with AVX-512 (and 512-bit vectors). An
AVX2 build needs the features too: ``NUMBA_CPU_NAME=haswell NUMBA_CPU_FEATURES=-avx512f``
(:data:`AVX2_BUILD`). The gemm micro-kernel picks its register tile from :data:`ISA`: AVX-512
has 32 vector registers of 16 float32, AVX2 has 16 registers of 8, so a tile that fits one
spills on the other. burn-flex gets the same choice from its SIMD crate's runtime dispatch.
"""

from __future__ import annotations

import os

#: CPU names (LLVM's) whose default feature set includes AVX-512F.
_AVX512_CPUS = frozenset({
    "skylake-avx512", "cascadelake", "cooperlake", "cannonlake", "icelake-client",
    "icelake-server", "tigerlake", "rocketlake", "sapphirerapids", "emeraldrapids",
    "graniterapids", "znver4", "znver5", "x86-64-v4",
})


#: The environment of an AVX2 build on any x86 machine (numba's CPU name and features).
AVX2_BUILD = {"NUMBA_CPU_NAME": "haswell", "NUMBA_CPU_FEATURES": "-avx512f"}


def _features() -> tuple[str, str]:
    """numba's choice: the CPU name and the feature string, each the host's unless set."""
    name = os.environ.get("NUMBA_CPU_NAME", "").strip()
    features = os.environ.get("NUMBA_CPU_FEATURES", "").strip()
    if name in ("", "host") or not features:
        import llvmlite.binding as llvm  # a query of the host, no code generation

        if name in ("", "host"):
            name = llvm.get_host_cpu_name()
        if not features:
            features = llvm.get_host_cpu_features().flatten()
    return name, features


def detect() -> str:
    """``"avx512"`` if the kernels are compiled with AVX-512F, else ``"avx2"``.

    The feature string decides when it names ``avx512f``; otherwise the CPU name's defaults do."""
    name, features = _features()
    flags = features.split(",")
    if "+avx512f" in flags:
        return "avx512"
    if "-avx512f" in flags:
        return "avx2"
    return "avx512" if name in _AVX512_CPUS else "avx2"


#: The instruction set numba compiles for in this process (chosen once, at import).
ISA: str = detect()
CPU_NAME: str = _features()[0]

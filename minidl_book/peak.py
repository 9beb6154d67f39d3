"""A short FMA probe: the machine's float32 peak per core, for the performance chapter and bench.

It JIT-compiles (with llvmlite, numba's own LLVM binding) a loop of independent vector FMAs
that never touch memory, for the CPU numba targets in this process (``NUMBA_CPU_NAME``, else the
host), and times it on one thread. Nothing else in minidl uses it; it compiles only when called.
"""

from __future__ import annotations

import ctypes
import time

_CHAINS = 12  # independent accumulators: more than FMA latency x FMA ports on current CPUs


def _ir(width: int) -> str:
    v = f"<{width} x float>"
    phis = "\n".join(f"  %a{i} = phi {v} [ %init, %entry ], [ %b{i}, %loop ]" for i in range(_CHAINS))
    body = "\n".join(f"  %b{i} = call {v} @llvm.fma.v{width}f32({v} %a{i}, {v} %m, {v} %c)"
                     for i in range(_CHAINS))
    red = "\n".join(f"  %r{i} = fadd {v} %r{i - 1}, %b{i}" for i in range(1, _CHAINS))
    return f"""
declare {v} @llvm.fma.v{width}f32({v}, {v}, {v})
define float @probe(i64 %n, float %x) {{
entry:
  %s = insertelement {v} undef, float %x, i32 0
  %init = shufflevector {v} %s, {v} undef, <{width} x i32> zeroinitializer
  %m = fadd {v} %init, %init
  %c = fsub {v} %init, %m
  br label %loop
loop:
  %i = phi i64 [ 0, %entry ], [ %i1, %loop ]
{phis}
{body}
  %i1 = add i64 %i, 1
  %done = icmp eq i64 %i1, %n
  br i1 %done, label %exit, label %loop
exit:
  %r0 = fadd {v} %b0, zeroinitializer
{red}
  %e = extractelement {v} %r{_CHAINS - 1}, i32 0
  ret float %e
}}"""


def fma_peak(iterations: int = 1_000_000, repeats: int = 5) -> dict:
    """float32 GFLOP/s of one core running nothing but FMAs (best of ``repeats``, CPU time).

    Returns ``{"isa", "cpu", "lanes", "gflops"}``: the vector width is that of the ISA numba
    compiles for (16 with AVX-512, 8 with AVX2)."""
    import llvmlite.binding as llvm

    from minidl.backends.flex.kernels import isa

    llvm.initialize_native_target()
    llvm.initialize_native_asmprinter()
    lanes = 16 if isa.ISA == "avx512" else 8
    name, features = isa._features()
    module = llvm.parse_assembly(_ir(lanes))
    module.verify()
    machine = llvm.Target.from_default_triple().create_target_machine(cpu=name, features=features, opt=2)
    engine = llvm.create_mcjit_compiler(module, machine)
    engine.finalize_object()
    probe = ctypes.CFUNCTYPE(ctypes.c_float, ctypes.c_int64, ctypes.c_float)(engine.get_function_address("probe"))
    best = float("inf")
    for _ in range(repeats):
        t0 = time.thread_time()
        probe(iterations, 0.5)
        best = min(best, time.thread_time() - t0)
    gflops = 2 * lanes * _CHAINS * iterations / best / 1e9
    engine.remove_module(module)  # keep nothing alive (the engine owns it)
    return {"isa": isa.ISA, "cpu": name, "lanes": lanes, "gflops": gflops}

"""Helpers for the pages that show minidl's GPU device (``Device.wgpu()``): a generated shader
printed without the helper functions every kernel carries (or trimmed to what one thread
does), a recorded dispatch named by the generator that wrote it, and the cost of one dispatch
measured against the same op on Flex."""

from __future__ import annotations

import re
import time

from minidl import Device, Tensor
from minidl.backends.wgpu import shaders

HELPERS_CUT = "// ... the helper functions every kernel carries (is_nan, erf_, powf_, ...)\n"


def without_helpers(source: str) -> str:
    """``source`` with the shared helper functions replaced by one comment line."""
    return source.replace(shaders.HELPERS, "\n" + HELPERS_CUT).rstrip("\n")


def trimmed(source: str) -> str:
    """What one thread of a generated kernel does: the bindings, then ``main``'s body with
    the built-in arguments and the thread-number arithmetic replaced by one comment line."""
    lines = without_helpers(source).splitlines()
    keep = [line for line in lines if line.startswith("@group")]
    start = next(k for k, line in enumerate(lines) if line.lstrip().startswith("let i = "))
    keep.append("fn main(...) {  // thread i computes output element i")
    keep += lines[start + 1:]
    return "\n".join(keep)


def label(dispatched) -> str:
    """A short name for one recorded dispatch: the generator that wrote its WGSL and, for an
    element-wise kernel, the expression it computes."""
    source = dispatched.source
    if source == shaders.matmul_kernel():
        return "matmul_kernel()  (a 4x4 block of the output per thread)"
    for dist in ("uniform", "normal", "bernoulli", "int"):
        if source == shaders.random_kernel(dist):
            return f"random_kernel({dist!r})"
    for op in ("sum", "max", "min", "prod"):
        if source == shaders.reduce_kernel("f32", "f32", op):
            return f"reduce_kernel({op!r})"
    found = re.search(r"out\[oo\] = (.*);\n\}", source)
    if found:
        return f"map_kernel(...)  out = {found.group(1)}"
    return dispatched.entry


def per_op_seconds(device: Device, n: int = 40, repeats: int = 5) -> float:
    """Seconds one small element-wise add adds to a chain of ``n`` read back once: the best of
    ``repeats`` runs of ``n`` adds minus the best of one add, over ``n - 1`` (on a shared
    machine interference only adds time, so the best sample is the cost)."""
    a = Tensor.ones((8,), device)
    (a + a).to_numpy()  # compile and warm
    best = {}
    for k in (1, n):
        times = []
        for _ in range(repeats):
            start = time.perf_counter()
            y = a
            for _ in range(k):
                y = y + a
            y.to_numpy()
            times.append(time.perf_counter() - start)
        best[k] = min(times)
    return max(best[n] - best[1], 0.0) / (n - 1)

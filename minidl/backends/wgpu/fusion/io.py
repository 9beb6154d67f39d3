"""What every fused WGSL kernel shares: its bindings, its scalars in ``p``, its pipeline and
its dispatch (burn-cubecl-fusion's ``engine/codegen/io.rs`` for the kernel side and
``engine/launch/{input,output}.rs`` for the launch side).

Bindings: 0 is ``p`` (the kernel's int32 words: sizes, the scalars as bits, operand
layouts), then the inputs ``a<k>`` (read-only), then the outputs ``out<q>`` (read-write).
A kernel with several outputs needs its own bind group layout: its pipeline is made here,
before the runtime's dispatch looks it up by its source.
"""

from __future__ import annotations

import numpy as np

from minidl.backends.wgpu import ops, shaders
from minidl.backends.wgpu.runtime import runtime
from minidl.backends.wgpu.tensor import WgpuTensor


def wgsl_type(dtype: np.dtype) -> str:
    """The WGSL element type a buffer of ``dtype`` holds (bool as ``u32``)."""
    return shaders.WGSL_TYPE[np.dtype(dtype).kind]


def prologue(
    in_types: tuple[str, ...], out_types: tuple[str, ...], workgroup: str | None = None
) -> str:
    """A fused kernel's text up to its body: the bindings, the helpers and the entry point;
    a 1-D kernel (no ``workgroup`` given) also gets ``i``, its thread's element."""
    n_in = len(in_types)
    lines = ["@group(0) @binding(0) var<storage, read> p: array<i32>;"]
    lines += [
        f"@group(0) @binding({k + 1}) var<storage, read> a{k}: array<{t}>;"
        for k, t in enumerate(in_types)
    ]
    lines += [
        f"@group(0) @binding({n_in + 1 + q}) var<storage, read_write> out{q}: array<{t}>;"
        for q, t in enumerate(out_types)
    ]
    if workgroup is None:
        return "\n".join(lines) + shaders.HELPERS + shaders.entry() + shaders.THREAD
    return "\n".join(lines) + shaders.HELPERS + shaders.entry(workgroup)


def scalar_load(word: int, kind: str) -> str:
    """The WGSL value of the scalar at ``p[word]``: a float travels as its bits, a bool as 0/1."""
    return f"bitcast<f32>(p[{word}])" if kind == "f" else f"(p[{word}] != 0)"


def scalar_words(values, kinds: tuple[str, ...]) -> list[int]:
    """The ``p`` words of a launch's scalars (what :func:`scalar_load` reads back)."""
    return [
        ops.float_bits(v) if kind == "f" else int(v) for v, kind in zip(values, kinds, strict=True)
    ]


def outputs(launch, index: int, name: str) -> list[WgpuTensor]:
    """New contiguous tensors for a launch's outputs, of their recorded shapes and dtypes."""
    return [ops.new(shape, dtype, index, name) for _, shape, dtype in launch.outputs]


def symbols(first_word: int, values, kinds: tuple[str, ...]) -> dict:
    """The words of a launch's declared (symbolic) scalars, for a capture to recompute
    (:class:`~minidl.backends.wgpu.runtime.Dispatched`): the others are constants."""
    return {
        first_word + k: ("scalar", kind, v)
        for k, (v, kind) in enumerate(zip(values, kinds, strict=True))
        if getattr(v, "symbolic", False)
    }


def dispatch(
    source: str,
    launch,
    values: list,
    params: list[int],
    inputs: list[WgpuTensor],
    outs: list[WgpuTensor],
    groups: tuple[int, int, int],
    scalars: tuple[int, list, tuple[str, ...]] = (0, [], ()),
) -> None:
    """One dispatch of ``source`` over ``groups`` (``p`` = ``params``, then the inputs' and the
    outputs' buffers); the outputs become the launch's values. ``scalars`` is (the word of
    the first scalar in ``p``, the launch's scalar values, their kinds), for a capture."""
    index = outs[0].index if outs else 0
    rt = runtime(index)
    if min(groups) > 0:
        rt.pipeline(source, 1 + len(inputs) + len(outs), n_outputs=len(outs))
        rt.dispatch(
            source,
            np.array(params, dtype=np.int64).astype(np.int32),
            [t.buffer for t in inputs] + [o.buffer for o in outs],
            groups,
            symbols(*scalars) if rt.recorders else None,
        )
    for (tid, _, _), out in zip(launch.outputs, outs, strict=True):
        values[tid] = out

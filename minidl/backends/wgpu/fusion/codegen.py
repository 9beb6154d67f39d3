"""The GPU's code generator for fused blocks: one WGSL compute kernel per element-wise block
(burn-cubecl-fusion's ``ElemwiseOptimization``, whose ``FuseTrace`` becomes one CubeCL kernel;
here the trace is the block's IR and the kernel is WGSL text).

A thread computes one element of the block's shape: it loads each input at its element
(strided and broadcast, or at ``offset + i`` when every input is contiguous and full-size),
computes every op in registers, in op order, and stores the results someone still holds.
Each op's expression is the one eager ``Wgpu`` dispatches for it (the tables of
:mod:`minidl.backends.wgpu.backend`), so fused == eager to the bit on the same adapter.

``p`` holds ``n``, the scalars as bits, then sizes and operand blocks; the bindings, the
scalars' words and the dispatch are every fused kernel's (:mod:`.io`).
"""

from __future__ import annotations

import functools
import re

import numpy as np

from minidl.backends.wgpu import backend as eager
from minidl.backends.wgpu import ops, shaders
from minidl.backends.wgpu.fusion import io
from minidl.backends.wgpu.fusion.io import wgsl_type
from minidl.backends.wgpu.runtime import groups_1d
from minidl.backends.wgpu.tensor import WgpuTensor, c_strides
from minidl.fusion.ir import OperationIr
from minidl.fusion.kernel import (
    BlockValues,
    Kernel,
    Value,
    elementwise_aliasable,
)

MAXD = shaders.MAXD

#: The WGSL expression of each protocol op a fuser may take, in ``x0, x1, x2`` (its inputs)
#: and ``s0`` (its scalar): eager Wgpu's own, so a fused block computes what eager does.
EXPRESSIONS: dict[str, str] = {
    **{op: e for op, e in eager.FLOAT_UNARY.items() if op.startswith("float_")},
    **eager.FLOAT_BINARY,
    **eager.FLOAT_SCALAR,
    **eager.FLOAT_COMPARE,
    **eager.FLOAT_COMPARE_ELEM,
    "bool_and": eager.BOOL_BINARY["bool_and"],
    "bool_or": eager.BOOL_BINARY["bool_or"],
    "bool_not": "!x0",
    "float_mask_where": "select(x0, x2, x1)",
    "float_mask_fill": "select(x0, s0, x1)",
    "bool_into_float": "select(0.0, 1.0, x0)",
    "float_cast": "x0",  # float32 is the device's one float dtype
    "float_expand": "x0",  # its input is read broadcast, as every input is
    "float_reshape": "x0",  # a block that reads through a reshape walks every tensor flat
    # Wgpu.float_powf_scalar picks sqrt and 1/sqrt for 0.5 and -0.5 (torch's paths): the same
    # choice, made per thread on the scalar, so a new exponent needs no new kernel
    "float_powf_scalar": (
        "select(select(powf_(x0, s0), select(sqrt(x0), nan(), lt(x0, 0.0)), s0 == 0.5), "
        "select(1.0 / sqrt(x0), nan(), lt(x0, 0.0)), s0 == -0.5)"
    ),
}

_TOKEN = re.compile(r"\b([xs])(\d+)\b")


def _name(v: Value) -> str:
    """``x<p>``: input ``p``'s element; ``v<j>``: op ``j``'s result."""
    return f"x{v.index}" if v.external else f"v{v.index}"


def _expr(op: OperationIr, args: list[str], scalars: list[str]) -> str:
    template = EXPRESSIONS.get(op.op)
    if template is None:  # a fuser's rule took an op this generator cannot write
        raise ValueError(
            f"fusion: {op.op!r} has no WGSL expression; a fuser took an op its kernel cannot compute"
        )
    return _TOKEN.sub(lambda m: (args if m.group(1) == "x" else scalars)[int(m.group(2))], template)


#: elements per thread of the vectorized form (burn-cubecl-fusion's line size): lavapipe runs
#: a thread's ``vec4`` load and store as one access each, and a 64K-element chain took 230 us
#: instead of 450-650 us as one element per thread (bench/gpu_fusion.py)
LINE = 4


@functools.cache
def _source(
    in_types: tuple[str, ...],
    out_types: tuple[str, ...],
    n_scalars: int,
    body: tuple[str, ...],
    form: str,
    shape: tuple[int, ...] = (),
) -> str:
    """The WGSL text of an element-wise block in one of three forms: ``"flat"`` (every input
    contiguous and full-size: element ``i`` at ``offset + i``), ``"strided"`` (a division per
    dim of ``shape``, the block's, broadcasts by stride 0) or ``"vector"`` (flat, :data:`LINE` elements per thread, read
    and written as ``vec4``; each input's offset and the thread count in units of a line).
    ``body`` holds the thread's lines from the loads on (written from the IR by :func:`_body`)."""
    n_in = len(in_types)
    base = 1 + n_scalars  # p: n, scalars, then the layout
    if form == "vector":
        vec_in = tuple(f"vec{LINE}<{t}>" for t in in_types)
        vec_out = tuple(f"vec{LINE}<{t}>" for t in out_types)
        src = [io.prologue(vec_in, vec_out), "  if (i >= p[0]) { return; }\n"]
        src += [f"  let a{k}v = a{k}[p[{base + k}] + i];\n" for k in range(n_in)]
        src += [f"  var r{q}: {t};\n" for q, t in enumerate(vec_out)]
        src.append(f"  for (var c = 0; c < {LINE}; c = c + 1) {{\n")
        src += ["  " + line for line in body]
        src.append("  }\n")
        src += [f"  out{q}[i] = r{q};\n" for q in range(len(out_types))]
        src.append("}\n")
        return "".join(src)
    src = [io.prologue(in_types, out_types), "  if (i >= p[0]) { return; }\n"]
    if form == "flat":
        for k in range(n_in):
            src.append(f"  let o{k} = p[{base + k}] + i;\n")
    else:
        # p: ndim, shape[MAXD], then offset, strides[MAXD] per input (stride 0 where it
        # broadcasts); the block's shape is written into the source, one unrolled step per
        # dim: lavapipe divides by a constant with a multiply, by a word of p with a division
        # (a 16K-element block went from 2.1 ms to ~0.2 ms in the CNN step)
        blocks = [base + 1 + MAXD + k * (1 + MAXD) for k in range(n_in)]
        src.append("  var rem = i;\n")
        for k, b in enumerate(blocks):
            src.append(f"  var o{k} = p[{b}];\n")
        for d in reversed(range(len(shape))):
            if shape[d] == 1:
                continue
            if d == 0:  # what is left is the first dim's index (i < n)
                src.append("  let c0 = rem;\n")
            else:
                src.append(f"  let c{d} = rem % {shape[d]};\n  rem = rem / {shape[d]};\n")
            for k, b in enumerate(blocks):
                src.append(f"  o{k} = o{k} + c{d} * p[{b + 1 + d}];\n")
    src.extend(body)
    src.append("}\n")
    return "".join(src)


def _body(
    ops: list[OperationIr], vals: BlockValues, writes: list[int], vector: bool
) -> tuple[str, ...]:
    """The lines of a thread: each input loaded where an op first reads it, each op's ``let``,
    each written result stored right after it is computed (op order, as
    :func:`~minidl.fusion.kernel.elementwise_aliasable` assumes). In the ``vector`` form an
    element is component ``c`` of the thread's lines (``a<k>v`` read, ``r<q>`` written)."""
    scalar_names = [
        io.scalar_load(1 + k, dtype.kind) for k, (_, _, dtype) in enumerate(vals.scalars)
    ]
    loaded: set[Value] = set()
    out_of = {j: q for q, j in enumerate(writes)}
    lines: list[str] = []
    for j, op in enumerate(ops):
        ins = vals.inputs_of(j)
        for v in ins:
            if v.external and v not in loaded:
                loaded.add(v)
                t = wgsl_type(vals.ext[v.index].dtype)
                at = ("c", f"a{v.index}v") if vector else (f"o{v.index}", f"a{v.index}")
                lines.append(f"  let {_name(v)} = {shaders.load(t, at[1], at[0])};\n")
        scalars = [scalar_names[k] for k in vals.scalar_indices(j)]
        lines.append(f"  let v{j} = {_expr(op, [_name(v) for v in ins], scalars)};\n")
        if j in out_of:
            target = f"r{out_of[j]}[c]" if vector else f"out{out_of[j]}[i]"
            lines.append(f"  {target} = {shaders.store(wgsl_type(op.out.dtype), f'v{j}')};\n")
    return tuple(lines)


def _broadcasts(shape: tuple[int, ...], full: tuple[int, ...]) -> bool:
    if len(shape) > len(full):
        return False
    padded = (1,) * (len(full) - len(shape)) + tuple(shape)
    return all(a == b or a == 1 for a, b in zip(padded, full, strict=True))


class WgslKernel(Kernel):
    """An element-wise block as one WGSL dispatch (burn-cubecl-fusion's ``ElemwiseOptimization``).

    The source comes in three forms, picked at launch from the inputs' layouts: *vector* (every
    input contiguous, of the block's size, at an offset and of a size that are multiples of
    :data:`LINE`: ``vec4`` loads and stores, burn's vectorization), *flat* (every input
    contiguous and of the block's size) and *strided* (a division per dim, broadcasts by
    stride 0); each is compiled once, on its first launch."""

    language = "wgsl"

    def __init__(self, ops: list[OperationIr], shape: tuple[int, ...], writes: list[int]):
        vals = BlockValues(ops)
        self.shape = tuple(shape)
        self.numel = int(np.prod(self.shape, dtype=np.int64)) if self.shape else 1
        self.in_types = tuple(wgsl_type(t.dtype) for t in vals.ext)
        self.out_types = tuple(wgsl_type(ops[j].out.dtype) for j in writes)
        self.body = _body(ops, vals, writes, vector=False)
        self.vector_body = _body(ops, vals, writes, vector=True)
        self.scalar_kinds = tuple(dtype.kind for _, _, dtype in vals.scalars)
        kinds = [op.kind for op in ops]
        source = _source(self.in_types, self.out_types, len(vals.scalars), self.body, "flat")
        name = "wgsl_elemwise_" + "_".join(kinds[:6] + (["etc"] if len(kinds) > 6 else []))
        read = sum(t.nbytes for t in vals.ext)
        written = sum(ops[j].out.nbytes for j in writes)
        super().__init__(
            name,
            source,
            vals.slots,
            list(writes),
            vals.scalars,
            [],
            self.numel,
            kinds,
            read,
            written,
        )
        self.aliasable = elementwise_aliasable(vals, list(writes))

    def function(self) -> str:
        """The flat form's source (what a launch dispatches when the inputs allow it)."""
        return self.source

    def strided_source(self) -> str:
        """The strided form's source."""
        return _source(
            self.in_types, self.out_types, len(self.scalar_kinds), self.body, "strided", self.shape
        )

    def vector_source(self) -> str:
        """The vector form's source (:data:`LINE` elements per thread)."""
        return _source(
            self.in_types, self.out_types, len(self.scalar_kinds), self.vector_body, "vector"
        )

    def launch(self, launch, values: list, scalars: list) -> None:
        """One dispatch: the outputs are new contiguous tensors of their recorded shapes."""
        inputs: list[WgpuTensor] = [values[i] for i in launch.inputs]
        full, n = self.shape, self.numel
        outs = io.outputs(launch, inputs[0].index if inputs else 0, self.name)
        params = [n, *io.scalar_words(scalars[launch.scalars], self.scalar_kinds)]
        threads = n
        if all(t.size == n and t.is_contiguous() for t in inputs):
            if n % LINE == 0 and all(t.offset % LINE == 0 for t in inputs):
                source, threads = self.vector_source(), n // LINE
                params[0] = threads
                params += [t.offset // LINE for t in inputs]
            else:
                source = self.source
                params += [t.offset for t in inputs]
        else:
            source = self.strided_source()
            params += [len(full)] + list(full) + [1] * (MAXD - len(full))
            for k, t in enumerate(inputs):
                if not _broadcasts(t.shape, full):  # read through a reshape: walk it flat
                    t = inputs[k] = ops.contiguous(t)
                    params += [t.offset, *c_strides(full), *[0] * (MAXD - len(full))]
                else:
                    params += ops._block(t.shape, t.strides, t.offset, full)
        io.dispatch(
            source,
            launch,
            values,
            params,
            inputs,
            outs,
            groups_1d(threads),
            scalars=(1, scalars[launch.scalars], self.scalar_kinds),
        )

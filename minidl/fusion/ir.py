"""The intermediate representation a fusion stream records (burn-ir's ``OperationIr``/``TensorIr``).

Every op ``Fusion[B]`` receives becomes one :class:`OperationIr`: its kind, the ids of the
tensors it reads and writes (with shapes and dtypes, :class:`TensorIr`), and its scalar and
dim arguments. Nothing is computed while an op is recorded; only shapes are inferred.

The op kinds a fuser can take are listed here, with the numba scalar expression each one
becomes inside a generated kernel (``{0}``, ``{1}`` are its inputs, ``{s0}`` its scalars).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

#: Unary float ops: kind -> scalar expression (``np`` and ``math`` are in the kernel's globals).
UNARY = {
    "exp": "np.exp({0})",
    "log": "np.log({0})",
    "log1p": "np.log1p({0})",
    "sqrt": "np.sqrt({0})",
    "abs": "np.abs({0})",
    "tanh": "np.tanh({0})",
    "sin": "np.sin({0})",
    "cos": "np.cos({0})",
    "erf": "math.erf({0})",
    "floor": "np.floor({0})",
    "neg": "-{0}",
    "recip": "1 / {0}",
}

#: Binary ops with broadcasting (float in, float out).
BINARY = {
    "add": "{0} + {1}",
    "sub": "{0} - {1}",
    "mul": "{0} * {1}",
    "div": "{0} / {1}",
    "powf": "{0} ** {1}",
}

#: Ops of a tensor and a scalar argument ``{s0}``.
SCALAR = {
    "add_scalar": "{0} + {s0}",
    "sub_scalar": "{0} - {s0}",
    "mul_scalar": "{0} * {s0}",
    "div_scalar": "{0} / {s0}",
    "powf_scalar": "{0} ** {s0}",
}

#: Comparisons (bool out). NaN compares false, as in NumPy.
COMPARE = {
    "equal": "{0} == {1}",
    "not_equal": "{0} != {1}",
    "greater": "{0} > {1}",
    "greater_equal": "{0} >= {1}",
    "lower": "{0} < {1}",
    "lower_equal": "{0} <= {1}",
    "equal_elem": "{0} == {s0}",
    "not_equal_elem": "{0} != {s0}",
    "greater_elem": "{0} > {s0}",
    "greater_equal_elem": "{0} >= {s0}",
    "lower_elem": "{0} < {s0}",
    "lower_equal_elem": "{0} <= {s0}",
}

#: Bool ops and conversions, select ops.
OTHER = {
    "bool_not": "not {0}",
    "bool_and": "{0} and {1}",
    "bool_or": "{0} or {1}",
    "mask_where": "{2} if {1} else {0}",
    "mask_fill": "{s0} if {1} else {0}",
    "cast": "{0}",
    "bool_into_float": "{0}",
    # burn's expand: the identity, its input broadcast to the result's shape (as every input is)
    "expand": "{0}",
}

#: Every element-wise kind and its expression template.
ELEMENTWISE = {**UNARY, **BINARY, **SCALAR, **COMPARE, **OTHER}

#: A reshape is the identity on a flat index: only a block that walks every tensor flat (no
#: broadcast input) can read through it, so it is not in ELEMENTWISE (see ElementwiseFuser).
RESHAPE = {"reshape": "{0}"}

#: Reductions along one dim (kept with size 1): kind -> (accumulator start, update template).
#: max/min propagate NaN, as torch does.
REDUCE = {
    "sum_dim": ("0", "{acc} + {x}"),
    "sum": ("0", "{acc} + {x}"),  # every dim: shape [1]
    "max_dim": ("-np.inf", "{x} if ({x} > {acc} or {x} != {x}) else {acc}"),
    "min_dim": ("np.inf", "{x} if ({x} < {acc} or {x} != {x}) else {acc}"),
}

#: Float dtypes the fusers generate code for (float16 is left to ``B``: numba has no float16 math).
FUSABLE_DTYPES = (np.dtype(np.float32), np.dtype(np.float64), np.dtype(np.bool_))


class TensorIr(NamedTuple):
    """A tensor as the stream sees it (burn's ``TensorIr``): an id, a shape and a dtype.

    The id is *relative*: tensors are numbered in the order the current segment of the stream
    first meets them, so the same step recorded twice gives the same ids (and the same plan)."""

    id: int
    shape: tuple[int, ...]
    dtype: np.dtype

    @property
    def nbytes(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64)) * self.dtype.itemsize

    def __repr__(self) -> str:
        return f"t{self.id}:{self.dtype.name}{list(self.shape)}"


class OperationIr:
    """One recorded op (burn's ``OperationIr``): ``kind`` (``add``, ``sum_dim``, ``matmul``, ...),
    the protocol op it came from (``float_add``: what runs on ``B`` when no fuser takes it),
    inputs, output, scalar arguments (passed to kernels at launch, so a new learning rate needs
    no new kernel) and static arguments (dims, dtypes: part of the plan's key)."""

    __slots__ = ("kind", "op", "inputs", "out", "scalars", "static", "names", "extra")

    def __init__(self, kind: str, op: str, inputs: tuple[TensorIr, ...], out: TensorIr,
                 scalars: tuple = (), static: tuple = (), names: tuple[str, ...] = (), extra: dict | None = None):
        self.kind, self.op, self.inputs, self.out = kind, op, inputs, out
        self.scalars, self.static = scalars, static
        #: the protocol op's parameter name of each input, and its other keyword arguments
        self.names, self.extra = names, extra

    @property
    def kwargs(self) -> dict:
        """Keyword arguments to replay the op on ``B``: tensor inputs appear as their TensorIr."""
        return {**dict(zip(self.names, self.inputs, strict=True)), **(self.extra or {})}

    def __repr__(self) -> str:
        args = [repr(t) for t in self.inputs] + [f"{s!r}" for s in self.scalars] + [f"{s!r}" for s in self.static]
        return f"{self.out!r} = {self.kind}({', '.join(args)})"


def broadcast_shape(*shapes: tuple[int, ...]) -> tuple[int, ...]:
    """NumPy's broadcast of ``shapes`` (raises ``ValueError`` naming them when incompatible)."""
    if len(shapes) == 2 and len(shapes[0]) == len(shapes[1]):
        # two shapes of one rank (a bias row, a batch statistic): without NumPy's general
        # routine, which costs several microseconds a call
        out = []
        for a, b in zip(*shapes):
            if a == b or b == 1:
                out.append(a)
            elif a == 1:
                out.append(b)
            else:
                return tuple(np.broadcast_shapes(*shapes))  # raises, naming the shapes
        return tuple(out)
    return tuple(np.broadcast_shapes(*shapes))

"""Argument checks of the Tensor layer: burn's ``TensorCheck`` and ``assert_shape!``.

burn-tensor checks every op's arguments *before* it reaches a backend, collects what failed in
a ``TensorCheck`` and panics with one readable message (``check!`` macro)::

    === Tensor Operation Error ===
      Operation: 'conv2d'
      Reason:
        1. Number of channels in the input tensor and input channels of the convolution must be equal. ...

minidl does the same and raises :class:`TensorCheckError` (a ``ValueError``; wrong kinds and
dtypes raise :class:`TensorKindError`, which is also a ``TypeError``). The helpers below
(``norm_dim``, ``broadcast_shape``, ...) are the checks the Tensor methods share; negative dims
are normalized here, so backends only ever see ``0 <= dim < rank``.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from minidl.backend.limits import check_size

Shape = tuple[int, ...]


class TensorCheckError(ValueError):
    """A failed :class:`TensorCheck`: bad shapes, ranks, dims or values (burn panics here)."""


class TensorKindError(TensorCheckError, TypeError):
    """A failed check about kinds or dtypes (Float vs Int vs Bool): also a ``TypeError``."""


def fmt_shape(shape: Iterable[int]) -> str:
    """``[2, 3]``: shapes print as burn prints ``dims()``."""
    return "[" + ", ".join(str(int(d)) for d in shape) + "]"


class TensorCheck:
    """A collector of failed checks for one op, rendered like burn's ``TensorCheck``.

    Build one, ``register`` what is wrong, then call :meth:`check` (burn's ``check!`` macro):
    it raises with every registered reason, numbered, or does nothing when all passed.
    """

    __slots__ = ("ops", "errors", "kind_error")

    def __init__(self, ops: str):
        self.ops = ops
        self.errors: list[tuple[str, str | None]] = []
        self.kind_error = False

    def register(self, description: str, details: str | None = None, *, kind: bool = False) -> TensorCheck:
        """Record one failed check (``kind=True`` when it is about kinds or dtypes)."""
        self.errors.append((description, details))
        self.kind_error = self.kind_error or kind
        return self

    @property
    def failed(self) -> bool:
        """Whether any check was registered."""
        return bool(self.errors)

    def format(self) -> str:
        """The burn-style message listing every failed check."""
        text = f"=== Tensor Operation Error ===\n  Operation: '{self.ops}'\n  Reason:"
        for number, (description, details) in enumerate(self.errors, start=1):
            text += f"\n    {number}. {description}"
            if details:
                text += f" {details}"
        return text + "\n"

    def check(self) -> None:
        """Raise :class:`TensorCheckError` (or :class:`TensorKindError`) if anything failed."""
        if self.errors:
            raise (TensorKindError if self.kind_error else TensorCheckError)(self.format())

    # ----- the checks burn's TensorCheck offers, used by the functional ops ----------------
    @staticmethod
    def conv(ops: str, x: Sequence[int], weight: Sequence[int], groups: int, spatial: int = 2) -> TensorCheck:
        """Ranks of input and weight, and input channels vs ``weight.shape[1] * groups``
        (burn's ``TensorCheck::conv``)."""
        check = TensorCheck(ops)
        rank = spatial + 2
        names = "[batch, channels, length]" if spatial == 1 else "[batch, channels, height, width]"
        if len(x) != rank:
            check.register(
                f"Argument x must have {rank} dims {names}.", f"Expected rank {rank}, found shape {fmt_shape(x)}."
            )
        if len(weight) != rank:
            check.register(
                f"Argument weight must have {rank} dims [channels_out, channels_in / groups, kernel...].",
                f"Expected rank {rank}, found shape {fmt_shape(weight)}.",
            )
        if groups < 1:
            check.register("Argument groups must be at least 1.", f"Found groups={groups}.")
        if check.failed:
            return check
        channels, expected = x[1], weight[1] * groups
        if channels != expected:
            check.register(
                "Number of channels in the input tensor and input channels of the convolution must be equal.",
                f"Expected x.shape[1] == weight.shape[1] * groups = {weight[1]} * {groups} = {expected}, "
                f"found {channels} (x {fmt_shape(x)}, weight {fmt_shape(weight)}).",
            )
        if weight[0] % groups != 0:
            check.register(
                "Output channels must be divisible by groups.",
                f"Expected weight.shape[0] % groups == 0, found {weight[0]} channels and groups={groups}.",
            )
        return check


def fail(ops: str, description: str, details: str | None = None, *, kind: bool = False) -> None:
    """Raise at once with a single reason (shorthand for a one-error ``TensorCheck``)."""
    TensorCheck(ops).register(description, details, kind=kind).check()


# ----- dims ---------------------------------------------------------------------------------
def norm_dim(ops: str, dim: Any, rank: int, arg: str = "dim", *, shape: Sequence[int] | None = None) -> int:
    """``dim`` as a non-negative axis of a rank-``rank`` tensor (negatives count from the end)."""
    if type(dim) is int and 0 <= dim < rank:  # the common case, first and cheap
        return dim
    if isinstance(dim, bool) or not hasattr(dim, "__index__"):
        fail(ops, f"Argument {arg} must be an int.", f"Found {dim!r} ({type(dim).__name__}).", kind=True)
    dim = dim.__index__()
    if -rank <= dim < rank:
        return dim + rank if dim < 0 else dim
    where = f"shape {fmt_shape(shape)}" if shape is not None else f"rank {rank}"
    expected = f"-{rank} <= {arg} < {rank}" if rank else "no dim at all: the tensor has rank 0"
    fail(ops, f"Argument {arg} is out of range for a tensor with {where}.", f"Expected {expected}, found {arg}={dim}.")
    raise AssertionError  # unreachable: fail raised


def norm_dims(ops: str, dims: Any, rank: int, arg: str = "dims", *, shape: Sequence[int] | None = None) -> list[int]:
    """A list of distinct non-negative axes (``dims`` may be one int or a sequence)."""
    if not isinstance(dims, list | tuple):
        dims = [dims]
    out = [norm_dim(ops, d, rank, arg, shape=shape) for d in dims]
    if len(set(out)) != len(out):
        fail(ops, f"Argument {arg} repeats a dim.", f"Expected distinct dims, found {list(dims)}.")
    return out


def as_shape(ops: str, shape: Any, arg: str = "shape") -> Shape:
    """A shape given as an int, list or tuple, as a tuple of ints."""
    if isinstance(shape, int) and not isinstance(shape, bool):
        return (shape,)
    try:
        out = tuple(s.__index__() for s in shape)
    except (TypeError, AttributeError):
        fail(ops, f"Argument {arg} must be a list of ints.", f"Found {shape!r}.", kind=True)
    return out


def check_sizes(ops: str, shape: Shape, arg: str = "shape") -> Shape:
    """Every size of a new tensor is >= 0."""
    if any(s < 0 for s in shape):
        fail(ops, f"Argument {arg} has a negative size.", f"Expected sizes >= 0, found {fmt_shape(shape)}.")
    return shape


# ----- broadcasting -------------------------------------------------------------------------
def broadcast_shape(ops: str, lhs: Shape, rhs: Shape, names: tuple[str, str] = ("lhs", "rhs")) -> Shape:
    """The NumPy broadcast of two shapes, or an error naming the first dim that clashes."""
    if lhs == rhs:
        return lhs
    rank = max(len(lhs), len(rhs))
    a = (1,) * (rank - len(lhs)) + tuple(lhs)
    b = (1,) * (rank - len(rhs)) + tuple(rhs)
    out = []
    for i, (x, y) in enumerate(zip(a, b)):
        if x == y or y == 1:
            out.append(x)
        elif x == 1:
            out.append(y)
        else:
            fail(
                ops,
                "The provided tensors have incompatible shapes.",
                f"Incompatible size at dimension '{i - rank}' => '{x} != {y}', which can't be broadcasted: "
                f"expected {names[1]} to broadcast with {names[0]} {fmt_shape(lhs)}, "
                f"found {names[1]} {fmt_shape(rhs)}.",
            )
    # a broadcast result can be far larger than both operands ([n, 1] with [1, n]): refuse one
    # that could not fit even at a byte per element before the backend allocates it
    check_size(f"{ops} (its broadcast result, counted at 1 byte per element)", out, "bool")
    return tuple(out)


def check_same_rank(ops: str, lhs: Shape, rhs: Shape, names: tuple[str, str] = ("lhs", "rhs")) -> None:
    """Both operands of an element-wise op have the same rank, as burn's types demand.

    burn's ``Tensor<B, D>`` carries the rank ``D`` in its type, so ``[4, 3] + [3]`` does not
    compile there; only sizes of 1 broadcast (``TensorCheck::binary_ops_ew_shape``). minidl
    checks the rank at run time and names both shapes.
    """
    if len(lhs) != len(rhs):
        fail(
            ops,
            "The provided tensors have different ranks.",
            f"Expected {names[1]} to have the rank of {names[0]} {fmt_shape(lhs)} "
            f"({len(lhs)}), found {names[1]} {fmt_shape(rhs)} ({len(rhs)}); "
            "unsqueeze or reshape one of them (only sizes of 1 broadcast).",
        )


def check_broadcast_to(ops: str, shape: Shape, target: Shape, arg: str) -> None:
    """``shape`` broadcasts to ``target`` without changing ``target`` (mask and value arguments)."""
    if shape == target:
        return
    ok = len(shape) <= len(target) and all(
        s == t or s == 1 for s, t in zip(reversed(shape), reversed(target))
    )
    if not ok:
        fail(
            ops,
            f"Argument {arg} does not broadcast to the tensor's shape.",
            f"Expected a shape broadcastable to {fmt_shape(target)}, found {fmt_shape(shape)}.",
        )


# ----- assert_shape! ------------------------------------------------------------------------
def _fmt_pattern(expected: Sequence[Any]) -> str:
    parts = []
    for e in expected:
        parts.append(".." if e is Ellipsis else "_" if e is None else str(e))
    return "[" + ", ".join(parts) + "]"


def shape_matches(shape: Sequence[int], expected: Sequence[Any]) -> bool:
    """Whether ``shape`` fits a pattern of ints, ``None`` (any one dim) and ``...`` (any dims)."""
    expected = list(expected)
    if expected.count(Ellipsis) > 1:
        raise ValueError(f"assert_shape!: at most one '...' in the pattern, found {_fmt_pattern(expected)}")
    if Ellipsis in expected:
        i = expected.index(Ellipsis)
        head, tail = expected[:i], expected[i + 1:]
        if len(shape) < len(head) + len(tail):
            return False
        return shape_matches(shape[: len(head)], head) and shape_matches(shape[len(shape) - len(tail):], tail)
    if len(shape) != len(expected):
        return False
    return all(e is None or int(e) == s for s, e in zip(shape, expected))


def assert_shape(tensor: Any, expected: Sequence[Any], name: str = "tensor") -> None:
    """Raise unless ``tensor.shape`` fits ``expected`` (burn's ``assert_shape!`` macro).

    ``expected`` lists ints, ``None`` for one dim of any size (burn's ``_``) and at most one
    ``...`` for any number of dims (burn's ``..``)::

        assert_shape(x, [..., d_input], name="input")
        # assert_shape!: tensor "input" has shape [2, 5], expected [.., 4]
    """
    shape = tuple(tensor.shape)
    if not shape_matches(shape, expected):
        raise TensorCheckError(
            f'assert_shape!: tensor "{name}" has shape {fmt_shape(shape)}, expected {_fmt_pattern(expected)}'
        )

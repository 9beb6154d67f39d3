"""Build exercise of the tensors-and-backends chapter: an element-wise op over two views.

The reader writes ``zip_op(fn, a, b)``: ``a`` and ``b`` are strided views (``buffer``,
``offset``, ``shape``, ``strides``, the toy backend's ``Strided`` fields); the result is
``(out_shape, values)``, the broadcast shape and ``fn(x, y)`` for each pair of elements, one
flat list in row order (a new contiguous buffer). It is built from the chapter's two earlier
functions: ``broadcast_strides`` reads each operand as the output's shape and ``read_view``
reads it, the loop every strided element-wise kernel runs (minidl's Wgpu launches one per
op, a thread per element). The chapter's backend ``Mine`` then does its own arithmetic with
it instead of the toy base's NumPy.

The checker runs the reader's function with the reference ``read_view`` and
``broadcast_strides`` bound in their place (each has its own checker), so it judges only
this function. Its cases: operands laid out in any dim order (a permuted view), at an
offset, with a flipped dim (a negative stride), broadcast along any size-1 dim, and shapes
that must be refused (unequal ranks, sizes neither of which is 1). ``fn`` is subtraction,
so swapping the operands shows; the two buffers hold different numbers.
"""

from __future__ import annotations

import math
import operator
import types
from typing import NamedTuple

import numpy as np
from hypothesis import strategies as st

from minidl_book import build_broadcast, build_view
from minidl_book.build_broadcast import broadcast_strides
from minidl_book.build_check import BuildExercise, Reference, Rules
from minidl_book.build_view import read_view

__trace_hide__ = True

__all__ = ["PLANTED", "View", "exercise", "make_case", "zip_op"]


class View(NamedTuple):
    """An operand as the checker hands it over: the toy backend's ``Strided`` fields."""

    buffer: list
    offset: int
    shape: tuple
    strides: tuple


# ----- the reference solution and planted wrong ones -------------------------------------------
def zip_op(fn, a, b):
    if len(a.shape) != len(b.shape):
        raise ValueError(f"ranks differ: {a.shape} and {b.shape}")
    out_shape = tuple(max(n, m) for n, m in zip(a.shape, b.shape))
    xs = read_view(a.buffer, a.offset, broadcast_strides(a.shape, a.strides, out_shape),
                   out_shape)
    ys = read_view(b.buffer, b.offset, broadcast_strides(b.shape, b.strides, out_shape),
                   out_shape)
    return out_shape, [fn(x, y) for x, y in zip(xs, ys)]


def offset_ignored(fn, a, b):
    """Reads both operands from the start of their buffers."""
    out_shape = tuple(max(n, m) for n, m in zip(a.shape, b.shape))
    xs = read_view(a.buffer, 0, broadcast_strides(a.shape, a.strides, out_shape), out_shape)
    ys = read_view(b.buffer, 0, broadcast_strides(b.shape, b.strides, out_shape), out_shape)
    return out_shape, [fn(x, y) for x, y in zip(xs, ys)]


def lhs_shape(fn, a, b):
    """Takes the left operand's shape as the output's."""
    out_shape = tuple(a.shape)
    xs = read_view(a.buffer, a.offset, a.strides, out_shape)
    ys = read_view(b.buffer, b.offset, broadcast_strides(b.shape, b.strides, out_shape),
                   out_shape)
    return out_shape, [fn(x, y) for x, y in zip(xs, ys)]


def numpy_on_buffers(fn, a, b):
    """NumPy's broadcasting on each operand's buffer, cut from its offset in row order."""
    x = np.asarray(a.buffer[a.offset:a.offset + math.prod(a.shape)]).reshape(a.shape)
    y = np.asarray(b.buffer[b.offset:b.offset + math.prod(b.shape)]).reshape(b.shape)
    out = fn(*np.broadcast_arrays(x, y))
    return tuple(out.shape), out.ravel().tolist()


#: name → (wrong solution, the verdict kind it must get)
PLANTED = {
    "offset ignored": (offset_ignored, "value"),
    "the left operand's shape": (lhs_shape, "check"),
    "NumPy on the raw buffers": (numpy_on_buffers, "rule"),
}


# ----- the cases ---------------------------------------------------------------------------------
def _operand(shape, order, offset, flip, first) -> tuple[View, np.ndarray]:
    """A view of ``shape`` stored with its dims in ``order`` (outermost first) after
    ``offset`` elements, dim ``flip`` walked backwards (``None``: none); the buffer holds
    ``first + 10 * position``. Returns the view and its values (NumPy, for the truth)."""
    strides, step = [0] * len(shape), 1
    for d in reversed(order):
        strides[d] = step
        step *= shape[d]
    offset_ = offset
    if flip is not None and shape[flip] > 1:  # start at the far end, step back
        offset_ += (shape[flip] - 1) * strides[flip]
        strides[flip] = -strides[flip]
    buffer = [first + 10 * p for p in range(offset + math.prod(shape))]
    view = View(buffer, offset_, tuple(shape), tuple(strides))
    values = np.asarray(read_view(buffer, offset_, tuple(strides), tuple(shape)),
                        dtype=np.float64).reshape(shape)
    return view, values


def make_case(a_shape, b_shape, a_layout=(None, 0, None), b_layout=(None, 0, None)) -> dict:
    """``x_layout``: (dim order or None for row order, offset, flipped dim or None)."""
    views, arrays = [], []
    for shape, (order, offset, flip), first in ((a_shape, a_layout, 100),
                                                (b_shape, b_layout, 1)):
        order = list(range(len(shape))) if order is None else list(order)
        view, values = _operand(tuple(shape), order, offset, flip, first)
        views.append(view)
        arrays.append(values)
    a, b = views
    why = ""
    if len(a.shape) != len(b.shape):
        why = "rank"
    elif any(n != m and 1 not in (n, m) for n, m in zip(a.shape, b.shape)):
        why = "sizes"
    case = {"fn": operator.sub, "a": a, "b": b, "_why": why}
    if why:
        case["_shape"], case["_expected"] = (), np.zeros(0)
    else:
        out = np.subtract(*np.broadcast_arrays(*arrays))
        case["_shape"], case["_expected"] = tuple(out.shape), out.ravel()
    return case


@st.composite
def _layout(draw, shape):
    rank = len(shape)
    order = list(draw(st.permutations(range(rank))))
    flip = draw(st.one_of(st.none(), st.integers(0, rank - 1)))
    return order, draw(st.integers(0, 3)), flip


@st.composite
def _cases(draw) -> dict:
    out = list(draw(st.lists(st.integers(1, 4), min_size=1, max_size=3)))
    a = [n if draw(st.booleans()) else 1 for n in out]
    b = [n if n == 1 or a[d] == 1 or draw(st.booleans()) else 1 for d, n in enumerate(out)]
    kind = draw(st.sampled_from(["ok", "ok", "ok", "ok", "rank", "sizes"]))
    if kind == "rank":
        b = b[1:] if len(b) > 1 else [1] + b
    elif kind == "sizes":
        d = draw(st.integers(0, len(a) - 1))
        a[d], b[d] = 2, 3
    return make_case(a, b, draw(_layout(a)), draw(_layout(b)))


def _bind(solution):
    """The reader's function with the reference ``read_view`` and ``broadcast_strides`` in
    place of theirs (each has its own checker): this checker judges ``zip_op`` only."""
    code = getattr(solution, "__code__", None)
    if code is None:
        return solution
    names = {**solution.__globals__, "read_view": build_view.read_view,
             "broadcast_strides": build_broadcast.broadcast_strides}
    bound = types.FunctionType(code, names, solution.__name__, solution.__defaults__,
                               solution.__closure__)
    bound.__kwdefaults__ = solution.__kwdefaults__
    return bound


def _run(solution, case: dict) -> dict:
    a, b = case["a"], case["b"]
    try:
        got = _bind(solution)(case["fn"], View(*a), View(*b))
    except ValueError as err:
        return {"_got": ("refused", str(err)), "values": np.zeros(0)}
    if type(got) not in (list, tuple) or len(got) != 2:
        raise TypeError(f"zip_op returned {got!r}: return (out_shape, values)")
    shape, values = got
    values = np.asarray(values, dtype=np.float64).ravel()
    return {"_got": ("returned", tuple(shape)), "values": values}


def _shape_check(solution, case, outputs, watch) -> str | None:
    how, got = outputs["_got"]
    a, b, why = case["a"].shape, case["b"].shape, case["_why"]
    if why and how == "returned":
        if why == "rank":
            return (f"a has shape {a} and b {b}: unequal ranks. You returned shape {got}; "
                    "burn's rule (the chapter's) broadcasts at equal rank only: raise "
                    "ValueError, as broadcast_strides does.")
        return (f"a has shape {a} and b {b}: a dim where the sizes differ and neither is 1; "
                f"you returned shape {got}. Raise ValueError.")
    if not why and how == "refused":
        return f"a {a} and b {b} broadcast (each dim equal or 1), but your code raised: {got}"
    if not why and got != case["_shape"]:
        return (f"a has shape {a} and b {b}: the output's shape is, dim by dim, the larger "
                f"size, {case['_shape']}; you returned {got}.")
    return None


EXAMPLES = [
    make_case((2, 3), (2, 1)),  # x - x.mean_dim(1)
    make_case((1, 3), (4, 1)),  # both stretch, the left one along dim 0
    make_case((2, 3), (1, 3), b_layout=(None, 2, None)),  # b at an offset
    make_case((3, 2), (3, 2), a_layout=([1, 0], 0, 0)),  # a permuted and flipped
    make_case((4, 3), (3,)),  # NumPy's rule, not burn's
    make_case((2, 3), (2, 2)),  # neither size is 1
]


def exercise(max_examples: int = 20) -> BuildExercise:
    """The checker for the reader's ``zip_op(fn, a, b)``."""
    return BuildExercise(
        "zip_op: fn over two strided views, broadcast to one shape",
        cases=_cases(),
        run=_run,
        checks=[_shape_check],
        references=[Reference("NumPy's broadcasting of the two views",
                              lambda c: {"values": c["_expected"]}, rtol=0, atol=0)],
        rules=Rules(no_numpy=True, helpers=(build_view.read_view,
                                            build_broadcast.broadcast_strides)),
        hints=[
            (("check", "value", "error"), "First the output's shape: equal ranks, then dim by "
             "dim the larger of the two sizes (broadcast_strides refuses the rest)."),
            (("check", "value", "error"), "Then read each operand as that shape: "
             "read_view(x.buffer, x.offset, broadcast_strides(x.shape, x.strides, out_shape), "
             "out_shape). Both lists are in the output's row order: pair them up."),
            ("value", "A view's first element is at x.offset, not at 0, and a stride may be "
             "negative: read_view handles both when you hand it the view's own fields."),
        ],
        reference_solution=zip_op,
        examples=EXAMPLES,
        max_examples=max_examples,
        order=("fn", "a", "b"),
    )

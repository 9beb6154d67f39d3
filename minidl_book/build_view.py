"""Build exercise of the tensors-and-backends chapter: read a view through its strides.

The reader writes ``read_view(buffer, offset, strides, shape)``: the view's elements in row
order (the last index fastest), each read at ``offset + sum(index[d] * strides[d])``, the
address arithmetic a strided kernel does for every element (MiniTorch's
``index_to_position``). The cases are real Flex views of one buffer, made by chains of
``permute``, ``slice``, ``flip`` (a negative stride, the offset at the far end) and ``expand``
(a stride of 0); the buffer holds ``100 + position`` so a value is never its own position.
"""

from __future__ import annotations

import math

import numpy as np
from hypothesis import strategies as st

from minidl import Device, Tensor
from minidl_book import reader_code
from minidl_book.build_check import BuildExercise, Reference, Rules
from minidl_book.layout_figure import element_offset, element_strides
from minidl_book.strategies import view_steps

__trace_hide__ = True

__all__ = ["PLANTED", "exercise", "make_case", "read_view", "yours_or_reference"]


# ----- the reference solution and planted wrong ones -------------------------------------------
def read_view(buffer, offset, strides, shape):
    size = 1
    for n in shape:
        size *= n
    out = []
    for k in range(size):  # k = the element's number in row order
        position, rest = offset, k
        for d in reversed(range(len(shape))):  # split k into an index, last dim first
            position += (rest % shape[d]) * strides[d]
            rest //= shape[d]
        out.append(buffer[position])
    return out


def column_order(buffer, offset, strides, shape):
    """The right addresses, visited with the first index fastest."""
    out = []
    for k in range(math.prod(shape)):
        position, rest = offset, k
        for d in range(len(shape)):
            position += (rest % shape[d]) * strides[d]
            rest //= shape[d]
        out.append(buffer[position])
    return out


def contiguous(buffer, offset, strides, shape):
    """Ignores the strides: the next ``size`` elements from ``offset``."""
    return list(buffer[offset:offset + math.prod(shape)])


def positions(buffer, offset, strides, shape):
    """The addresses themselves, not what the buffer holds there."""
    return [p - 100 for p in read_view(buffer, offset, strides, shape)]


#: name → (wrong solution, the verdict kind it must get)
PLANTED = {
    "first index fastest": (column_order, "value"),
    "strides ignored": (contiguous, "value"),
    "positions, not values": (positions, "value"),
}


def yours_or_reference(yours):
    """The reader's ``read_view`` when it is defined and reads the chapter's example slice
    right, else the reference: the chapter's GPU section runs it on a kernel's buffers."""
    example = (list(range(100, 112)), 5, (4, 1), (2, 3))
    return reader_code.yours_or_reference(
        yours, read_view, "read_view", lambda fn: list(fn(*example)) == read_view(*example))


# ----- the cases ---------------------------------------------------------------------------------
def make_case(base_shape, steps) -> dict:
    """A case from a view of ``arange``-shaped buffer made by ``steps`` (``(op, argument)``)."""
    size = math.prod(base_shape)
    values = (100 + np.arange(size, dtype=np.float32)).reshape(base_shape)
    base = Tensor.from_numpy(values, Device.flex())
    view, made = base, f"Tensor of shape {list(base_shape)}"
    for op, arg in steps:
        view = getattr(view, op)(arg)
        made += f".{op}({arg})"
    array = view.primitive.backend_tensor
    buffer = base.primitive.backend_tensor.reshape(-1)
    assert np.shares_memory(array, buffer)
    return {"made_by": made, "buffer": [int(v) for v in buffer],
            "offset": element_offset(array, buffer), "strides": element_strides(array),
            "shape": tuple(array.shape), "_expected": array.ravel().astype(np.float64)}


@st.composite
def _cases(draw) -> dict:
    shape = tuple(draw(st.lists(st.integers(1, 4), min_size=1, max_size=3)))
    steps, _ = draw(view_steps(shape))
    return make_case(shape, steps)


def _run(solution, case: dict) -> dict:
    got = solution(list(case["buffer"]), case["offset"], tuple(case["strides"]),
                   tuple(case["shape"]))
    if type(got) not in (list, tuple):
        raise TypeError(f"read_view returned {type(got).__name__}: return a list of the "
                        "view's values in row order")
    return {"values": np.asarray(got, dtype=np.float64)}


def _expected(case: dict) -> dict:
    return {"values": case["_expected"]}


EXAMPLES = [
    make_case((3, 4), [("slice", [(1, 3), (1, 4)])]),
    make_case((3, 4), [("permute", [1, 0])]),
    make_case((3, 4), [("slice", [(1, 2), (0, 4)]), ("expand", [3, 4])]),
    make_case((2, 3), [("flip", [0, 1])]),
]


def exercise(max_examples: int = 15) -> BuildExercise:
    """The checker for the reader's ``read_view(buffer, offset, strides, shape)``."""
    return BuildExercise(
        "read_view: a view's values, read through its offset and strides",
        cases=_cases(),
        run=_run,
        references=[Reference("the view's values (NumPy)", _expected, rtol=0, atol=0)],
        rules=Rules(no_numpy=True),
        hints=[  # a failure opens the first hint of its kind not yet open
            ("shape", "Return one flat list of prod(shape) values, in row order, not nested "
             "lists."),
            (("value", "error"), "An element's place in the view is its index [i0, i1, ...], "
             "one number per dim. Visit the indices in row order (the last one fastest): "
             "where in the buffer does each one sit? The picture of the slice follows one."),
            (("value", "error"), "Index [i0, i1, ...] sits at position offset + i0 * strides[0] + "
             "i1 * strides[1] + ...; return buffer[position]. itertools.product(*map(range, "
             "shape)) lists the indices in row order."),
            ("value", "A stride may be 0 (expand: the same element again) or negative (walking "
             "a dim back from an offset at its far end). The formula needs no special case "
             "for either: check the order in which you visit the indices."),
        ],
        reference_solution=read_view,
        examples=EXAMPLES,
        max_examples=max_examples,
        order=("made_by", "offset", "strides", "shape", "buffer"),
    )

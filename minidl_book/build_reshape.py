"""Build exercise of the tensors-and-backends chapter: when is a reshape a view?

The reader writes ``reshape_strides(shape, strides, new_shape)``: the strides that read a
tensor of ``shape`` (laid out with ``strides``, in elements) as ``new_shape`` over the same
buffer and offset, or ``None`` when no strides can and the reshape must copy. It is the rule
behind NumPy's and PyTorch's ``reshape`` (NumPy's ``_attempt_nocopy_reshape``, PyTorch's
``computeStride``): dims of size 1 are never stepped along, so they do not count; the other
old dims fall into stretches, a dim joining the next when ``strides[d] == shape[d + 1] *
strides[d + 1]`` (the walk goes on without a jump); a view exists iff ``new_shape`` cuts into
consecutive groups, one per stretch, each multiplying to its stretch's size. burn-flex's
``Layout::reshape`` (``src/layout.rs`` line 297 at v0.22.0-pre.2) is stricter: a view only
of a contiguous tensor at offset 0.

The cases are real Flex views (``permute``, stepped ``slice``, ``flip``, ``expand``) of a
buffer holding ``100 + position``; the truth is NumPy's own attempt,
``np.reshape(array, new_shape, copy=False)``, which raises when a copy is needed, checked
against minidl's ``reshape`` (a view shares the buffer, a copy does not).
"""

from __future__ import annotations

import math

import numpy as np
from hypothesis import strategies as st

from minidl import Device, Tensor
from minidl_book.build_check import BuildExercise, Reference, Rules
from minidl_book.element_layout import element_offset, element_strides
from minidl_book.strategies import view_steps

__trace_hide__ = True

__all__ = ["PLANTED", "exercise", "make_case", "reshape_strides"]


# ----- the reference solution and planted wrong ones -------------------------------------------
def reshape_strides(shape, strides, new_shape):
    # stretches: old dims read without a jump; dims of size 1 never step
    stretches = []  # [size, stride of the stretch's last dim]
    for n, s in zip(shape, strides):
        if n == 1:
            continue
        if stretches and stretches[-1][1] == n * s:  # no jump: merge
            stretches[-1] = [stretches[-1][0] * n, s]
        else:
            stretches.append([n, s])
    # cut new_shape from the right, one group per stretch; row order inside
    out = [0] * len(new_shape)
    d = len(new_shape) - 1
    for size, stride in reversed(stretches):
        while size > 1:
            if d < 0 or size % new_shape[d]:
                return None  # a new dim would span two stretches: a copy
            out[d] = stride
            stride, size, d = stride * new_shape[d], size // new_shape[d], d - 1
    if any(n != 1 for n in new_shape[:d + 1]):
        return None
    return tuple(out)


def _row_strides(shape, last=1):
    out, step = [], last
    for n in reversed(shape):
        out.append(step)
        step *= n
    return tuple(reversed(out))


def contiguous_only(shape, strides, new_shape):
    """burn-flex's rule: a view only when the tensor is contiguous (in row order)."""
    if tuple(strides) != _row_strides(shape):
        return None
    return _row_strides(new_shape)


def size_one_counted(shape, strides, new_shape):
    """The reference, but a dim of size 1 takes part in the stretches: its stride can cut one."""
    stretches = []
    for n, s in zip(shape, strides):
        if stretches and stretches[-1][1] == n * s:
            stretches[-1] = [stretches[-1][0] * n, s]
        else:
            stretches.append([n, s])
    out, d = [0] * len(new_shape), len(new_shape) - 1
    for size, stride in reversed(stretches):
        while size > 1:
            if d < 0 or size % new_shape[d]:
                return None
            out[d] = stride
            stride, size, d = stride * new_shape[d], size // new_shape[d], d - 1
    if any(n != 1 for n in new_shape[:d + 1]):
        return None
    return tuple(out)


def merge_any(shape, strides, new_shape):
    """Every merge accepted: row-order strides from the last dim's stride, jumps or not."""
    last = next((s for n, s in zip(reversed(shape), reversed(strides)) if n != 1), 1)
    return _row_strides(new_shape, last)


#: name → (wrong solution, the verdict kind it must get, a phrase its verdict must hold)
PLANTED = {
    "contiguous only (burn-flex's rule)": (contiguous_only, "check", "burn-flex"),
    "dims of size 1 counted": (size_one_counted, "check", "size 1 is never stepped"),
    "a merge across a jump accepted": (merge_any, "check", "NumPy copies here"),
}


# ----- the cases ---------------------------------------------------------------------------------
def _read(buffer, offset, strides, shape):
    """The values read through ``strides`` in row order; None when a read leaves the buffer."""
    out = []
    for k in range(math.prod(shape)):
        position, rest = offset, k
        for d in reversed(range(len(shape))):
            position += (rest % shape[d]) * strides[d]
            rest //= shape[d]
        if not 0 <= position < len(buffer):
            return None
        out.append(buffer[position])
    return out


def make_case(base_shape, steps, new_shape) -> dict:
    """A Flex view of an ``arange``-like buffer made by ``steps`` (``(op, argument)``), to be
    reshaped to ``new_shape``; the truth from NumPy, checked against minidl's reshape."""
    size = math.prod(base_shape)
    base = Tensor.from_numpy((100 + np.arange(size, dtype=np.float32)).reshape(base_shape),
                             Device.flex())
    view, made = base, f"a [{', '.join(map(str, base_shape))}] tensor"
    for op, arg in steps:
        view = getattr(view, op)(arg)
        made += f".{op}({arg})"
    array = view.primitive.backend_tensor
    buffer = base.primitive.backend_tensor.reshape(-1)
    new_shape = tuple(new_shape)
    try:
        numpy_view = np.reshape(array, new_shape, copy=False)
    except ValueError:
        numpy_view = None
    minidl_shares = np.shares_memory(view.reshape(list(new_shape)).primitive.backend_tensor,
                                     buffer)
    if minidl_shares != (numpy_view is not None):
        raise AssertionError(f"{made}.reshape({list(new_shape)}): NumPy and minidl disagree")
    return {"made_by": made, "shape": tuple(array.shape), "strides": element_strides(array),
            "new_shape": new_shape, "_offset": element_offset(array, buffer),
            "_buffer": [int(v) for v in buffer], "_view": numpy_view is not None,
            "_numpy_strides": None if numpy_view is None else element_strides(numpy_view),
            "_expected": [int(v) for v in array.ravel()]}


def _regroup(draw, sizes) -> tuple:
    """A shape of the same size: the prime factors of ``sizes``, in order or not, cut into
    consecutive groups, with some 1s put in."""
    primes = []
    for n in sizes:
        p = 2
        while n > 1:
            while n % p == 0:
                primes.append(p)
                n //= p
            p += 1
    if len(primes) > 1 and draw(st.integers(0, 3)) == 0:
        primes = list(draw(st.permutations(primes)))
    new, i = [], 0
    while i < len(primes):
        j = draw(st.integers(i + 1, len(primes)))
        new.append(math.prod(primes[i:j]))
        i = j
    for _ in range(draw(st.integers(0, 1))):
        new.insert(draw(st.integers(0, len(new))), 1)
    return tuple(new) or (1,)


@st.composite
def _cases(draw) -> dict:
    shape = tuple(draw(st.lists(st.integers(1, 4), min_size=1, max_size=3)))
    # permute drawn twice as often (it makes the non-contiguous tensors), slices stepped
    ops = ("permute", "permute", "slice", "flip", "expand")
    steps, current = draw(view_steps(shape, ops, slice_steps=2))
    return make_case(shape, steps, _regroup(draw, current))


def _run(solution, case: dict) -> dict:
    got = solution(tuple(case["shape"]), tuple(case["strides"]), tuple(case["new_shape"]))
    values = case["_expected"]  # a copy holds the reshape's values
    if got is not None:
        values = []
        if type(got) in (list, tuple) and len(got) == len(case["new_shape"]) and all(
                type(s) is int for s in got):
            values = _read(case["_buffer"], case["_offset"], tuple(got), case["new_shape"])
    return {"_got": ("returned", got), "values": np.asarray(values or [], dtype=np.float64)}


def _stretches(shape, strides) -> list:
    stretches = []
    for n, s in zip(shape, strides):
        if n == 1:
            continue
        if stretches and stretches[-1][1] == n * s:
            stretches[-1] = [stretches[-1][0] * n, s]
        else:
            stretches.append([n, s])
    return [size for size, _ in stretches]


def _view_check(solution, case, outputs, watch) -> str | None:
    """A specific verdict per slip: a view NumPy makes refused, a copy taken for a view, or
    strides that read the wrong elements."""
    _, got = outputs["_got"]
    shape, strides, new = case["shape"], case["strides"], case["new_shape"]
    if got is not None and (type(got) not in (list, tuple) or len(got) != len(new) or not all(
            type(s) is int for s in got)):
        return (f"return a tuple of {len(new)} ints (one stride per dim of new_shape), or None "
                f"when the reshape must copy; you returned {got!r}")
    stretches = _stretches(shape, strides)
    if got is None and case["_view"]:
        text = (f"too strict: NumPy makes a view here, with strides "
                f"{case['_numpy_strides']}, and so does PyTorch's reshape. Read without "
                f"dims of size 1, the old dims form stretches of sizes {stretches} (a dim "
                f"joins the next when its stride is the next one's size × stride), and {new} "
                "cuts into groups of those sizes.")
        if size_one_counted(shape, strides, new) is None:
            text += (" A dim of size 1 is never stepped along: its stride can be anything, "
                     "so it never cuts a stretch.")
        kept = [(n, s) for n, s in zip(shape, strides) if n != 1]
        if tuple(s for _, s in kept) != _row_strides([n for n, _ in kept]):
            text += (" The tensor is not contiguous: contiguity is enough for a view, not "
                     "needed. (Requiring it is burn-flex's stricter rule, a view only of a "
                     "contiguous tensor at offset 0.)")
        return text
    if got is not None and not case["_view"]:
        read = _read(case["_buffer"], case["_offset"], tuple(got), new)
        shown = "leaves the buffer" if read is None else f"gives {read[:8]}"
        return (f"NumPy copies here (PyTorch's reshape too): without dims of size 1 the "
                f"old dims form stretches of sizes {stretches}, two dims meeting at a jump (a "
                f"stride that is not the next one's size × stride) stay apart, and {new} cannot "
                f"be cut into groups of those sizes. Reading through your strides {tuple(got)} "
                f"{shown}; the reshape holds {case['_expected'][:8]}: return None.")
    if got is not None:
        read = _read(case["_buffer"], case["_offset"], tuple(got), new)
        if read != case["_expected"]:
            shown = "leaves the buffer" if read is None else f"gives {read[:8]}"
            return (f"a view, right, but reading through your strides {tuple(got)} {shown} "
                    f"where the reshape holds {case['_expected'][:8]}; NumPy's strides are "
                    f"{case['_numpy_strides']} (a dim of size 1 may take any stride).")
    return None


EXAMPLES = [
    make_case((3, 4), [], (2, 6)),  # contiguous: every rule agrees
    make_case((3, 4), [("permute", [1, 0])], (12,)),  # grid.T.reshape([12]): a copy
    make_case((3, 4), [("permute", [1, 0])], (2, 2, 3)),  # grid.T.reshape([2, 2, 3]): a view
    make_case((1, 2, 3), [("permute", [1, 0, 2])], (6,)),  # a size-1 dim between: a view
]


def exercise(max_examples: int = 20) -> BuildExercise:
    """The checker for the reader's ``reshape_strides(shape, strides, new_shape)``."""
    return BuildExercise(
        "reshape_strides: a view's strides for a reshape, or None for a copy",
        cases=_cases(),
        run=_run,
        checks=[_view_check],
        references=[Reference("NumPy's reshape(copy=False)",
                              lambda c: {"values": np.asarray(c["_expected"], np.float64)},
                              rtol=0, atol=0)],
        rules=Rules(no_numpy=True),
        hints=[
            ("check", "As in the A-F picture: walk the old tensor in row order and note "
             "where the buffer position jumps, between which old dims. A new dim has one "
             "stride, so it can hold no jump inside it."),
            ("check", "Drop the dims of size 1 (nothing steps along them). Dim d and the "
             "next one belong to one stretch when strides[d] == shape[d + 1] * strides[d + 1]; "
             "elsewhere the walk jumps. A size-1 dim's stride means nothing, yet kept in "
             "it can cut a stretch: shape (2, 1, 3, 2), strides (12, 1, 4, 1) (a size-1 dim a "
             "permute moved from the end, keeping stride 1) has stretches [2, 3] and [2], since "
             "12 == 3 * 4; with the size-1 dim kept, 12 != 1 * 1 would split the first."),
            ("check", "Cut new_shape from the right into consecutive groups, one per stretch, "
             "each multiplying to its stretch's size (new dims of size 1 fit anywhere), else "
             "return None. Inside a group the strides are row order from the stretch's last "
             "stride."),
        ],
        reference_solution=reshape_strides,
        examples=EXAMPLES,
        max_examples=max_examples,
        order=("made_by", "shape", "strides", "new_shape"),
    )

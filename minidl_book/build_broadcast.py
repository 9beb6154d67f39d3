"""Build exercise of the tensors-and-backends chapter: broadcast an operand by its strides.

The reader writes ``broadcast_strides(shape, strides, out_shape)``: the strides that read an
operand of ``shape`` (laid out with ``strides``) as if it had ``out_shape``, the arithmetic a
kernel's launcher does for each operand of an element-wise op (minidl's Wgpu does it in
``minidl/backends/wgpu/ops.py``'s ``_block``). The chapter teaches burn's rule: equal ranks
only, and along each dim the sizes are equal (the stride is kept) or the operand's is 1 (its
stride becomes 0: the same element for every place); anything else raises ``ValueError``.

The checker reads the operand through the returned strides (the reference ``read_view``) and
compares with NumPy's ``broadcast_to``; it also gives shapes that must be refused: a rank
mismatch (NumPy would pad with 1s; burn does not), an operand larger than the output along a
dim (broadcasting the wrong side), and two sizes neither of which is 1.
"""

from __future__ import annotations

import math

import numpy as np
from hypothesis import strategies as st

from minidl_book.build_check import BuildExercise, Reference, Rules
from minidl_book.build_view import read_view

__trace_hide__ = True

__all__ = ["PLANTED", "broadcast_strides", "exercise", "make_case", "yours_or_reference"]


# ----- the reference solution and planted wrong ones -------------------------------------------
def broadcast_strides(shape, strides, out_shape):
    if len(shape) != len(out_shape):
        raise ValueError(f"ranks differ: {shape} and {out_shape}")
    out = []
    for n, s, m in zip(shape, strides, out_shape):
        if n == m:
            out.append(s)  # the same size: walk the dim as before
        elif n == 1:
            out.append(0)  # a size of 1 stretches: the same element at every place
        else:
            raise ValueError(f"size {n} cannot be read as size {m}")
    return tuple(out)


def stride_kept(shape, strides, out_shape):
    """Checks the shapes, but keeps the stride of a dim that stretches."""
    broadcast_strides(shape, strides, out_shape)
    return tuple(strides)


def wrong_side(shape, strides, out_shape):
    """Stride 0 wherever the sizes differ, whichever side has the 1 (or none has)."""
    if len(shape) != len(out_shape):
        raise ValueError("ranks differ")
    return tuple(s if n == m else 0 for n, s, m in zip(shape, strides, out_shape))


def numpy_rank(shape, strides, out_shape):
    """NumPy's rule: the shorter shape is padded with leading 1s (stride 0)."""
    pad = len(out_shape) - len(shape)
    if pad < 0:
        raise ValueError("operand has more dims than the output")
    return (0,) * pad + broadcast_strides(shape, strides, out_shape[pad:])


#: name → (wrong solution, the verdict kind it must get, a phrase its verdict must hold)
PLANTED = {
    "stride kept instead of 0": (stride_kept, "check", "its stride must be 0"),
    "broadcasting the wrong side": (wrong_side, "check", "Only the operand's size-1"),
    "rank mismatch accepted": (numpy_rank, "check", "equal rank only"),
}


# ----- the cases ---------------------------------------------------------------------------------
def make_case(shape, out_shape, order=None, offset: int = 0) -> dict:
    """An operand of ``shape`` stored with its dims laid out in ``order`` (outermost first;
    row order by default) at ``offset`` in a buffer holding ``100 + position``, read as
    ``out_shape``. ``_why`` names why the shapes must be refused ("" when they broadcast)."""
    shape, out_shape = tuple(shape), tuple(out_shape)
    order = list(range(len(shape))) if order is None else list(order)
    strides, step = [0] * len(shape), 1
    for d in reversed(order):
        strides[d] = step
        step *= shape[d]
    size = offset + math.prod(shape)
    buffer = [100 + p for p in range(size)]
    why = ""
    if len(shape) != len(out_shape):
        why = "rank"
    else:
        for n, m in zip(shape, out_shape):
            if n != m and n != 1:
                why = "wrong side" if m == 1 else "sizes"
                break
    case = {"shape": shape, "strides": tuple(strides), "out_shape": out_shape,
            "offset": offset, "buffer": buffer, "_why": why}
    if not why:
        view = np.lib.stride_tricks.as_strided(
            np.asarray(buffer, dtype=np.float64)[offset:], shape,
            tuple(8 * s for s in strides), writeable=False)
        case["_expected"] = np.broadcast_to(view, out_shape).ravel().copy()
    else:
        case["_expected"] = np.zeros(0)
    return case


@st.composite
def _cases(draw) -> dict:
    out_shape = tuple(draw(st.lists(st.integers(1, 4), min_size=1, max_size=3)))
    rank = len(out_shape)
    kind = draw(st.sampled_from(["ok", "ok", "ok", "rank", "wrong side", "sizes"]))
    shape = [n if draw(st.booleans()) else 1 for n in out_shape]
    if kind == "rank":
        shape = shape[1:] if rank > 1 and draw(st.booleans()) else [1] + shape
    elif kind == "wrong side":
        d = draw(st.integers(0, rank - 1))
        out_shape = out_shape[:d] + (1,) + out_shape[d + 1:]
        shape[d] = draw(st.integers(2, 4))
    elif kind == "sizes":
        d = draw(st.integers(0, rank - 1))
        m = max(out_shape[d], 2)
        out_shape = out_shape[:d] + (m,) + out_shape[d + 1:]
        shape[d] = m + draw(st.integers(1, 2))
    order = list(draw(st.permutations(range(len(shape)))))
    return make_case(shape, out_shape, order, draw(st.integers(0, 3)))


def _run(solution, case: dict) -> dict:
    try:
        got = solution(tuple(case["shape"]), tuple(case["strides"]), tuple(case["out_shape"]))
    except ValueError as err:
        return {"_got": ("refused", str(err)), "values": np.zeros(0)}
    values = np.zeros(0)
    if type(got) in (list, tuple) and len(got) == len(case["out_shape"]) and all(
            type(s) is int for s in got):
        try:
            values = np.asarray(read_view(case["buffer"], case["offset"], tuple(got),
                                          tuple(case["out_shape"])), dtype=np.float64)
        except IndexError:
            values = np.full(math.prod(case["out_shape"]), np.nan)
    return {"_got": ("returned", got), "values": values}


def _dims_check(solution, case, outputs, watch) -> str | None:
    """A specific verdict per slip: refused or not as burn's rule says, then dim by dim."""
    how, got = outputs["_got"]
    shape, strides, out = case["shape"], case["strides"], case["out_shape"]
    why = case["_why"]
    if why and how == "returned":
        if why == "rank":
            return (f"shape {shape} has rank {len(shape)} and out_shape {out} rank {len(out)}: "
                    f"you returned {got}. The chapter's rule (burn's) broadcasts at equal rank "
                    "only, with no padding by leading 1s: raise ValueError, as "
                    "`m + Tensor.ones([3], device)` did.")
        d = next(d for d, (n, m) in enumerate(zip(shape, out)) if n != m and n != 1)
        if why == "wrong side":
            return (f"dim {d}: the operand has size {shape[d]} and the output {out[d]}; you "
                    f"returned {got}. Only the operand's size-1 dims stretch; an operand "
                    "larger than the output cannot be read as the smaller size: raise "
                    "ValueError.")
        return (f"dim {d}: sizes {shape[d]} and {out[d]}, neither is 1, so nothing can "
                f"stretch; you returned {got}. Raise ValueError.")
    if not why and how == "refused":
        return (f"shape {shape} broadcasts to {out} (equal ranks; each dim equal or 1), but "
                f"your code raised ValueError: {got}")
    if why:
        return None
    if type(got) not in (list, tuple) or len(got) != len(out) or not all(
            type(s) is int for s in got):
        return (f"return a tuple of {len(out)} ints, one stride per dim of out_shape; "
                f"you returned {got!r}")
    for d, (n, s, m, g) in enumerate(zip(shape, strides, out, got)):
        if m == 1 or g == (s if n == m else 0):
            continue  # a dim of size 1 in the output reads one place: any stride will do
        if n == 1:
            kept = " (the stride it had: you kept it)" if g == s else ""
            return (f"dim {d}: the operand has size 1 and the output {m}: every place along "
                    f"it reads the same element, so its stride must be 0; you returned "
                    f"{g}{kept}.")
        return (f"dim {d}: the operand and the output both have size {m}: nothing stretches, "
                f"keep its stride {s}; you returned {g}.")
    return None


EXAMPLES = [
    make_case((2, 1), (2, 3)),  # x - x.mean_dim(1): the mean
    make_case((2, 3), (2, 1)),  # the wrong side
    make_case((3,), (4, 3)),  # NumPy's rule, not burn's
    make_case((1, 3), (4, 3), order=[1, 0]),
]


def exercise(max_examples: int = 20) -> BuildExercise:
    """The checker for the reader's ``broadcast_strides(shape, strides, out_shape)``."""
    return BuildExercise(
        "broadcast_strides: read an operand as the output's shape",
        cases=_cases(),
        run=_run,
        checks=[_dims_check],
        references=[Reference("NumPy's broadcast_to", lambda c: {"values": c["_expected"]},
                              rtol=0, atol=0)],
        rules=Rules(no_numpy=True),
        hints=[
            (("check", "value", "error"), "Go dim by dim and compare the operand's size n with "
             "the output's m. Three cases: n == m, n == 1 < m, and everything else."),
            (("check", "value"), "n == m: the operand walks that dim as before (keep its "
             "stride). n == 1: every place reads the one element (stride 0, expand's stride)."),
            (("check", "error"), "Everything else raises ValueError: unequal ranks (no "
             "padding by 1s, unlike NumPy) and sizes where the operand's is not 1."),
        ],
        reference_solution=broadcast_strides,
        examples=EXAMPLES,
        max_examples=max_examples,
        order=("shape", "strides", "out_shape"),
    )


def yours_or_reference(read, stretch) -> tuple:
    """The reader's ``read_view`` and ``broadcast_strides`` where each is defined and passes
    its checker, else the reference in its place; prints one line saying which ran."""
    from minidl_book import build_view

    chosen, used = [], []
    for name, yours, ref, check in (
            ("read_view", read, build_view.read_view, build_view.exercise),
            ("broadcast_strides", stretch, broadcast_strides, exercise)):
        try:
            ok = yours is not None and check(max_examples=5).find_failure(yours) is None
        except Exception:  # noqa: BLE001 - an unfinished solution falls back to the reference
            ok = False
        chosen.append(yours if ok else ref)
        used.append(f"your {name}" if ok else f"the reference {name}")
    print("running " + " and ".join(used))
    return tuple(chosen)

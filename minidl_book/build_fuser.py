"""Build exercise of the fusion chapter: the element-wise fuser's rule, ``fits(op, shape)``.

burn-cubecl-fusion's ``ElementwiseFuser`` asks of every op the stream offers it: is it an
element-wise kind it can write as a scalar expression, of a dtype it generates code for, with
a result of the block's shape (inputs that broadcast to it)? The reader writes that
decision. The checker installs it in ``Fusion[Flex]``'s element-wise fuser for one run (a
fresh plan store, so no plan found with the built-in rule is reused), runs a stream that
holds a small vector op, an element-wise chain with a relu in it (``lower_elem``: float inputs,
a bool result, then ``mask_fill``: a rule that asks every input to have the result's dtype
splits the chain there) and a square matmul (its result has the
chain's shape: a rule that tests shapes but not kinds takes it into the block), then the chain
again with the
``[1, d]`` operand on the left of the product (``b.exp() * x``: a rule that tests the first
input's shape instead of the result's takes that product into the ``[1, d]`` block; one that
opens a block with the first input's shape refuses it, and the checker asks that chain to be
one element-wise kernel too), and
checks the values against eager Flex and PyTorch, and that the plan ran the chain as one
element-wise kernel. Last comes an op on ``x`` flat, ``[n * d]``: as many elements as
the chain's ``[n, d]``, another shape (a rule that compares element counts would take it into
the chain's block, whose loop indexes every tensor with ``[n, d]``: the checker keeps any op of
another shape out of a block and says so). Then ``exp(x @ w * s + 1)``: a matmul that opens a
block (a rule that tests the kind only once the block has a shape takes it in). Last,
``x`` cast to float16, doubled, cast back: the kernels are generated for float32, float64 and
bool only (a rule without ``dtypes_ok`` takes the float16 ops; the checker keeps them out and
says so, as the real generator would raise ``NotImplementedError``).
"""

from __future__ import annotations

import math

import numpy as np
import torch
from hypothesis import strategies as st

from minidl.fusion.fusers import _broadcasts_to, _dtypes_ok
from minidl.fusion.ir import ELEMENTWISE, OperationIr
from minidl_book.build_check import BuildExercise, Reference
from minidl_book.strategies import float32_arrays

__all__ = ["ELEMENTWISE", "PLANTED", "broadcasts_to", "dtypes_ok", "exercise", "fits"]

#: ``broadcasts_to(shape, full)``: NumPy's broadcasting takes ``shape`` to ``full``.
broadcasts_to = _broadcasts_to
#: ``dtypes_ok(op)``: the op's inputs and result are float32, float64 or bool.
dtypes_ok = _dtypes_ok

#: The kinds of the chain the plan must show inside one element-wise block.
CHAIN = ["mul", "add", "lower_elem", "mask_fill", "tanh", "mul_scalar"]
#: relu's two ops (its protocol default): a comparison with a bool result, then a fill.
RELU = ("lower_elem", "mask_fill")
#: The chain ``(b.exp() * x + b).tanh() * s``: its product, opened by an op whose first input
#: is ``b.exp()`` ([1, d]), must open the [n, d] block that holds the rest.
LEFT_CHAIN = ["mul", "add", "tanh", "mul_scalar"]


def fits(op: OperationIr, shape: tuple[int, ...] | None) -> bool:
    """May ``op`` join an element-wise block of result ``shape`` (``None``: empty)?"""
    if op.kind not in ELEMENTWISE or not dtypes_ok(op):
        return False
    shape = op.out.shape if shape is None else shape
    fits_shape = all(broadcasts_to(t.shape, shape) for t in op.inputs)
    return op.out.shape == shape and fits_shape


# ----- planted wrong rules -------------------------------------------------------------------
def fits_everything(op, shape):
    """Takes the matmul too: the loop kernel has no expression for it."""
    return True


def fits_nothing(op, shape):
    return False


def fits_any_shape(op, shape):
    """Forgets the shape: the block's loop runs over the first op's [d] elements only."""
    return op.kind in ELEMENTWISE and dtypes_ok(op)


def fits_any_kind(op, shape):
    """Tests the shapes only: the square matmul, of the block's shape, joins the chain."""
    shape = op.out.shape if shape is None else shape
    return op.out.shape == shape and all(broadcasts_to(t.shape, shape) for t in op.inputs)


def fits_kind_once_open(op, shape):
    """Tests the kind only once the block is open: the matmul that opens a block (after
    ``k``) becomes an element-wise block the loop kernel has no expression for."""
    return shape is None or (op.kind in ELEMENTWISE and op.out.shape == shape)


def fits_unary_only(op, shape):
    """Right shapes, but only ops of one input: the chain splits."""
    return fits(op, shape) and len(op.inputs) == 1


def fits_first_input(op, shape):
    """Tests the first input's shape, not the result's: right while the [1, d] operand is
    on the right of the product, wrong for ``b.exp() * x``."""
    if op.kind not in ELEMENTWISE or not dtypes_ok(op):
        return False
    return shape is None or op.inputs[0].shape == shape


def fits_first_input_opens(op, shape):
    """Opens a block with the first input's shape, not the result's: ``b.exp() * x`` (its
    first input [1, d], its result [n, d]) is refused and runs alone on Flex: a lost fusion."""
    if op.kind not in ELEMENTWISE or not dtypes_ok(op):
        return False
    shape = op.inputs[0].shape if shape is None else shape
    fits_shape = all(broadcasts_to(t.shape, shape) for t in op.inputs)
    return op.out.shape == shape and fits_shape


def fits_equal_inputs(op, shape):
    """Asks every input to have the block's shape: ``x * b.exp()`` (``b`` is [1, d]) is
    refused, though ``b`` broadcasts to the block, and the chain splits there."""
    if op.kind not in ELEMENTWISE or not dtypes_ok(op):
        return False
    shape = op.out.shape if shape is None else shape
    return op.out.shape == shape and all(t.shape == shape for t in op.inputs)


def fits_same_count(op, shape):
    """Compares element counts, not shapes: ``[n * d]`` joins an ``[n, d]`` block."""
    if op.kind not in ELEMENTWISE or not dtypes_ok(op):
        return False
    return shape is None or math.prod(op.out.shape) == math.prod(shape)


def fits_any_dtype(op, shape):
    """No dtype test: the float16 ops join a block no generator writes code for."""
    shape = op.out.shape if shape is None else shape
    fits_shape = all(broadcasts_to(t.shape, shape) for t in op.inputs)
    return op.kind in ELEMENTWISE and op.out.shape == shape and fits_shape


def fits_same_dtype(op, shape):
    """Asks every input to have the result's dtype: relu's comparison (float inputs, a bool
    result) and its fill (a bool mask) are refused, and the chain splits at relu."""
    return fits(op, shape) and all(t.dtype == op.out.dtype for t in op.inputs)


#: name → (wrong rule, the verdict kind it must get)
PLANTED = {
    "accepts every op": (fits_everything, "error"),
    "refuses every op": (fits_nothing, "check"),
    "ignores the shape": (fits_any_shape, "check"),
    "ignores the kind": (fits_any_kind, "error"),
    "tests the kind only in an open block": (fits_kind_once_open, "error"),
    "one-input ops only": (fits_unary_only, "check"),
    "tests the first input's shape": (fits_first_input, "check"),
    "opens a block with the first input's shape": (fits_first_input_opens, "check"),
    "compares element counts": (fits_same_count, "check"),
    "requires equal input shapes": (fits_equal_inputs, "check"),
    "requires the result's dtype": (fits_same_dtype, "check"),
    "no dtype test": (fits_any_dtype, "check"),
}


# ----- the checker ---------------------------------------------------------------------------
def _cases() -> st.SearchStrategy:
    arrays = float32_arrays(2)

    def case(n, d, s):  # w is square: the product has the chain's shape
        return st.fixed_dictionaries({"x": arrays(n, d), "b": arrays(1, d), "w": arrays(d, d),
                                      "s": st.just(s)})

    dims = st.tuples(st.integers(2, 4), st.integers(2, 5), st.sampled_from([0.5, 2.0, -1.5]))
    return dims.flatmap(lambda d: case(*d))


def _stream(dev, case: dict) -> dict:
    """A [1, d] op, the chain (a relu inside), a matmul, the chain with ``b``'s exp on the left (``g``), then
    ``xf * s + 1`` with ``xf`` the values of ``x`` flat, of shape [n * d] (``k``)."""
    from minidl import Tensor

    x, b, w = (Tensor.from_numpy(case[k], dev) for k in ("x", "b", "w"))
    xf = Tensor.from_numpy(case["x"].reshape(-1), dev)
    h = (x * b.exp() + b).relu().tanh() * case["s"]
    out = h.matmul(w)
    g = (b.exp() * x + b).tanh() * case["s"]
    k = xf * case["s"] + 1.0
    m = (x.matmul(w) * case["s"] + 1.0).exp()  # a matmul opens a block
    half = (x.cast("float16") * 2.0).cast("float32")  # no kernel is generated for float16
    return {"h": h.to_numpy(), "out": out.to_numpy(), "g": g.to_numpy(), "k": k.to_numpy(),
            "m": m.to_numpy(), "half": half.to_numpy()}


def _run(solution, case: dict) -> dict:
    """:func:`_stream` on ``Fusion[Flex]`` with ``solution`` as the element-wise fuser's
    ``fits`` and a fresh plan store (both put back afterwards); outputs the values and
    ``_blocks``, the blocks of the drain's plan."""
    from minidl import Device
    from minidl.backends.flex.fusion import FusionFlex
    from minidl.debug import fusion_plan
    from minidl.fusion import ElementwiseFuser
    from minidl.fusion.plan import ExecutionPlanStore

    stream = FusionFlex.stream
    FusionFlex.sync()
    processor = stream.processor
    fusers, store = processor.explorer.fusers, processor.store
    mixed: list[tuple] = []
    odd_dtype: list[tuple] = []

    def guarded(op, shape):  # an op of another shape is noted and kept out: its loop would
        ok = solution(op, shape)  # index out of bounds, not just compute a wrong value
        if ok and not dtypes_ok(op):  # no generator writes code for it: kept out, noted
            odd_dtype.append((op.kind, [str(t.dtype) for t in (*op.inputs, op.out)]))
            return False
        if ok and shape is not None and tuple(op.out.shape) != tuple(shape):
            mixed.append((op.kind, tuple(op.out.shape), tuple(shape)))
            return False
        return ok

    rule = type("ReaderElementwiseFuser", (ElementwiseFuser,), {"fits": staticmethod(guarded)})
    processor.explorer.fusers = [rule() if isinstance(f, ElementwiseFuser) else f for f in fusers]
    processor.store = ExecutionPlanStore()
    try:
        with stream.recording_every_op():  # the exercise's tensors are small
            out = _stream(Device.fusion(), case)
        plan = fusion_plan(backend=FusionFlex)
    finally:
        processor.explorer.fusers, processor.store = fusers, store
    return {**out, "_blocks": plan.blocks, "_mixed": mixed, "_dtype": odd_dtype}


def _torch(case: dict) -> dict:
    x, b, w = (torch.from_numpy(case[k]) for k in ("x", "b", "w"))
    h = torch.tanh(torch.relu(x * b.exp() + b)) * case["s"]
    return {"h": h, "out": h @ w, "g": torch.tanh(b.exp() * x + b) * case["s"],
            "k": x.reshape(-1) * case["s"] + 1.0, "m": torch.exp(x @ w * case["s"] + 1.0),
            "half": (x.half() * 2.0).float()}


def _eager_flex(case: dict) -> dict:
    from minidl import Device

    return _stream(Device.flex(), case)


def _one_kernel(solution, case, outputs, trace) -> str | None:
    blocks = outputs["_blocks"]
    chain = [b for b in blocks if b.fuser == "elementwise" and all(k in b.kinds for k in CHAIN)]
    if chain:
        return None
    shown = "".join(f"\n    {b.fuser or 'on Flex'}: {' + '.join(b.kinds)}" for b in blocks)
    split = any(b.fuser is None and b.kinds and b.kinds[0] in CHAIN[:2] for b in blocks)
    at_relu = any(b.fuser is None and b.kinds and b.kinds[0] in RELU for b in blocks)
    why = ("\n  The chain's mul and add read b, of shape [1, d]: it broadcasts to the "
           "block's [n, d],\n  so it may join; only the result must have the block's "
           "shape." if split else "")
    if at_relu and not split:
        why = ("\n  relu is lower_elem (float inputs, a bool result), then mask_fill (a "
               "bool mask):\n  one kernel holds values of several dtypes, as dtypes_ok "
               "allows; do not ask for one dtype.")
    return (f"Rule broken: the chain {' -> '.join(CHAIN)} must be fused into\n"
            f"  one element-wise kernel; the plan ran {len(blocks)} blocks:{shown}{why}")


def _left_operand(solution, case, outputs, trace) -> str | None:
    blocks = outputs["_blocks"]
    if any(b.fuser == "elementwise" and b.kinds[:4] == LEFT_CHAIN for b in blocks):
        return None
    shown = "".join(f"\n    {b.fuser or 'on Flex'}: {' + '.join(b.kinds)}" for b in blocks)
    return (f"Rule broken: (b.exp() * x + b).tanh() * s ({' -> '.join(LEFT_CHAIN)}) must be\n"
            f"  one element-wise kernel; the plan ran {len(blocks)} blocks:{shown}\n"
            "  Its product's first input, b.exp(), is [1, d] and its result [n, d]: an empty "
            "block\n  takes the shape of the op's result, never of an input.")


def _one_shape(solution, case, outputs, trace) -> str | None:
    if not outputs["_mixed"]:
        return None
    kind, got, block = outputs["_mixed"][0]
    why = ("equal element counts are not enough, compare the shapes themselves"
           if math.prod(got) == math.prod(block) else "the result must have the block's shape")
    return (f"Rule broken: your rule let {kind} (result {list(got)}) join a block of shape "
            f"{list(block)}.\n  The block's loop indexes every tensor with that one shape "
            f"(the checker kept the op out, or the kernel would read out of bounds):\n  {why}.")


def _fusable_dtypes(solution, case, outputs, trace) -> str | None:
    if not outputs["_dtype"]:
        return None
    kind, dtypes = outputs["_dtype"][0]
    return (f"Rule broken: your rule let {kind} ({' -> '.join(dtypes)}) join a block.\n"
            "  The generators write kernels for float32, float64 and bool only (the "
            "checker kept\n  the op out, or the launch would raise NotImplementedError): "
            "test dtypes_ok(op).")


def _fixed_case() -> dict:
    """A case always tried first: every planted rule fails on it whatever hypothesis draws
    (x square, so a matmul's result has the block's shape and only its kind keeps it out)."""
    rng = np.random.default_rng(0)
    x, b, w = (rng.normal(size=shape).astype(np.float32) for shape in ((3, 3), (1, 3), (3, 3)))
    return {"x": x, "b": b, "w": w, "s": 2.0}


def exercise(max_examples: int = 8) -> BuildExercise:
    """The checker for the reader's ``fits(op, shape)``."""
    return BuildExercise(
        "the element-wise fuser's rule",
        cases=_cases(),
        run=_run,
        references=[Reference("eager Flex", _eager_flex, rtol=1e-5, atol=1e-6),
                    Reference("PyTorch", _torch, rtol=1e-5, atol=1e-5)],
        checks=[_fusable_dtypes, _one_shape, _one_kernel, _left_operand],
        hints=[
            "A block is one loop over one shape: the first op's result fixes it.",
            ("error", "Only kinds in ELEMENTWISE have a scalar expression the kernel can "
             "write."),
            ("check", "Values of several dtypes live in one kernel: relu's comparison "
             "has float inputs and a bool result."),
            ("check", "An empty block takes the shape of the op's result: b.exp() * x, "
             "with b of [1, d], opens an [n, d] block."),
            ("check", "The result must have the block's shape; an input need not: it "
             "must only broadcast to it."),
        ],
        reference_solution=fits,
        examples=[_fixed_case()],
        max_examples=max_examples,
        order=("x", "b", "w", "s"),
    )

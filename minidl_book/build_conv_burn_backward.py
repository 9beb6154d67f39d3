"""Build exercise of the conv-backward chapter: conv2d's backward as burn's two defaults.

Mirrors burn-backend's ``ModuleOps`` defaults (``src/backend/ops/modules/conv.rs`` at
v0.22.0-pre.2): ``conv2d_x_backward`` (:323-364) is ``B::conv_transpose2d(output_grad,
weight)`` with the forward's stride, padding and dilation and ``padding_out`` from
``calculate_padding_out`` (:1407); ``conv2d_weight_grad_no_groups`` (:857-883) is
``B::conv2d`` of ``x`` by ``output_grad``, both with dims 0 and 1 swapped, under
``ConvOptions::new(dilation, padding, stride, 1)``, swapped back and cropped to the
weight's shape. The reader writes ``conv2d_backward(B, x, weight, grad, options)`` that
way; the checker installs it as ``Autodiff[Flex]``'s conv2d step (the harness of
:mod:`minidl_book.build_conv2d_backward`, even padding only: burn pads uneven pads as a
separate op first) and compares with PyTorch. A named check recognises each planted slip
by the numbers or shapes it gives.
"""

from __future__ import annotations

from hypothesis import strategies as st

from minidl.backend.options import ConvOptions, ConvTransposeOptions
from minidl_book.build_check import BuildExercise, Reference, Rules
from minidl_book.build_conv2d_backward import _case, _describe, _run, _same, _torch

__trace_hide__ = True  # the trace shows the reader's code and what it dispatched

__all__ = ["PLANTED", "calculate_padding_out", "conv2d_backward", "exercise"]


def calculate_padding_out(kernel_size: int, stride: int, padding: int, dilation: int,
                          size_in: int, size_out: int) -> int:
    """burn-backend's ``calculate_padding_out`` (conv.rs:1407): the input rows past the
    last window's reach, which a transposed conv must add back (0 when stride <= 1)."""
    if stride <= 1:
        return 0
    dilated_kernel = dilation * (kernel_size - 1) + 1
    covered = (size_out - 1) * stride + dilated_kernel - 2 * padding
    return max(size_in - covered, 0)


def conv2d_backward(B, x, weight, grad, options):
    k1, k2 = weight.shape[2], weight.shape[3]
    padding_out = [calculate_padding_out(k, s, p, d, n_in, n_out)
                   for k, s, p, d, n_in, n_out in zip(
                       (k1, k2), options.stride, options.padding, options.dilation,
                       x.shape[2:], grad.shape[2:])]
    d_x = B.conv_transpose2d(grad, weight, None, ConvTransposeOptions(
        options.stride, options.padding, padding_out, options.dilation, 1))
    swapped = B.conv2d(B.float_swap_dims(x, 0, 1), B.float_swap_dims(grad, 0, 1), None,
                       ConvOptions(options.dilation, options.padding, options.stride, 1))
    d_w = B.float_swap_dims(swapped, 0, 1)  # [o, c, ., .]
    d_w = B.float_slice(d_w, [slice(None), slice(None), slice(0, k1), slice(0, k2)])
    return d_x, d_w


def _variant(*, padding_out=True, trade=True, crop=True, swap=True, swap_back=True,
             pad=True):
    """The reference with one slip: ``padding_out`` left at 0, the forward's stride and
    dilation kept in place in the weight's conv, no crop, ``x`` and ``grad`` not swapped
    (``grad`` used as the kernel as it is), the result not swapped back, the weight's
    conv without the forward's padding."""

    def backward(B, x, weight, grad, options):
        k1, k2 = weight.shape[2], weight.shape[3]
        po = (0, 0)
        if padding_out:
            po = [calculate_padding_out(k, s, p, d, a, b) for k, s, p, d, a, b in zip(
                (k1, k2), options.stride, options.padding, options.dilation,
                x.shape[2:], grad.shape[2:])]
        d_x = B.conv_transpose2d(grad, weight, None, ConvTransposeOptions(
            options.stride, options.padding, po, options.dilation, 1))
        s, d = (options.dilation, options.stride) if trade else (options.stride,
                                                                 options.dilation)
        xs, gs = x, grad
        if swap:
            xs, gs = B.float_swap_dims(x, 0, 1), B.float_swap_dims(grad, 0, 1)
        p = options.padding if pad else (0, 0)
        d_w = B.conv2d(xs, gs, None, ConvOptions(s, p, d, 1))
        if swap_back:
            d_w = B.float_swap_dims(d_w, 0, 1)
        if crop:
            d_w = B.float_slice(d_w, [slice(None), slice(None), slice(0, k1),
                                      slice(0, k2)])
        return d_x, d_w

    return backward


#: slip -> the reference's switches that make it
SLIPS = {
    "padding_out missing": {"padding_out": False},
    "stride and dilation not traded": {"trade": False},
    "crop missing": {"crop": False},
    "no swap": {"swap": False},
    "not swapped back": {"swap_back": False},
    "weight's conv unpadded": {"pad": False},
}

#: name -> (wrong backward, the verdict kind it must get): the unpadded weight's conv
#: fails on the second example (the kernel outgrows the unpadded x), before any check
PLANTED = {name: (_variant(**switches), "error" if "pad" in switches else "check")
           for name, switches in SLIPS.items()}

_UNPADDED = (
    "The weight's conv reads x at s*a + d*i - p, the forward's pixels: give it the "
    "forward's padding (options.padding), not 0.")

_SAID = {
    "padding_out missing": (
        "Your input gradient is short of x's rows or columns: with stride {stride} the "
        "last window does not reach x's end, and conv_transpose2d only covers what the "
        "windows reached. Pass padding_out from calculate_padding_out, one per side."),
    "stride and dilation not traded": (
        "Your weight's conv uses the forward's stride as its stride: here stride "
        "{stride}, dilation {dilation}. In the swapped conv, grad_out is the kernel. Its "
        "entries read pixels one forward stride apart, so the forward's stride is its "
        "dilation, and the forward's dilation is its stride."),
    "crop missing": (
        "Your weight gradient is the swapped conv's whole output, larger than the "
        "weight. burn keeps its top-left k1 x k2 corner: slice 0..k1, 0..k2."),
    "no swap": (
        "Your weight's conv uses x and grad as they come: the batch is then the conv's "
        "batch, and grad's output channels its input channels. Swap dims 0 and 1 of both "
        "first, so the images become the channels the conv sums over."),
    "not swapped back": (
        "Your weight gradient is [c, o, k1, k2], the swapped conv's layout: swap dims 0 "
        "and 1 back to the weight's [o, c, k1, k2]."),
    "weight's conv unpadded": _UNPADDED,
}


def _slip_outputs(case: dict, switches: dict) -> dict | None:
    import numpy as np

    from minidl import Device
    from minidl.backends.flex import Flex

    prims = {k: Flex.float_from_data(case[k], Device.flex()) for k in ("x", "weight", "g")}
    try:
        d_x, d_w = _variant(**switches)(Flex, prims["x"], prims["weight"], prims["g"],
                                        case["options"])
    except Exception:  # noqa: BLE001 - a slip that does not run on this case
        return None
    return {"grad x": np.asarray(d_x, dtype=np.float64),
            "grad weight": np.asarray(d_w, dtype=np.float64)}


def _named_slip(solution, case: dict, outputs: dict, watch) -> str | None:
    """Name the slip whose numbers (or shape) the reader's gradients are."""
    right = _slip_outputs(case, {})
    wrong = [k for k in ("grad x", "grad weight")
             if k in outputs and not _same(outputs[k], right[k])]
    if not wrong:
        return None
    o = case["options"]
    for name, switches in SLIPS.items():
        model = _slip_outputs(case, switches)
        if model is None or all(_same(model[k], right[k]) for k in wrong):
            continue  # this case cannot tell that slip from the right answer
        if all(_same(outputs[k], model[k]) for k in wrong):
            return _SAID[name].format(stride=tuple(o.stride), dilation=tuple(o.dilation))
    return None


class _Exercise(BuildExercise):
    def verdict_for(self, solution, case):  # noqa: D102
        verdict = self._verdict_for(solution, case, "")
        if verdict is not None:
            verdict.inputs = _describe(case)
        return verdict


def _even(seed, n, c, c_out, k, stride, dilation, pad, size=None):
    """A case of the first build's shape with even padding (burn's options have no
    uneven pads) and no bias (its gradient is not this exercise's)."""
    return _case(seed, n, c, c_out, k, stride, dilation, pad + pad, False, size)


def _cases() -> st.SearchStrategy:
    small = st.integers(1, 2)
    pair = st.tuples(st.integers(1, 3), st.integers(1, 3))
    return st.tuples(st.integers(0, 2**16), small, st.integers(1, 3), small, pair, pair,
                     st.tuples(small, small), st.tuples(*[st.integers(0, 2)] * 2)
                     ).map(lambda t: _even(*t))


#: tried first: stride 3 on 7 rows (padding_out 2, the page's case), then a square
#: stride 2 with c == o (no swap and not swapped back run, and give wrong numbers), then
#: c != o with stride 1 and dilation 2, then an uneven stride/dilation pair
EXAMPLES = [
    _even(1, 1, 1, 1, (2, 2), (3, 3), (1, 1), (0, 0), size=(7, 7)),
    _even(2, 2, 2, 2, (2, 2), (2, 2), (1, 1), (1, 1), size=(7, 6)),
    _even(3, 2, 3, 2, (2, 3), (1, 2), (2, 1), (1, 0)),
    _even(4, 2, 2, 2, (3, 2), (2, 1), (1, 2), (1, 1), size=(8, 7)),
]

_OWN = r"^(Flex|Wgpu|Autodiff\[\w+\]|ModuleOps)\.conv2d_\w+_backward$"


def exercise(max_examples: int = 6) -> BuildExercise:
    """The checker for the reader's ``conv2d_backward`` written as burn's two defaults."""
    return _Exercise(
        "conv2d's backward as burn's two convs, recorded by Autodiff[Flex]",
        cases=_cases(),
        run=_run,
        references=[Reference("PyTorch", _torch, rtol=1e-4, atol=1e-4)],
        checks=[_named_slip],
        rules=Rules(forbidden={_OWN: "call the backend's own conv2d backward helpers "
                                     "(write them: B.conv_transpose2d and B.conv2d)"},
                    no_numpy=True, helpers=(calculate_padding_out,)),
        hints=[
            (("value", "shape", "check"), "d_x: B.conv_transpose2d(grad, weight, None, "
             "ConvTransposeOptions(stride, padding, padding_out, dilation, 1)). d_w: "
             "B.conv2d of x and grad with dims 0 and 1 swapped, stride and dilation "
             "traded, the forward's padding, swapped back, cropped to the weight's "
             "shape."),
            (("rule",), "Use B's ops (B.conv_transpose2d, B.conv2d, B.float_swap_dims, "
             "B.float_slice) and the given calculate_padding_out."),
            (("error",), "Read the error's last line. \"kernel ... larger than the "
             "padded input\": " + _UNPADDED + " calculate_padding_out takes "
             "(kernel_size, stride, padding, dilation, size_in, size_out) for one side. "
             "\"weight ... does not fit input channels\": the weight's conv takes x and "
             "grad with dims 0 and 1 swapped (B.float_swap_dims(t, 0, 1))."),
        ],
        reference_solution=conv2d_backward,
        examples=EXAMPLES,
        max_examples=max_examples,
    )

"""The checker of the conv-backward chapter's weight-gradient entry exercise.

The reader computes one entry of ``weight.grad`` of :func:`~minidl_book.conv_batch_weight.
batch_case`'s strided conv by hand (burn's ``conv2d_weight_grad_no_groups``: a conv of
``x`` by ``grad_out``, dims 0 and 1 swapped, the forward's stride as its dilation). The
truth is live: the entry of minidl's ``w.grad`` through the recorded ``Conv2dNoBias``
step on ``Device.flex().autodiff()`` (the chapter asserts it equals PyTorch's). Each
plausible slip (one image only, adjacent pixels, the stride as the swapped conv's stride,
the other channel, the tap transposed, a sum over channels) gets its own hint, computed
from the same case so a new case keeps them honest.
"""

from __future__ import annotations

import numpy as np

from minidl import Device, Tensor
from minidl.tensor import module as F
from minidl_book.conv_batch_weight import BatchConv, tap_products
from minidl_book.exercises import _number_of as number_of
from minidl_book.slip_hints import SlipHintExercise

__all__ = ["exercise", "slips", "weight_entry"]


def weight_entry(case: BatchConv, tap: tuple[int, int, int, int]) -> int:
    """``weight.grad[tap]`` of ``(conv2d(x, weight, stride) * grad_out).sum()`` through
    minidl's recorded step (any weight: the gradient does not depend on it)."""
    dev = Device.flex().autodiff()
    x = Tensor.from_numpy(case.x.astype(np.float32), dev)
    w = Tensor.from_numpy(np.ones(case.weight_shape, np.float32), dev).require_grad()
    g = Tensor.from_numpy(case.g.astype(np.float32), dev)
    grads = (F.conv2d(x, w, stride=case.stride) * g).sum().backward()
    return int(np.rint(w.grad(grads).to_numpy()[tap]))


def _total(per_image: list) -> int:
    return sum(xv * gv for terms in per_image for _, _, xv, gv in terms)


def slips(case: BatchConv, tap: tuple[int, int, int, int]) -> dict[str, tuple[int, str]]:
    """Plausible wrong answers for ``weight.grad[tap]``: name -> (value, hint)."""
    o, c, i, j = tap
    s, n_img = case.stride, case.x.shape[0]
    n_out, n_in = case.g.shape[1], case.x.shape[1]
    out: dict[str, tuple[int, str]] = {}
    for n in range(n_img):
        out[f"image {n} only"] = (_total(tap_products(case, tap, images=(n,))), (
            f"That is image {n}'s part alone. Swapped, the images are the conv's input "
            "channels, and a conv sums its input channels: add every image's part."))
    out["adjacent pixels"] = (_total(tap_products(case, tap, stride=1)), (
        f"grad_out's entries are not adjacent on x: output (a, b) read tap ({i}, {j}) at "
        f"pixel ({i} + {s}a, {j} + {s}b), so they sit {s} apart (dilation {s})."))
    out["stride as stride"] = (_total(tap_products(case, tap, stride=1, dilation=s)), (
        f"You slid grad_out by {s}, reading the window that starts at ({s}·{i}, {s}·{j}). "
        f"The forward's stride spaces grad_out's entries (dilation {s}); the next tap "
        "starts one pixel on (the forward's dilation, 1)."))
    other_c, other_o = (c + 1) % n_in, (o + 1) % n_out
    out["other input channel"] = (_total(tap_products(case, (o, other_c, i, j))), (
        f"weight.grad[o, c, i, j] reads x's channel c: here x[:, {c}], not x[:, {other_c}]."))
    out["other output channel"] = (_total(tap_products(case, (other_o, c, i, j))), (
        f"weight.grad[o, c, i, j] takes grad_out's channel o: here grad_out[:, {o}], not "
        f"grad_out[:, {other_o}]."))
    if i != j:
        out["tap transposed"] = (_total(tap_products(case, (o, c, j, i))), (
            f"Tap ({i}, {j}) is row {i}, column {j}: rows {i} + {s}a, columns {j} + {s}b."))
    out["summed over output channels"] = (
        sum(_total(tap_products(case, (q, c, i, j))) for q in range(n_out)), (
            "Only grad_out's channel o enters weight.grad[o, ...]: the sum runs over the "
            "batch and the positions, not over output channels."))
    out["summed over input channels"] = (
        sum(_total(tap_products(case, (o, q, i, j))) for q in range(n_in)), (
            "Only x's channel c enters weight.grad[o, c, ...]: the sum runs over the "
            "batch and the positions, not over input channels."))
    return out


def _slip_hint(table: dict[str, tuple[int, str]]):
    def hint(p, truth) -> str | None:
        v = number_of(p) if isinstance(p, str) else p  # "6", "6 (image 0)": 6
        if v is None or isinstance(v, bool) or not isinstance(v, int | float):
            return None
        for value, text in table.values():
            if value != truth and v == value:
                return text
        return None
    return hint


def exercise(case: BatchConv, tap: tuple[int, int, int, int]) -> SlipHintExercise:
    """Ask for ``weight.grad[tap]``: a number, compared exactly with the live entry."""
    o, c, i, j = tap
    return SlipHintExercise(
        f"weight.grad[{o}, {c}, {i}, {j}] of the batch-2, stride-{case.stride} conv",
        truth=lambda: weight_entry(case, tap),
        hint=f"Per image n: the sum over grad_out[n, {o}]'s entries (a, b) of each entry "
        f"times the pixel x[n, {c}] that tap ({i}, {j}) read for output (a, b); then the "
        "sum over images.",
        slip_hint=_slip_hint(slips(case, tap)),
        measured=lambda t: f"minidl's w.grad gave {t}.",
    )

"""Build exercise of the nn-modules chapter: dropout's forward, by burn's rule.

burn 0.22.1's ``Dropout`` drops only when its training flag is on, the input is on an
autodiff device and ``prob != 0``; otherwise the input comes back unchanged. Kept elements
are scaled by ``1 / (1 - prob)``. The reader writes that rule as a function. A random mask
has no single right value, so the checker compares what is determined: unchanged input
(against PyTorch's ``dropout`` in eval mode, which is the identity, under the name of the
condition that fails) when nothing may drop,
and when it drops, that every element is 0 or ``x / (1 - prob)``, that the number dropped is
within a binomial bound around ``prob`` (256 or more elements per case: keeping with
probability ``prob`` instead of ``1 - prob`` is refused), that a second call draws another
mask, and that the gradient passes exactly through the kept ones, scaled the same way (no
gradient at all, a detached output, is a failure).
"""

from __future__ import annotations

import numpy as np
import torch
from hypothesis import strategies as st

from minidl import Distribution, Tensor
from minidl_book.build_check import BuildExercise, Reference, Rules
from minidl_book.compare import to_numpy
from minidl_book.harness import dropout_run

__all__ = ["PLANTED", "dropout_forward", "exercise"]


def dropout_forward(input: Tensor, prob: float, training: bool) -> Tensor:
    """burn's rule: the input unless training, on an autodiff device, with ``prob != 0``."""
    if not training or not input.device.is_autodiff() or prob == 0.0:
        return input
    keep = 1.0 - prob
    mask = input.random_like(Distribution.bernoulli(keep))
    return input * mask * (1.0 / keep)


# ----- planted wrong solutions ---------------------------------------------------------------
def drops_on_any_device(input: Tensor, prob: float, training: bool) -> Tensor:
    """PyTorch's rule (the flag alone), not burn's: drops on a plain device too."""
    if not training or prob == 0.0:
        return input
    mask = input.random_like(Distribution.bernoulli(1.0 - prob))
    return input * mask * (1.0 / (1.0 - prob))


def unscaled(input: Tensor, prob: float, training: bool) -> Tensor:
    if not training or not input.device.is_autodiff() or prob == 0.0:
        return input
    return input * input.random_like(Distribution.bernoulli(1.0 - prob))


def keeps_with_prob(input: Tensor, prob: float, training: bool) -> Tensor:
    """The classic slip: a mask that is 1 with probability ``prob`` keeps ``prob`` of the
    elements and drops ``1 - prob`` (the scaling is right, the fraction is not)."""
    if not training or not input.device.is_autodiff() or prob == 0.0:
        return input
    mask = input.random_like(Distribution.bernoulli(prob))
    return input * mask * (1.0 / (1.0 - prob))


def detached_output(input: Tensor, prob: float, training: bool) -> Tensor:
    """The right values, cut from the graph: no gradient reaches the input."""
    if not training or not input.device.is_autodiff() or prob == 0.0:
        return input
    keep = 1.0 - prob
    return (input * input.random_like(Distribution.bernoulli(keep)) * (1.0 / keep)).detach()


def detached_input(input: Tensor, prob: float, training: bool) -> Tensor:
    """The mask applied to a detached copy of the input: the values right, the gradient lost."""
    if not training or not input.device.is_autodiff() or prob == 0.0:
        return input
    keep = 1.0 - prob
    return input.detach() * input.random_like(Distribution.bernoulli(keep)) * (1.0 / keep)


#: name → (wrong function, the verdict kind it must get)
PLANTED = {
    "drops on a plain device": (drops_on_any_device, "value"),
    "kept elements not scaled": (unscaled, "check"),
    "keeps with probability prob": (keeps_with_prob, "check"),
    "output detached from the graph": (detached_output, "check"),
    "input detached before the mask": (detached_input, "check"),
}


# ----- the checker ---------------------------------------------------------------------------
def _drops(case: dict) -> bool:
    return case["training"] and case["autodiff"] and case["prob"] != 0.0


def _arrays(seed: int, rows: int) -> dict:
    """x and g of ``rows`` x 16 from a seed: shrinking a 256-element list costs minutes, a seed
    nothing. |x| >= 0.5, so a kept element is never mistaken for a dropped one."""
    rng = np.random.default_rng(seed)
    x = rng.uniform(0.5, 3.0, (rows, 16)) * rng.choice([-1.0, 1.0], (rows, 16))
    return {"x": x.astype(np.float32), "g": rng.uniform(-2.0, 2.0, (rows, 16)).astype(np.float32)}


def _cases() -> st.SearchStrategy:
    flags = st.fixed_dictionaries({
        "prob": st.sampled_from([0.0, 0.1, 0.25, 0.5]), "training": st.booleans(),
        "autodiff": st.booleans()})
    return st.tuples(flags, st.integers(0, 2**16), st.integers(16, 20)).map(
        lambda t: {**t[0], **_arrays(t[1], t[2])})


def _identity_when(why):
    """The input unchanged (PyTorch's ``dropout`` in eval mode) on the cases where ``why(case)``
    is the first of the three conditions to fail; one reference per reason, so a verdict names
    the condition that stops dropout in its case."""
    def expected(case: dict) -> dict:
        if _drops(case) or not why(case):
            return {}  # random, or another reason's case
        x = torch.from_numpy(case["x"])
        return {"out": torch.nn.functional.dropout(x, case["prob"], training=False)}
    return expected


_REASONS = [
    ("the input unchanged: training is off (PyTorch's dropout in eval mode)",
     lambda case: not case["training"]),
    ("the input unchanged: training is on but the input is not on an autodiff device "
     "(burn's second condition; PyTorch would drop here)",
     lambda case: case["training"] and not case["autodiff"]),
    ("the input unchanged: prob = 0",
     lambda case: case["training"] and case["autodiff"] and case["prob"] == 0.0),
]


def _mask(solution, case, outputs, trace) -> str | None:
    if not _drops(case) or outputs["out"] is None:
        return None
    x, out, keep = case["x"].astype(np.float64), to_numpy(outputs["out"]).astype(np.float64), 1 - case["prob"]
    if out.shape != x.shape:
        return f"out has shape {list(out.shape)}, the input {list(x.shape)}"
    kept = out != 0
    scaled = np.isclose(out, x / keep, rtol=1e-6, atol=0)
    if not np.all(scaled | ~kept):
        index = tuple(int(i) for i in np.argwhere(kept & ~scaled)[0])
        return (f"out{list(index)} = {out[index]:.6g} is neither 0 nor x / (1 - prob) = "
                f"{x[index] / keep:.6g} (x = {x[index]:.6g}, prob = {case['prob']})")
    if kept.all() or not kept.any():
        return (f"training on an autodiff device with prob = {case['prob']}: "
                f"{'no element was dropped' if kept.all() else 'every element was dropped'} "
                f"out of {kept.size}")
    n, p = kept.size, case["prob"]
    dropped = int(n - kept.sum())
    low, high = _binomial_bound(n, p)
    if not low <= dropped <= high:
        return (f"with prob = {p}, {dropped} of {n} elements were dropped; a mask that drops each "
                f"element with probability prob drops between {low} and {high} (mean {n * p:.0f}, "
                "5 standard deviations either side): is prob the chance to drop, or to keep?")
    again = outputs.get("_again")
    if again is not None and np.array_equal(to_numpy(again) != 0, kept):
        return ("two calls dropped exactly the same elements: the mask must be drawn at random "
                "at every call (input.random_like)")
    grad = outputs["_grad"]
    if grad is None:
        return ("no gradient reached the input: the output is cut from the graph (a detach, or "
                "a copy made outside the autodiff device); multiply the input itself by the mask")
    want = np.where(kept, case["g"] / keep, 0.0)
    got = to_numpy(grad).astype(np.float64)
    if not np.allclose(got, want, rtol=1e-5, atol=1e-6):
        index = tuple(int(i) for i in np.argwhere(~np.isclose(got, want, rtol=1e-5, atol=1e-6))[0])
        return f"grad{list(index)} = {got[index]:.6g}, expected {want[index]:.6g} (g / (1 - prob) where kept, else 0)"
    return None


def _binomial_bound(n: int, p: float, sds: float = 5.0) -> tuple[int, int]:
    """The counts of dropped elements a Binomial(n, p) mask gives but once in millions."""
    mean, sd = n * p, (n * p * (1 - p)) ** 0.5
    return max(0, int(np.floor(mean - sds * sd - 1))), min(n, int(np.ceil(mean + sds * sd + 1)))


def exercise(max_examples: int = 15) -> BuildExercise:
    """The checker for the reader's ``dropout_forward(input, prob, training)``."""
    return BuildExercise(
        "dropout's forward, by burn's rule",
        cases=_cases(),
        run=dropout_run,
        references=[Reference(label, _identity_when(why), rtol=0, atol=0) for label, why in _REASONS],
        rules=Rules(no_data=True, no_numpy=True),
        checks=[_mask],
        hints=[
            "Three conditions must all hold before anything is dropped; the device is one of them.",
            "input.random_like(Distribution.bernoulli(keep)) draws a 0/1 mask on the input's device.",
            "A kept element is divided by the keep probability, so the expectation stays the same.",
        ],
        reference_solution=dropout_forward,
        examples=[{"prob": 0.1, "training": True, "autodiff": True, **_arrays(1, 16)}],
        max_examples=max_examples,
        order=("prob", "training", "autodiff", "x"),
    )

"""Build exercise of the tour: ``linear`` written with Tensor ops, burn's way.

The tour follows ``Linear.forward`` down to the gemm. Its functional step, ``module.linear``,
keeps burn's weight layout (``[d_input, d_output]``, the transpose of PyTorch's) and accepts an
input ``[..., d_input]`` of any rank from 1 (a 1-D input gives a 1-D output). The reader writes
that function with Tensor ops: ``input @ weight`` (minidl's ``@`` takes a 1-D left operand and
leading batch dims as torch's does) and a bias reshaped to the output's rank (``+`` broadcasts
only within one rank, as in burn). The checker compares it with ``torch.nn.functional.linear``
(given the transposed weight) on a rank-3 example with a bias, then on generated shapes of rank
1 to 3, with and without bias; a bias given the rank of a 2-D output only is refused on the
example, and an output without the bias gets its own verdict. The run must reach Flex's gemm
through Dispatch, and calling minidl's own ``linear`` breaks a rule.
"""

from __future__ import annotations

import re

import numpy as np
import torch
from hypothesis import strategies as st

from minidl import Tensor, functional
from minidl_book.build_check import BuildExercise, Reference, Rules
from minidl_book.harness import tensor_call
from minidl_book.strategies import float32_arrays

__all__ = ["ERROR_HINTS", "PLANTED", "error_topic", "exercise", "linear"]


def linear(input: Tensor, weight: Tensor, bias: Tensor | None) -> Tensor:
    """``input @ weight + bias``, weight ``[d_input, d_output]``; a 1-D input stays 1-D."""
    out = input @ weight  # [..., d_output]: [d_output] for a 1-D input
    if bias is not None:  # + broadcasts within one rank: give the bias the output's rank
        out = out + bias.reshape((1,) * (out.rank - 1) + bias.shape)
    return out


# ----- planted wrong solutions ---------------------------------------------------------------
def linear_torch_layout(input: Tensor, weight: Tensor, bias: Tensor | None) -> Tensor:
    """PyTorch's habit: ``x @ W.T``."""
    x = input.unsqueeze_dim(0) if input.rank == 1 else input
    out = x @ weight.transpose()
    if bias is not None:
        out = out + bias.unsqueeze_dim(0)
    return out.squeeze_dim(0) if input.rank == 1 else out


def linear_keeps_batch_dim(input: Tensor, weight: Tensor, bias: Tensor | None) -> Tensor:
    """Adds the batch dim for a 1-D input and forgets to take it away."""
    x = input.unsqueeze_dim(0) if input.rank == 1 else input
    out = x @ weight
    return out + bias.reshape((1,) * (out.rank - 1) + bias.shape) if bias is not None else out


def linear_bias_dropped(input: Tensor, weight: Tensor, bias: Tensor | None) -> Tensor:
    """Forgets the bias."""
    return input @ weight


def linear_bias_for_2d_only(input: Tensor, weight: Tensor, bias: Tensor | None) -> Tensor:
    """Gives the bias a batch dim only for a 2-D output: a 3-D input breaks the add."""
    out = input @ weight
    if bias is not None:
        out = out + (bias.unsqueeze() if out.rank == 2 else bias)
    return out


def linear_flattens_batch_dims(input: Tensor, weight: Tensor, bias: Tensor | None) -> Tensor:
    """Folds the batch dims into rows for one 2-D matmul and never unfolds them."""
    x = input.reshape((-1, input.shape[-1])) if input.rank > 2 else input
    out = x @ weight
    return out + bias.reshape((1,) * (out.rank - 1) + bias.shape) if bias is not None else out


def linear_borrowed(input: Tensor, weight: Tensor, bias: Tensor | None) -> Tensor:
    return functional.linear(input, weight, bias)


#: name → (wrong function, the verdict kind it must get)
PLANTED = {
    "PyTorch's layout": (linear_torch_layout, "error"),
    "batch dim kept": (linear_keeps_batch_dim, "shape"),
    "bias dropped": (linear_bias_dropped, "check"),
    "bias given rank 2 only": (linear_bias_for_2d_only, "error"),
    "batch dims flattened": (linear_flattens_batch_dims, "shape"),
    "minidl's own linear": (linear_borrowed, "rule"),
}


# ----- the checker ---------------------------------------------------------------------------
def _cases() -> st.SearchStrategy:
    arrays = float32_arrays(3)

    def case(lead, d_in, d_out, with_bias):
        return st.fixed_dictionaries({"input": arrays(*lead, d_in), "weight": arrays(d_in, d_out),
                                      "bias": arrays(d_out) if with_bias else st.none()})

    lead = st.sampled_from([(), (1,), (2,), (3,), (1, 2), (2, 3)])
    dims = st.tuples(lead, st.integers(1, 4), st.integers(2, 5), st.booleans())
    return dims.flatmap(lambda d: case(*d))


#: tried before the generated cases: a rank-3 input with a bias (a bias given the rank of a 2-D
#: output only fails its add), no size 1 and d_input != d_output (a transposed weight fails
#: the matmul on shapes a reader can read: [2, 2, 3] @ [2, 3]), every value non-zero (a
#: dropped bias shows)
EXAMPLE = {"input": np.array([[[1.0, -2.0, 0.5], [3.0, 1.0, -1.0]],
                              [[-0.5, 2.0, 1.0], [1.0, -1.0, 2.0]]], np.float32),
           "weight": np.array([[1.0, 2.0], [-1.0, 0.5], [0.5, -2.0]], np.float32),
           "bias": np.array([0.5, -1.0], np.float32)}


def _bias_dropped(solution, case: dict, outputs: dict, watch) -> str | None:
    """A verdict of its own when the output is ``input @ weight`` without a given bias."""
    bias = case["bias"]
    if bias is None or not np.abs(bias).max() > 1e-2:
        return None
    try:
        from minidl_book.compare import to_numpy

        out = to_numpy(outputs["out"]).astype(np.float64)
        bare = case["input"].astype(np.float64) @ case["weight"].astype(np.float64)
        if out.shape != bare.shape or not np.allclose(out, bare, rtol=1e-5, atol=1e-5):
            return None
        if np.allclose(out, bare + bias, rtol=1e-5, atol=1e-5):
            return None
    except Exception:  # noqa: BLE001 - an output this check cannot read: the references judge it
        return None
    return ("Your output is input @ weight with no bias added, but this case has a bias "
            f"{list(bias.shape)}.")


def _torch(case: dict) -> dict:
    bias = None if case["bias"] is None else torch.from_numpy(case["bias"])
    weight = torch.from_numpy(case["weight"]).T  # torch's weight is [d_output, d_input]
    return {"out": torch.nn.functional.linear(torch.from_numpy(case["input"]), weight, bias)}


#: the shape hint for a 1-D input, and the one that replaces it when the failing input has
#: batch dims (a [2, 1, 1] input flattened into rows, say)
ONE_D_HINT = ("A 1-D input gives a 1-D output: a batch dim you added must come off again "
              "(squeeze_dim(0)).")
BATCH_HINT = ("Leading dims are batch dims and stay in the output: [..., d_input] gives "
              "[..., d_output], so a [2, 2, 3] input gives [2, 2, 2]. Batch dims you "
              "folded into rows must be unfolded after the matmul (or let @ take them as "
              "they are).")


#: the first hint for an error, one per op the error names (read from the error's text); the
#: ladder holds ERROR_HINTS["other"], which an error of a known op replaces with its own
ERROR_HINTS = {
    "matmul": "The matmul's shapes do not fit: weight is already [d_input, d_output] "
    "(burn's layout, the transpose of PyTorch's [d_output, d_input]), so input @ weight "
    "needs no .transpose().",
    "add": "The add's ranks differ: + broadcasts only within one rank, so give the "
    "[d_output] bias the output's rank first (reshape).",
    "none": "bias is None for a layer without bias: add it only when there is one.",
    "other": "Read the error's first line: it names the value or the op that failed, and "
    "the line under it is yours.",
}


def error_topic(text: str) -> str:
    """Which of :data:`ERROR_HINTS` fits an error verdict's text."""
    if "NoneType" in text:
        return "none"
    match = re.search(r"Operation: '(\w+)'", text)
    return match.group(1) if match and match.group(1) in ERROR_HINTS else "other"


class LinearExercise(BuildExercise):
    """The linear checker: a wrong output shape gets the hint that fits the input that
    failed, a 1-D input or one with batch dims; an error gets the hint for the op it
    names (a transposed weight's matmul, a bias's add, a None bias)."""

    _batch_case = False
    _topic = "other"

    @property
    def hint_ladder(self):
        swap = {ERROR_HINTS["other"]: ERROR_HINTS[self._topic]}
        if self._batch_case:
            swap[ONE_D_HINT] = BATCH_HINT
        return [(kinds, swap.get(text, text)) for kinds, text in self._ladder]

    @hint_ladder.setter
    def hint_ladder(self, ladder) -> None:
        self._ladder = ladder

    def find_failure(self, solution):
        verdict = super().find_failure(solution)
        arrays = (verdict.arrays or {}) if verdict is not None else {}
        failed = arrays.get("inputs", {}).get("input")
        self._batch_case = (verdict is not None and verdict.kind == "shape"
                            and failed is not None and failed.ndim > 1)
        is_error = verdict is not None and verdict.kind == "error"
        self._topic = error_topic(verdict.text) if is_error else "other"
        return verdict


def exercise(max_examples: int = 15, hints: bool = True) -> BuildExercise:
    """The checker for the reader's ``linear(input, weight, bias)`` (``hints=False``: a
    checker whose verdicts show no hint, for the page's demonstration of a failure)."""
    return LinearExercise(
        "linear with Tensor ops, in burn's layout",
        cases=_cases(),
        run=tensor_call(["input", "weight", "bias"]),
        references=[Reference("torch.nn.functional.linear", _torch, rtol=1e-5, atol=1e-5)],
        checks=[_bias_dropped],
        rules=Rules(forbidden={r"^(\w+\.linear|module\.linear_impl|Linear\.forward)$":
                               "call minidl's own linear (write it with Tensor ops)"},
                    must_reach={r"^Flex\.float_matmul$": "reach Flex's gemm (through Dispatch)"},
                    no_data=True, no_numpy=True),
        hints=[] if not hints else [
            ("error", ERROR_HINTS["other"]),
            ("error", "minidl's unsqueeze() is torch's unsqueeze(0): it always adds one "
             "leading dim. A 1-D input gives a 1-D output, and a [d_output] bias adds to "
             "it as it is."),
            ("value", "weight is [d_input, d_output] (burn's layout): input @ weight, "
             "no transpose (a square weight hides the slip until the values differ)."),
            ("check", "bias is None only for a layer without one: when it is a tensor, add "
             "it to the product, [d_output] reshaped to the output's rank."),
            ("shape", ONE_D_HINT),
            ("rule", "The verdict names the call and your line: write the op yourself with "
             "@ and +, without minidl's linear (functional.linear, Linear.forward)."),
            ("*", "Write it as input @ weight, then + the bias reshaped to the output's "
             "rank, when there is a bias."),
        ],
        reference_solution=linear,
        examples=[EXAMPLE],
        max_examples=max_examples,
        order=("input", "weight", "bias"),
    )

"""Build exercise of the tour: ``linear`` written with Tensor ops, burn's way.

The tour follows ``Linear.forward`` down to the gemm. Its functional step, ``module.linear``,
keeps burn's weight layout (``[d_input, d_output]``, the transpose of PyTorch's) and accepts an
input ``[..., d_input]`` of any rank from 1 (a 1-D input gives a 1-D output). The reader writes
that function with Tensor ops: ``input @ weight`` (minidl's ``@`` takes a 1-D left operand and
leading batch dims as torch's does) and a bias reshaped to the output's rank (``+`` broadcasts
only within one rank, as in burn). The checker compares it with ``torch.nn.functional.linear``
(given the transposed weight) on a rank-3 example with a bias and on fixed corners (a 1-D
input with a bias, a 2-D one without), then on generated shapes of rank 1 to 3; a bias given the rank of a 2-D output only is refused on the
example, and an output without the bias gets its own verdict. The run must reach Flex's gemm
through Dispatch, and calling minidl's own ``linear`` breaks a rule. Each cause of failure
(:data:`CAUSES`) has its own hint ladder (:data:`HINTS`): a hint, once shown, keeps its text.
"""

from __future__ import annotations

import numpy as np
import torch
from hypothesis import strategies as st

from minidl import Tensor, functional
from minidl_book.build_check import BuildExercise, Reference, Rules
from minidl_book.cause_hints import CauseHints
from minidl_book.harness import tensor_call
from minidl_book.strategies import float32_arrays

__all__ = ["HINTS", "PLANTED", "cause_of", "exercise", "linear"]


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


def linear_bias_batched_only(input: Tensor, weight: Tensor, bias: Tensor | None) -> Tensor:
    """Adds the bias only when there are batch dims: a 1-D input loses it."""
    out = input @ weight
    if bias is not None and input.rank > 1:
        out = out + bias.reshape((1,) * (out.rank - 1) + bias.shape)
    return out


def linear_bias_always(input: Tensor, weight: Tensor, bias: Tensor | None) -> Tensor:
    """Adds the bias without asking whether there is one."""
    out = input @ weight
    return out + bias.reshape((1,) * (out.rank - 1) + bias.shape)


def linear_bias_twice(input: Tensor, weight: Tensor, bias: Tensor | None) -> Tensor:
    """Adds the bias twice."""
    out = input @ weight
    if bias is not None:
        row = bias.reshape((1,) * (out.rank - 1) + bias.shape)
        out = out + row + row
    return out


def linear_numpy(input: Tensor, weight: Tensor, bias: Tensor | None) -> Tensor:
    """Computes the product in NumPy."""
    import numpy

    out = Tensor.from_numpy(numpy.matmul(input.to_numpy(), weight.to_numpy()), input.device)
    return out if bias is None else out + bias.reshape((1,) * (out.rank - 1) + bias.shape)


def linear_borrowed(input: Tensor, weight: Tensor, bias: Tensor | None) -> Tensor:
    return functional.linear(input, weight, bias)


#: name → (wrong function, the verdict kind it must get)
PLANTED = {
    "PyTorch's layout": (linear_torch_layout, "error"),
    "batch dim kept": (linear_keeps_batch_dim, "shape"),
    "bias dropped": (linear_bias_dropped, "check"),
    "bias given rank 2 only": (linear_bias_for_2d_only, "error"),
    "batch dims flattened": (linear_flattens_batch_dims, "shape"),
    "bias added twice": (linear_bias_twice, "value"),
    "bias dropped for a 1-D input": (linear_bias_batched_only, "check"),
    "bias None not handled": (linear_bias_always, "error"),
    "NumPy's matmul": (linear_numpy, "rule"),
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

#: the corners every planted slip needs, tried after :data:`EXAMPLE` on every check: the
#: generated cases reach them only by chance (what hypothesis draws under one seed differs
#: between a test run and the chapter's kernel), so a slip on a 1-D input or a missing bias
#: must not depend on them. A 1-D input with a bias (a bias dropped, or a batch dim kept,
#: for one row) and a 2-D input without bias (a bias added when there is none).
CORNERS = [
    {"input": np.array([1.0, -2.0, 0.5], np.float32),
     "weight": EXAMPLE["weight"], "bias": np.array([-1.5, 0.75], np.float32)},
    {"input": EXAMPLE["input"][0], "weight": EXAMPLE["weight"], "bias": None},
]


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


#: the recipe: the last hint of each ladder below but the rules'
RECIPE = ("Write it as input @ weight, then + the bias reshaped to the output's rank, when "
          "there is a bias.")
ONE_D_HINT = ("A 1-D input gives a 1-D output: a batch dim you added must come off again "
              "(squeeze_dim(0)); minidl's unsqueeze() is torch's unsqueeze(0).")
BATCH_HINT = ("Leading dims are batch dims and stay in the output: [..., d_input] gives "
              "[..., d_output], so a [2, 2, 3] input gives [2, 2, 2]. Batch dims you "
              "folded into rows must be unfolded after the matmul (or let @ take them as "
              "they are).")

#: cause → its own hint ladder. A failure opens the next hint of its cause's ladder and
#: shows the hints of that ladder opened so far, so a hint, once shown, never changes.
HINTS = {
    "transpose": ["weight is already [d_input, d_output] (burn's layout, the transpose of "
                  "PyTorch's [d_output, d_input]), so input @ weight needs no .transpose().",
                  RECIPE],
    "bias rank": ["The add's ranks differ: + broadcasts only within one rank, so give the "
                  "[d_output] bias the output's rank first (reshape).", RECIPE],
    "bias None": ["bias is None for a layer without bias: add it only when there is one "
                  "(if bias is not None).", RECIPE],
    "bias value": ["The product is right, the bias part is not: your output minus "
                   "input @ weight must be the bias, added once, the same in every row.",
                   RECIPE],
    "bias dropped": ["bias is None only for a layer without one: when it is a tensor, add "
                     "it to the product, [d_output] reshaped to the output's rank.", RECIPE],
    "1-D": [ONE_D_HINT, RECIPE],
    "batch dims": [BATCH_HINT, RECIPE],
    "own linear": ["The verdict names the call and your line: write the op yourself with "
                   "@ and +, without minidl's own linear (module.linear or Linear.forward)."],
    "no NumPy": ["Compute on the tensors you were given, with Tensor ops (@, +, reshape): "
                 "no NumPy, no values read out of a tensor."],
    "reach gemm": ["Your run never reached Flex's matmul: compute the product with @ on "
                   "the tensors you were given."],
}
#: a failure none of the causes recognises
OTHER_HINTS = ["Read the verdict's first line: it names the op or the value that failed, "
               "and the line under it is yours.", RECIPE]


def _op_error(op: str):
    return lambda v: v.kind == "error" and f"Operation: '{op}'" in v.text


def _failed_input(v):
    return ((v.arrays or {}).get("inputs") or {}).get("input")


def _product_and_rest(v):
    """The failing case's ``input @ weight`` (float64) and what the output adds to it."""
    from minidl_book.compare import to_numpy

    inputs = v.arrays["inputs"]
    x = inputs["input"].astype(np.float64)
    w = inputs["weight"].astype(np.float64)
    found = np.asarray(to_numpy(v.arrays["found"]), np.float64)
    return x, w, inputs.get("bias"), found


def _transposed_values(v) -> bool:
    """A square weight used as PyTorch's: the output is ``input @ weight.T`` (+ bias)."""
    if v.kind != "value":
        return False
    x, w, bias, found = _product_and_rest(v)
    if w.shape[0] != w.shape[1] or np.allclose(w, w.T):
        return False
    bare = x @ w.T
    return found.shape == bare.shape and any(
        np.allclose(found, bare + extra, rtol=1e-4, atol=1e-4)
        for extra in (0.0, 0.0 if bias is None else bias))


def _bias_values(v) -> bool:
    """The product is right and the rest is one row repeated, but not the bias."""
    if v.kind != "value":
        return False
    x, w, _, found = _product_and_rest(v)
    bare = x @ w
    if found.shape != bare.shape:
        return False
    rest = (found - bare).reshape(-1, bare.shape[-1])
    return bool(np.allclose(rest, rest[:1], rtol=1e-4, atol=1e-4))


#: (cause, test(verdict)): the first test that holds picks the ladder
CAUSES = [
    ("bias None", lambda v: v.kind == "error" and "NoneType" in v.text),
    ("transpose", _op_error("matmul")),
    ("bias rank", _op_error("add")),
    ("transpose", _transposed_values),
    ("bias value", _bias_values),
    ("bias dropped", lambda v: v.kind == "check"),
    ("1-D", lambda v: v.kind == "shape" and _failed_input(v).ndim == 1),
    ("batch dims", lambda v: v.kind == "shape" and _failed_input(v).ndim > 1),
    ("own linear", lambda v: v.kind == "rule" and "own linear" in (v.rule or "")),
    ("no NumPy", lambda v: v.kind == "rule" and v.rule in ("no NumPy", "no data out")),
    ("reach gemm", lambda v: v.kind == "rule" and "reach" in (v.rule or "")),
]


def cause_of(verdict) -> str | None:
    """The cause :data:`CAUSES` gives a failed verdict (``None``: not recognised)."""
    for name, test in CAUSES:
        try:
            if test(verdict):
                return name
        except Exception:  # noqa: BLE001 - a verdict this test cannot read: not its cause
            continue
    return None


class LinearExercise(CauseHints):
    """The linear checker: each cause of failure (a transposed weight, the bias's rank, a
    None bias, a wrong bias value, a dropped bias, a 1-D or a batch-dim shape, each broken
    rule) has its own hint ladder, ending in the recipe; see :data:`HINTS`."""


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
        hints=OTHER_HINTS if hints else [],
        causes=[(name, test, HINTS[name]) for name, test in CAUSES] if hints else [],
        reference_solution=linear,
        examples=[EXAMPLE, *CORNERS],
        max_examples=max_examples,
        order=("input", "weight", "bias"),
    )

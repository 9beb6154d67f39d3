"""Build exercise of the tour chapter: the backward ``Step`` of ``matmul``.

The reader writes what minidl's own ``Matmul`` step is: ``forward`` with the inner backend's
``float_matmul``, ``keeps(tracked)`` (``rhs`` only when ``lhs`` needs a gradient, ``lhs`` only
when ``rhs`` does: the rule that decides the bytes a linear layer keeps), and ``backward``
returning ``grad @ rhsᵀ`` and ``lhsᵀ @ grad``, each summed back to its input's shape where a
batch dim was broadcast. The checker records the step with :func:`minidl.autodiff.ops.base.record`
(what ``Autodiff`` itself calls for every op) on ``Autodiff[Flex]``, with the left side, the
right side or both tracked, runs backward from ``sum(out * w)``, compares value and gradients
with PyTorch, and checks what the step kept against the rule.
"""

from __future__ import annotations

import numpy as np
import torch
from hypothesis import strategies as st

from minidl.autodiff import Step
from minidl.autodiff.step import sum_to_shape
from minidl_book.build_check import BuildExercise, Reference, Rules
from minidl_book.strategies import float32_arrays

__all__ = ["PLANTED", "Matmul", "batch_dims_left", "describe_case", "exercise",
           "matmul_step_run"]


class Matmul(Step):
    """``lhs @ rhs``: keeps the other side of each tracked input; ``grad @ rhsᵀ`` and
    ``lhsᵀ @ grad``, summed back over broadcast batch dims."""

    memory_bound = False  # compute-bound, as burn marks matmul

    def forward(self, B, lhs, rhs):
        return B.float_matmul(lhs, rhs)

    def keeps(self, tracked):
        lhs_tracked, rhs_tracked = tracked
        return (("rhs",) if lhs_tracked else ()) + (("lhs",) if rhs_tracked else ())

    def backward(self, B, grad, state):
        d_lhs = d_rhs = None
        if self.tracked[0]:
            d_lhs = B.float_matmul(grad, B.float_transpose(state["rhs"]))
            d_lhs = sum_to_shape(B, d_lhs, self.shapes[0])
        if self.tracked[1]:
            d_rhs = B.float_matmul(B.float_transpose(state["lhs"]), grad)
            d_rhs = sum_to_shape(B, d_rhs, self.shapes[1])
        return d_lhs, d_rhs


# ----- planted wrong solutions ---------------------------------------------------------------
class MatmulKeepsBoth(Matmul):
    """Right gradients, but keeps both sides whatever is tracked."""

    def keeps(self, tracked):
        return ("lhs", "rhs")


class MatmulSwapped(Matmul):
    """The transposes on the wrong side: ``rhsᵀ @ grad`` and ``grad @ lhsᵀ``."""

    def backward(self, B, grad, state):
        d_lhs = d_rhs = None
        if self.tracked[0]:
            d_lhs = B.float_matmul(B.float_transpose(state["rhs"]), grad)
            d_lhs = sum_to_shape(B, d_lhs, self.shapes[0])
        if self.tracked[1]:
            d_rhs = B.float_matmul(grad, B.float_transpose(state["lhs"]))
            d_rhs = sum_to_shape(B, d_rhs, self.shapes[1])
        return d_lhs, d_rhs


class MatmulNumpyOperator(Matmul):
    """Right values, but backward's products are NumPy's ``@`` on the bare arrays."""

    def backward(self, B, grad, state):
        d_lhs = d_rhs = None
        if self.tracked[0]:
            d_lhs = sum_to_shape(B, grad @ B.float_transpose(state["rhs"]), self.shapes[0])
        if self.tracked[1]:
            d_rhs = sum_to_shape(B, B.float_transpose(state["lhs"]) @ grad, self.shapes[1])
        return d_lhs, d_rhs


class MatmulNoBatchSum(Matmul):
    """Right products, but a broadcast side gets its gradient with the batch dims left in."""

    def backward(self, B, grad, state):
        d_lhs = d_rhs = None
        if self.tracked[0]:
            d_lhs = B.float_matmul(grad, B.float_transpose(state["rhs"]))
        if self.tracked[1]:
            d_rhs = B.float_matmul(B.float_transpose(state["lhs"]), grad)
        return d_lhs, d_rhs


#: name → (wrong step, the verdict kind it must get)
PLANTED = {
    "keeps both sides always": (MatmulKeepsBoth, "check"),
    "transposes swapped": (MatmulSwapped, "value"),
    "forgets the batch-dim sum": (MatmulNoBatchSum, "shape"),
    "numpy @ on primitives": (MatmulNumpyOperator, "rule"),
}


# ----- the checker ---------------------------------------------------------------------------
_arrays = float32_arrays(3)
#: which inputs are tracked, by name
TRACKED = {"both": (True, True), "lhs": (True, False), "rhs": (False, True)}


def _case(tracked: str, lhs: tuple, rhs: tuple, seed: int) -> dict:
    rng = np.random.default_rng(seed)
    out = np.broadcast_shapes(lhs[:-2], rhs[:-2]) + (lhs[-2], rhs[-1])
    return {"tracked": tracked,
            "lhs": rng.uniform(-3, 3, lhs).astype(np.float32),
            "rhs": rng.uniform(-3, 3, rhs).astype(np.float32),
            "w": rng.uniform(-3, 3, out).astype(np.float32)}


#: tried first: a square product (a swapped transpose has the right shape there), one
#: side tracked (what each side keeps), a weight broadcast over a batch.
EXAMPLES = [_case("both", (3, 3), (3, 3), 0), _case("lhs", (2, 3), (3, 4), 1),
            _case("rhs", (2, 3), (3, 4), 2), _case("both", (2, 3, 4), (4, 5), 3)]


def _cases() -> st.SearchStrategy:
    def build(dims):
        tracked, (b, n, k, m), batch = dims
        lhs = {"none": (n, k), "lhs": (b, n, k), "both": (b, n, k), "rhs": (n, k)}[batch]
        rhs = {"none": (k, m), "lhs": (k, m), "both": (b, k, m), "rhs": (b, k, m)}[batch]
        out = np.broadcast_shapes(lhs[:-2], rhs[:-2]) + (n, m)
        return st.fixed_dictionaries({"tracked": st.just(tracked), "lhs": _arrays(lhs),
                                      "rhs": _arrays(rhs), "w": _arrays(out)})

    dims = st.tuples(st.sampled_from(sorted(TRACKED)),
                     st.tuples(*[st.integers(1, 4)] * 4),
                     st.sampled_from(["none", "lhs", "both", "rhs"]))
    return dims.flatmap(build)


def matmul_step_run(solution, case: dict) -> dict:
    """Record ``solution()`` on ``case["lhs"] @ case["rhs"]`` (the sides named by
    ``case["tracked"]`` tracked) with ``record``, as ``Autodiff[Flex]`` records its own
    matmul; backward from ``sum(out * w)``. Outputs ``out``, the tracked sides' gradients,
    and ``_saved`` (the names the step kept)."""
    from minidl.autodiff import Autodiff
    from minidl.autodiff.ops.base import record
    from minidl.backends.flex import Flex
    from minidl.dispatch import Device

    AD, dev = Autodiff[Flex], Device.flex()
    sides = []
    for name, tracked in zip(("lhs", "rhs"), TRACKED[case["tracked"]]):
        side = AD.from_inner(Flex.float_from_data(case[name], dev))
        sides.append(AD.float_require_grad(side) if tracked else side)
    w = AD.from_inner(Flex.float_from_data(case["w"], dev))
    step = solution()
    y = record(AD, step, *sides)
    outputs = {"out": AD.inner(y), "_saved": sorted(step.saved)}
    grads = AD.backward(AD.float_sum(AD.float_mul(y, w)))
    for name, side, tracked in zip(("lhs", "rhs"), sides, TRACKED[case["tracked"]]):
        if tracked:
            outputs[f"grad {name}"] = AD.grad(side, grads)
    return outputs


def _torch(case: dict) -> dict:
    sides = {name: torch.from_numpy(case[name]).requires_grad_(tracked)
             for name, tracked in zip(("lhs", "rhs"), TRACKED[case["tracked"]])}
    out = sides["lhs"] @ sides["rhs"]
    (out * torch.from_numpy(case["w"])).sum().backward()
    result = {"out": out.detach()}
    result.update({f"grad {n}": t.grad for n, t in sides.items() if t.requires_grad})
    return result


def _kept_what_backward_reads(solution, case, outputs, trace) -> str | None:
    lhs_tracked, rhs_tracked = TRACKED[case["tracked"]]
    expected = sorted((["rhs"] if lhs_tracked else []) + (["lhs"] if rhs_tracked else []))
    kept = outputs["_saved"]
    if kept == expected:
        return None
    extra = [n for n in kept if n not in expected]
    nbytes = sum(case[n].nbytes for n in extra if n in case)
    why = {"lhs": "lhs's gradient grad @ rhsᵀ reads rhs", "rhs": "rhs's gradient lhsᵀ @ grad "
           "reads lhs"}
    reads = "; ".join(why[n] for n, t in zip(("lhs", "rhs"), (lhs_tracked, rhs_tracked)) if t)
    return (f"With {case['tracked']!r} tracked your step kept {kept}; backward needs "
            f"{expected} ({reads})" + (f": {extra} is {nbytes} bytes the graph holds for "
                                       "nothing" if extra else ""))


#: what a product the watch did not see is, for the verdict
_NO_PRODUCT = ("Rule broken: with {tracked!r} tracked the step needs {need} products (the "
               "forward's and one per tracked side), and your code called B.float_matmul "
               "{got} time(s). `@` on the bare arrays a step gets is NumPy's matmul, outside "
               "the backend: compute every product with B.float_matmul.")


def _products_through_B(solution, case, outputs, watch) -> str | None:
    """Each product through the backend: one ``float_matmul`` call in forward and one per
    tracked side in backward, made from the reader's code. ``grad @ rhsᵀ`` on the bare
    ndarrays gives the right numbers but is NumPy's operator, which no call rule sees (the
    forward's product alone satisfied "must reach Flex.float_matmul"). minidl's own step
    is library code, whose calls the watch does not list: it is not checked here."""
    if getattr(solution, "__module__", "").startswith("minidl."):
        return None
    need = 1 + sum(TRACKED[case["tracked"]])
    got = sum(call.name.endswith(".float_matmul") for call in watch.calls)
    if got >= need:
        return None
    return _NO_PRODUCT.format(tracked=case["tracked"], need=need, got=got)


def describe_case(case: dict) -> str:
    """A failing case by its shapes (``lhs = f32[2, 3, 4], tracked``): the verdict names the
    element that differs; walls of [2, 3, 4] numbers would not help find a transpose."""
    tracked = TRACKED[case["tracked"]]
    return "\n".join(
        [f"{name} = f32{list(case[name].shape)}" + (", tracked" if t else ", not tracked")
         for name, t in zip(("lhs", "rhs"), tracked)]
        + [f"w = f32{list(case['w'].shape)} (the loss is sum(out * w))"])


def batch_dims_left(verdict) -> bool:
    """A shape verdict whose found shape is the expected one with leading dims in front
    (``[2, 4, 5]`` for ``[4, 5]``): the products are right, the batch sum is missing."""
    want, got = verdict.expected, verdict.found
    return (verdict.kind == "shape" and isinstance(want, list) and isinstance(got, list)
            and len(got) > len(want) and got[len(got) - len(want):] == want)


#: the ladder's index of the transpose hint and of the batch-sum hint
_TRANSPOSE_HINT, _BATCH_HINT = 1, 2


class _MatmulExercise(BuildExercise):
    """The matmul checker: its failing cases printed as shapes, not values; a shape verdict
    that is only a missing batch sum opens the batch-sum hint, not the transpose hint."""

    def verdict_for(self, solution, case):
        verdict = super().verdict_for(solution, case)
        if verdict is not None:
            verdict.inputs = describe_case(case)
            if verdict.kind == "check" and verdict.text.startswith("Rule broken"):
                verdict.kind, verdict.rule = "rule", "every product with B.float_matmul"
        return verdict

    def find_failure(self, solution):
        verdict = super().find_failure(solution)
        if getattr(self, "_ladder", None) is not None and verdict is not None:
            if batch_dims_left(verdict):  # right products: the transpose hint would mislead
                self.hint_ladder = [
                    (kinds - {"shape"} if i == _TRANSPOSE_HINT else kinds, text)
                    for i, (kinds, text) in enumerate(self._ladder)]
        return verdict

    def check(self, solution=...):
        self._ladder = self.hint_ladder
        try:
            return super().check(solution)
        finally:
            self.hint_ladder, self._ladder = self._ladder, None


def exercise(max_examples: int = 12) -> BuildExercise:
    """The checker for the reader's ``Matmul`` step class."""
    return _MatmulExercise(
        "the backward Step of matmul",
        cases=_cases(),
        run=matmul_step_run,
        references=[Reference("PyTorch", _torch, rtol=1e-4, atol=1e-4)],
        rules=Rules(forbidden={r"^Tensor\.": "use Tensor methods inside a step (a step works on "
                               "the inner backend's primitives, with B's ops)"},
                    must_reach={r"^Flex\.float_matmul$": "compute with the inner backend's "
                                "B.float_matmul"},
                    no_numpy=True),
        checks=[_products_through_B, _kept_what_backward_reads],
        hints=[
            (("check", "error"), "Write out each gradient first: which array does the "
             "gradient of lhs read, and which one the gradient of rhs? keeps returns the "
             "names of those a tracked input needs, nothing more."),
            (("value", "shape"), "Check the shapes: lhs is [n, k], rhs [k, m], grad [n, m]. "
             "Which product of grad with the other side, transposed, has lhs's shape?"),
            (("shape",), "When one side has fewer dims than the other (a weight shared "
             "by a batch), its product comes out with the batch dims in front: "
             "sum_to_shape(B, g, self.shapes[i]) sums them away."),
            (("rule",), "A step gets bare arrays and the inner backend B: compute with B's "
             "ops on them (B.float_matmul, B.float_transpose), as minidl's own steps do."),
        ],
        reference_solution=Matmul,
        examples=EXAMPLES,
        max_examples=max_examples,
        order=("tracked", "lhs", "rhs", "w"),
    )

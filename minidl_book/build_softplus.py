"""Build exercise of the autodiff chapter: the backward ``Step`` of ``softplus``.

``softplus(x) = ln(1 + e^x)``; its derivative is ``sigmoid(x)``. The reader writes the step
the way minidl's own steps are written (forward and backward side by side, ``saves`` saying
what backward reads). The checker records it in a real ``Autodiff[Flex]`` graph, runs
backward, and compares the value and the gradient with PyTorch and the gradient with float64
central differences; it also checks that the step kept only what its backward needs, that it
computed with the inner backend's ops, and that no NumPy touched the arrays: no NumPy name in
the reader's code (a static check), and no NumPy *operator* either (``1 + B.float_exp(x)``):
the first case runs a second time on ``Autodiff[Wgpu]`` (when this machine has a WebGPU adapter,
lavapipe counting), whose primitive is a ``WgpuTensor`` with no operators, as the
tensors-and-backends chapter's ``log_softmax`` default is run there.
"""

from __future__ import annotations

import numpy as np
import torch
from hypothesis import strategies as st

from minidl.autodiff import Step
from minidl_book.build_check import BuildExercise, Reference, Rules
from minidl_book.build_default_op import NOT_AN_NDARRAY, wgpu_missing
from minidl_book.harness import attach_step, unary_step_run
from minidl_book.strategies import float32_arrays

__all__ = ["PLANTED", "Softplus", "exercise"]


class Softplus(Step):
    """``softplus(x) = ln(1 + e^x)``: ``grad * sigmoid(x)``. Keeps its input."""

    saves = ("tensor",)

    def forward(self, B, tensor):
        return B.float_log1p(B.float_exp(tensor))

    def backward(self, B, grad, state):
        return (B.float_mul(grad, B.sigmoid(state["tensor"])),)


# ----- planted wrong solutions ---------------------------------------------------------------
class SoftplusWrongGrad(Step):
    """Right forward, backward multiplies by e^x instead of sigmoid(x)."""

    saves = ("tensor",)

    def forward(self, B, tensor):
        return B.float_log1p(B.float_exp(tensor))

    def backward(self, B, grad, state):
        return (B.float_mul(grad, B.float_exp(state["tensor"])),)


class SoftplusKeepsBoth(Step):
    """Right values and gradient, but it keeps its input and its output."""

    saves = ("tensor", "out")

    def forward(self, B, tensor):
        return B.float_log1p(B.float_exp(tensor))

    def backward(self, B, grad, state):
        return (B.float_mul(grad, B.sigmoid(state["tensor"])),)


class SoftplusNumpy(Step):
    """Right values by NumPy on the primitive's array instead of the backend's ops."""

    saves = ("tensor",)

    def forward(self, B, tensor):
        return np.log1p(np.exp(tensor))

    def backward(self, B, grad, state):
        return (B.float_mul(grad, B.sigmoid(state["tensor"])),)


class SoftplusSelfConsistent(Step):
    """A wrong forward (ln(1 + e^2x)) with the exact gradient *of that wrong forward*: a
    checker that differentiates the reader's own forward would pass it."""

    saves = ("tensor",)

    def forward(self, B, tensor):
        return B.float_log1p(B.float_exp(B.float_mul_scalar(tensor, 2.0)))

    def backward(self, B, grad, state):
        return (B.float_mul(grad, B.float_mul_scalar(B.sigmoid(B.float_mul_scalar(state["tensor"], 2.0)), 2.0)),)


class SoftplusSavesString(Step):
    """Right step, but ``saves = ("tensor")``: parentheses without a comma make a string,
    which ``keeps`` would read letter by letter."""

    saves = ("tensor")  # noqa: UP034 - the slip itself

    def forward(self, B, tensor):
        return B.float_log1p(B.float_exp(tensor))

    def backward(self, B, grad, state):
        return (B.float_mul(grad, B.sigmoid(state["tensor"])),)


class SoftplusOperator(Step):
    """Right values on Flex, with NumPy's ``+`` on the primitive (no NumPy name): the Wgpu run
    refuses it, a ``WgpuTensor`` has no ``+``."""

    saves = ("tensor",)

    def forward(self, B, tensor):
        return B.float_log(1 + B.float_exp(tensor))

    def backward(self, B, grad, state):
        return (B.float_mul(grad, B.sigmoid(state["tensor"])),)


#: name → (wrong step, the verdict kind it must get); "NumPy operator" needs Wgpu to be caught
PLANTED = {
    "wrong gradient": (SoftplusWrongGrad, "value"),
    "keeps input and output": (SoftplusKeepsBoth, "check"),
    "NumPy on the array": (SoftplusNumpy, "rule"),
    "self-consistent wrong forward": (SoftplusSelfConsistent, "value"),
    "NumPy operator": (SoftplusOperator, "error"),
    "saves a string": (SoftplusSavesString, "check"),
}


# ----- the checker ---------------------------------------------------------------------------
def _cases() -> st.SearchStrategy:
    arrays = float32_arrays(6)

    shapes = st.lists(st.integers(1, 4), min_size=1, max_size=3)
    return shapes.flatmap(lambda s: st.fixed_dictionaries({"x": arrays(s), "w": arrays(s)}))


def _run(solution, case: dict) -> dict:
    """The Flex run (``unary_step_run``: the rules are judged on it), then, for the example
    marked ``_wgpu`` (one run is enough to meet an operator, and a traced GPU run is slow),
    the same step on ``Autodiff[Wgpu]``: its outputs as ``out on Wgpu`` and ``grad on Wgpu``.
    An error there is handed back as ``_raised_after``, so a rule the Flex run broke is named first.
    A ``saves`` written as a string is not run: :func:`_saves_a_tuple` names the slip."""
    if isinstance(getattr(solution, "saves", ()), str):
        return {"_saves_string": solution.saves}
    outputs = unary_step_run(solution, case)
    if case.get("_wgpu") and wgpu_missing() is None:
        try:
            outputs.update(_wgpu_run(solution, case))
        except Exception as err:  # noqa: BLE001 - the rules judge the Flex run before this error
            outputs["_raised_after"] = err
    return outputs


def _wgpu_run(solution, case: dict) -> dict:
    from minidl.autodiff import Autodiff
    from minidl.backends.wgpu import Wgpu
    from minidl.dispatch import Device

    AD, dev = Autodiff[Wgpu], Device.wgpu()
    x = AD.float_require_grad(AD.from_inner(Wgpu.float_from_data(case["x"], dev)))
    w = AD.from_inner(Wgpu.float_from_data(case["w"], dev))
    try:
        y = attach_step(AD, solution(), x)
        grads = AD.backward(AD.float_sum(AD.float_mul(y, w)))
    except (TypeError, AttributeError) as err:
        if "WgpuTensor" in str(err) and err.args:
            err.args = (f"{err.args[0]}: the checker runs your step on Wgpu too"
                        f"{NOT_AN_NDARRAY}; do all array math with B's ops", *err.args[1:])
        raise
    return {"out on Wgpu": AD.inner(y), "grad on Wgpu": AD.grad(x, grads)}


def _torch(case: dict) -> dict:
    x = torch.from_numpy(case["x"]).requires_grad_(True)
    out = torch.nn.functional.softplus(x)
    (out * torch.from_numpy(case["w"])).sum().backward()
    return {"out": out.detach(), "grad": x.grad}


def _torch_wgpu(case: dict) -> dict:
    if not case.get("_wgpu") or wgpu_missing() is not None:
        return {}
    expected = _torch(case)
    return {"out on Wgpu": expected["out"], "grad on Wgpu": expected["grad"]}


def _central(case: dict, h: float = 1e-6) -> dict:
    x, w = case["x"].astype(np.float64), case["w"].astype(np.float64)

    def f(v):
        return np.logaddexp(0.0, v)  # ln(1 + e^v) without overflow

    return {"grad": w * (f(x + h) - f(x - h)) / (2 * h)}


_rng = np.random.default_rng(0)
#: tried first, on Flex and on Wgpu
EXAMPLES = [{"x": _rng.uniform(-6, 6, (2, 3)).astype(np.float32),
             "w": _rng.uniform(-6, 6, (2, 3)).astype(np.float32), "_wgpu": True}]


def _saves_a_tuple(solution, case, outputs, trace) -> str | None:
    saves = outputs.get("_saves_string")
    if saves is None:
        return None
    return (f"saves = ({saves!r}) is the string {saves!r}, not a tuple: parentheses alone do "
            f"not make a tuple, so each letter would count as a name. Write ({saves!r},), "
            "with the comma")


def _kept_one(solution, case, outputs, trace) -> str | None:
    kept = outputs["_saved"]
    if len(kept) > 1:
        return (f"Your step kept {kept} for backward; the derivative needs only one of them "
                "(keep the input, or the output), so the graph holds twice the memory it needs")
    return None


_warm: list[bool] = []


def _warm_wgpu() -> None:
    """Start the GPU runtime and compile the kernels a softplus step meets, once and outside
    the checker's trace (a traced start-up takes over a minute)."""
    if not _warm and wgpu_missing() is None:
        _wgpu_run(Softplus, EXAMPLES[0])
        _wgpu_run(SoftplusSelfConsistent, EXAMPLES[0])
    _warm.append(True)


def exercise(max_examples: int = 15) -> BuildExercise:
    """The checker for the reader's ``Softplus`` step class."""
    _warm_wgpu()
    return BuildExercise(
        "the backward Step of softplus",
        cases=_cases(),
        run=_run,
        references=[Reference("PyTorch", _torch, rtol=1e-5, atol=1e-6),
                    Reference("float64 central differences", _central, rtol=1e-4, atol=1e-5),
                    Reference("the first case on the GPU device, against PyTorch", _torch_wgpu,
                              rtol=1e-4, atol=1e-5)],
        rules=Rules(forbidden={r"^Tensor\.": "use Tensor methods inside a step (a step works on "
                               "the inner backend's primitives, with B's ops)"},
                    must_reach={r"^Flex\.": "compute with the inner backend B (B.float_exp, ...)"},
                    no_numpy=True, fresh_result=True),
        checks=[_saves_a_tuple, _kept_one],
        hints=[
            (("error", "rule"), "The ops a step needs here: B.float_exp, B.float_log1p, "
             "B.float_mul, and B.sigmoid (activations have no float_ prefix). forward gets "
             "B and a primitive, and returns a primitive."),
            (("value",), "d/dx ln(1 + e^x) = e^x / (1 + e^x): that is sigmoid(x), "
             "which B.sigmoid computes (or 1 - e^(-y) from the output y)."),
            (("check",), "saves names the arrays backward reads, as a tuple: sigmoid(x) "
             "needs only the input, saves = (\"tensor\",); 1 - e^(-y) only the output, "
             "saves = (\"out\",). Keep one, never both."),
            (("value", "shape", "dtype", "error"), "backward returns a tuple with one "
             "gradient per input: (B.float_mul(grad, B.sigmoid(x)),), x read from state."),
        ],
        reference_solution=Softplus,
        examples=EXAMPLES,
        max_examples=max_examples,
        order=("x", "w"),
    )

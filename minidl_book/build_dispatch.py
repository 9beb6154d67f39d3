"""Build exercise of the dispatch chapter: the missing forwarder, ``Dispatch.linear``.

burn-dispatch has no forwarder for ``linear`` (``// TODO: linear ops`` in ``src/ops/module.rs``,
at v0.22.0-pre.2, at main and, by the burn book, in 0.22.1), so on an autodiff device the protocol's default runs with ``B = Dispatch``
and the graph holds Matmul, Reshape and Add. The reader writes the forwarder the generated
ones are made like (pass the arguments by name to ``route``). The checker installs it for
one run, calls ``functional.linear`` on ``Autodiff[Flex]``, and checks the value and the
three gradients against PyTorch, that the call reached ``Autodiff[Flex].linear`` (one
``LinearWithBias`` step in the graph) and that Dispatch did not compute the matmul itself.
"""

from __future__ import annotations

import numpy as np
import torch
from hypothesis import strategies as st

from minidl.backend import ModuleOps
from minidl.dispatch.route import route
from minidl_book.build_check import BuildExercise, Reference, Rules
from minidl_book.harness import dispatch_linear_run

__all__ = ["PLANTED", "exercise", "linear", "route"]


def linear(cls, x, weight, bias=None):
    """Forward ``linear`` to the backend of ``x``'s device, as every generated forwarder does."""
    return route("linear", {"x": x, "weight": weight, "bias": bias})


# ----- planted wrong solutions ---------------------------------------------------------------
def linear_by_default(cls, x, weight, bias=None):
    """Right values, but this is the default again: Dispatch does the matmul and the add."""
    return ModuleOps.linear.__func__(cls, x, weight, bias)


def linear_drops_bias(cls, x, weight, bias=None):
    return route("linear", {"x": x, "weight": weight, "bias": None})


def linear_swapped(cls, x, weight, bias=None):
    """Hands x and weight over under each other's names."""
    return route("linear", {"x": weight, "weight": x, "bias": bias})


#: name → (wrong forwarder, the verdict kind it must get)
PLANTED = {
    "the default again": (linear_by_default, "rule"),
    "bias dropped": (linear_drops_bias, "value"),
    "x and weight swapped": (linear_swapped, "error"),
}


# ----- the checker ---------------------------------------------------------------------------
def _cases() -> st.SearchStrategy:
    value = st.floats(-3, 3, width=32, allow_nan=False, allow_subnormal=False)

    def arrays(*shape):
        size = int(np.prod(shape))
        return st.lists(value, min_size=size, max_size=size).map(
            lambda v: np.array(v, dtype=np.float32).reshape(shape))

    def case(n, d_in, d_out, with_bias):
        return st.fixed_dictionaries({
            "x": arrays(n, d_in), "w": arrays(d_in, d_out),
            "b": arrays(d_out) if with_bias else st.none(), "g": arrays(n, d_out)})

    dims = st.tuples(st.integers(1, 4), st.integers(1, 4), st.integers(2, 5), st.booleans())
    return dims.flatmap(lambda d: case(*d))


def _torch(case: dict) -> dict:
    x, w = (torch.from_numpy(case[k]).requires_grad_(True) for k in ("x", "w"))
    b = None if case["b"] is None else torch.from_numpy(case["b"]).requires_grad_(True)
    out = x @ w + (0 if b is None else b)  # burn's weight is [d_input, d_output]
    (out * torch.from_numpy(case["g"])).sum().backward()
    return {"out": out.detach(), "grad x": x.grad, "grad w": w.grad, "grad b": None if b is None else b.grad}


def _one_linear_step(solution, case, outputs, trace) -> str | None:
    ops = outputs["_ops"]
    if not any(op.startswith("Linear") for op in ops):
        return f"The graph holds {ops}: no Linear step, so Autodiff's linear did not record it"
    return None


def exercise(max_examples: int = 12) -> BuildExercise:
    """The checker for the reader's ``linear(cls, x, weight, bias=None)`` forwarder."""
    return BuildExercise(
        "Dispatch.linear, forwarded",
        cases=_cases(),
        run=dispatch_linear_run,
        references=[Reference("PyTorch", _torch, rtol=1e-5, atol=1e-5)],
        rules=Rules(forbidden={r"^Dispatch\.float_(matmul|add)$": "compute linear in Dispatch "
                               "(forward the call; Dispatch only routes)"},
                    must_reach={r"^Autodiff.*\.linear$": "reach Autodiff[Flex].linear"}),
        checks=[_one_linear_step],
        hints=[
            "Look at a generated forwarder, Dispatch.layer_norm: one call to route.",
            "route(op_name, {argument name: value}) picks the backend by the device of the first tensor.",
            "Pass bias along even when it is None: the backend decides what no bias means.",
        ],
        reference_solution=linear,
        max_examples=max_examples,
        order=("x", "w", "b", "g"),
    )

"""Build exercise of the dispatch chapter: the missing forwarder, ``Dispatch.linear``.

burn-dispatch has no forwarder for ``linear`` (``// TODO: linear ops`` in ``src/ops/module.rs``,
at v0.22.0-pre.2, at main and, by the burn book, in 0.22.1), so on an autodiff device the
protocol's default runs with ``B = Dispatch`` and the graph holds Matmul, Reshape and Add. The reader writes the forwarder the generated
ones are made like (pass the arguments by name to ``route``). The checker installs it for
one run, calls ``functional.linear`` with the batch and the layer on the autodiff device,
a plain batch with an autodiff layer, and an ndarray batch with a flex layer (which must
fail: wrong device); it checks the value and the gradients against PyTorch, that the call
reached ``Autodiff[Flex].linear`` (one ``LinearWithBias`` step in the graph), that the
output is on the autodiff device, and that Dispatch did not compute the matmul itself.
"""

from __future__ import annotations

import numpy as np
import torch
from hypothesis import strategies as st

from minidl import Device, Tensor
from minidl.backend import ModuleOps
from minidl.dispatch.route import route
from minidl_book.build_check import BuildExercise, Reference, Rules
from minidl_book.strategies import float32_arrays

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


def linear_by_x_device(cls, x, weight, bias=None):
    """Picks the backend by x's device alone and skips route: right while every input
    shares one device; a plain batch meets an autodiff layer and Flex gets its primitives."""
    from minidl.dispatch.route import backend_for
    from minidl.dispatch.tensor import DispatchTensor

    inner = None if bias is None else bias.backend_tensor
    out = backend_for(x.device).linear(x.backend_tensor, weight.backend_tensor, inner)
    return DispatchTensor(out, x.device)


#: name → (wrong forwarder, the verdict kind it must get)
PLANTED = {
    "the default again": (linear_by_default, "rule"),
    "bias dropped": (linear_drops_bias, "value"),
    "x and weight swapped": (linear_swapped, "check"),
    "backend of x's device, route skipped": (linear_by_x_device, "check"),
}

#: where x and the layer (weight, bias) live, and the error the call must raise or None
DEVICES = {
    "all on flex.autodiff": ("autodiff", "autodiff", None),
    "plain batch, autodiff layer": ("plain", "autodiff", None),
    "ndarray batch, flex.autodiff layer": ("ndarray", "autodiff", "wrong device"),
}
_DEVICE = {"autodiff": Device.flex().autodiff(), "plain": Device.flex(),
           "ndarray": Device.ndarray()}


def linear_run(solution, case: dict) -> dict:
    """Install ``solution`` as ``Dispatch.linear`` (removed again afterwards), run
    ``functional.linear`` with x and the layer on the case's devices and backward from
    ``sum(out * g)``; outputs the value, the gradients of the tracked inputs, ``_ops`` (the
    graph's step names), and ``_error``/``_crash`` when the call raised."""
    from minidl import functional
    from minidl.autodiff import graph
    from minidl.dispatch import Dispatch

    if "linear" in vars(Dispatch):
        raise RuntimeError("Dispatch already forwards linear: the exercise adds that forwarder")
    x_kind, w_kind, _error = DEVICES[case["devices"]]
    x_dev, w_dev = _DEVICE[x_kind], _DEVICE[w_kind]
    x = Tensor.from_numpy(case["x"], x_dev)
    x = x.require_grad() if x_dev.is_autodiff() else x
    w = Tensor.from_numpy(case["w"], w_dev).require_grad()
    b = Tensor.from_numpy(case["b"], w_dev).require_grad() if case["b"] is not None else None
    Dispatch.linear = classmethod(solution)
    try:
        out = functional.linear(x, w, b)
    except ValueError as err:
        return {"_error": str(err)}
    except (AttributeError, TypeError) as err:  # a backend got a primitive it does not own
        return {"_crash": f"{type(err).__name__}: {err}"}
    finally:
        del Dispatch.linear
    ops = graph(out).ops
    grads = (out * Tensor.from_numpy(case["g"], w_dev)).sum().backward()
    return {"out": out.inner(), "grad x": x.grad(grads) if x_dev.is_autodiff() else None,
            "grad w": w.grad(grads), "grad b": None if b is None else b.grad(grads),
            "_ops": ops, "_out on": out.device}


# ----- the checker ---------------------------------------------------------------------------
def _cases() -> st.SearchStrategy:
    arrays = float32_arrays(3)

    def case(n, d_in, d_out, with_bias):
        return st.fixed_dictionaries({
            "x": arrays(n, d_in), "w": arrays(d_in, d_out),
            "b": arrays(d_out) if with_bias else st.none(), "g": arrays(n, d_out)})

    dims = st.tuples(st.integers(1, 4), st.integers(1, 4), st.integers(2, 5), st.booleans(),
                     st.sampled_from(list(DEVICES)))
    return dims.flatmap(lambda d: case(*d[:4]).map(lambda c: {"devices": d[4], **c}))


def _torch(case: dict) -> dict:
    x_dev, _w_dev, error = DEVICES[case["devices"]]
    if error:
        return {}
    x, w = (torch.from_numpy(case[k]).requires_grad_(True) for k in ("x", "w"))
    b = None if case["b"] is None else torch.from_numpy(case["b"]).requires_grad_(True)
    out = x @ w + (0 if b is None else b)  # burn's weight is [d_input, d_output]
    (out * torch.from_numpy(case["g"])).sum().backward()
    return {"out": out.detach(), "grad x": x.grad if x_dev == "autodiff" else None,
            "grad w": w.grad, "grad b": None if b is None else b.grad}


def _one_linear_step(solution, case, outputs, trace) -> str | None:
    x_dev, w_dev, error = DEVICES[case["devices"]]
    where = f"With x on {_DEVICE[x_dev]!r} and the layer on {_DEVICE[w_dev]!r}"
    if "_crash" in outputs:
        return (f"{where}, linear crashed inside a backend ({outputs['_crash']}): a backend "
                "got a primitive it does not own. Let route pick the backend from all inputs")
    if error:
        if "_error" not in outputs:
            return f"{where}, linear ran; it must fail with a ValueError ({error})"
        if error not in outputs["_error"]:
            return f"{where}, linear failed with {outputs['_error']!r}; it must say {error!r}"
        return None
    if "_error" in outputs:
        return f"{where}, linear failed with {outputs['_error']!r}; it must run"
    if not outputs["_out on"].is_autodiff():
        return f"{where}, the output is on {outputs['_out on']!r}: it must be on the autodiff device"
    ops = outputs["_ops"]
    if not any(op.startswith("Linear") for op in ops):
        return f"The graph holds {ops}: no Linear step, so Autodiff's linear did not record it"
    return None


def _example(devices: str) -> dict:
    rng = np.random.default_rng(len(devices))
    draw = lambda *shape: rng.standard_normal(shape).astype(np.float32)  # noqa: E731
    return {"devices": devices, "x": draw(2, 3), "w": draw(3, 2), "b": draw(2), "g": draw(2, 2)}


def exercise(max_examples: int = 12) -> BuildExercise:
    """The checker for the reader's ``linear(cls, x, weight, bias=None)`` forwarder."""
    return BuildExercise(
        "Dispatch.linear, forwarded",
        cases=_cases(),
        run=linear_run,
        references=[Reference("PyTorch", _torch, rtol=1e-5, atol=1e-5)],
        rules=Rules(forbidden={r"^Dispatch\.float_(matmul|add)$": "compute linear in Dispatch "
                               "(forward the call; Dispatch only routes)"}),
        checks=[_one_linear_step],
        hints=[
            "Look at a generated forwarder, Dispatch.layer_norm: one call to route.",
            "route(op_name, {argument name: value}) picks the backend by the device of the first tensor.",
            "Pass bias along even when it is None: the backend decides what no bias means.",
        ],
        reference_solution=linear,
        max_examples=max_examples,
        examples=[_example(d) for d in DEVICES],
        order=("devices", "x", "w", "b", "g"),
    )

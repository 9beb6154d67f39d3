"""Build exercise of the dispatch chapter: write route's choice of device (rules 1-3).

The reader writes ``routing_device(op, args) -> Device``: the device of the first tensor
input (a creation op's ``device`` argument when there is none), every other tensor input
on an equal device or a ``ValueError`` ("wrong device"), two autodiff inputs on the same
checkpointing strategy, and an autodiff device whenever any input is on one. The checker
installs it in place of ``minidl.dispatch.route``'s own for one run (with a route listener
on, so every generated forwarder goes through ``route``) and runs five scenarios through
real ops: a plain batch with a plain model, a plain batch with an autodiff model (forward
and backward, against PyTorch; once with a checkpointing model), device mismatches (of
kind, of index, inside a list input), a checkpointing mismatch (between two inputs, and
inside a list whose first tensor is plain), Bool ops on an
autodiff tensor, and a Bool op mixing a plain mask with an autodiff one (rule 3 is about
devices, whatever the op's kind). Rule 4 (wrap the result with the device) stays in ``route``.
"""

from __future__ import annotations

import traceback
from typing import Any

import torch

from minidl import Device, Tensor
from minidl.dispatch import route as route_module
from minidl.dispatch.route import validate_checkpointing
from minidl.dispatch.tensor import DispatchTensor
from minidl_book.build_check import BuildExercise, Reference, Rules
from minidl_book.strategies import linear_cases, linear_example

__trace_hide__ = True

__all__ = ["PLANTED", "SCENARIOS", "exercise", "routing_device", "tensor_inputs",
           "validate_checkpointing"]


def tensor_inputs(args: dict):
    """``(name, DispatchTensor)`` for every tensor input, in order (lists count, item by item)."""
    for name, value in args.items():
        yield from route_module._tensors(name, value)


def routing_device(op, args):
    """The device an op runs on: rules 1, 2 and 3."""
    first, autodiff = None, None
    for name, tensor in tensor_inputs(args):
        if first is None:  # rule 1: the first input sets the expectation
            first = tensor.device
        elif tensor.device != first:  # rule 2: ==, which ignores autodiff
            raise ValueError(f"{op}: Input tensor {name} is on the wrong "
                             f"device: expected {first}, found {tensor.device}")
        if tensor.device.is_autodiff():
            if autodiff is None:
                autodiff = tensor.device
            else:  # two autodiff inputs: one checkpointing strategy
                validate_checkpointing(op, autodiff, tensor.device)
    if first is None:
        return args["device"]  # a creation op: its device argument
    return autodiff or first  # rule 3: an autodiff input sets the level


# ----- planted wrong solutions ---------------------------------------------------------------
def first_device_only(op, args):
    """Rule 1 alone: a plain batch meeting an autodiff model goes to Flex."""
    for _name, tensor in tensor_inputs(args):
        return tensor.device
    return args["device"]


def by_identity(op, args):
    """Rule 2 with ``is``: refuses a plain batch with an autodiff model."""
    devices = [t.device for _n, t in tensor_inputs(args)]
    if not devices:
        return args["device"]
    if any(d is not devices[0] for d in devices):
        raise ValueError(f"{op}: Input tensor is on the wrong device")
    return devices[0]


def no_checkpointing_check(op, args):
    """Rules 1-3 without the strategy check: the mismatch runs."""
    devices = [t.device for _n, t in tensor_inputs(args)]
    if not devices:
        return args["device"]
    if any(d != devices[0] for d in devices):
        raise ValueError(f"{op}: Input tensor is on the wrong device")
    return next((d for d in devices if d.is_autodiff()), devices[0])


def lists_not_walked(op, args):
    """Looks only at arguments that are tensors: a list input (cat) is missed."""
    devices = [v.device for v in args.values() if isinstance(v, DispatchTensor)]
    if not devices:
        return args["device"]
    if any(d != devices[0] for d in devices):
        raise ValueError(f"{op}: Input tensor is on the wrong device")
    autodiff = [d for d in devices if d.is_autodiff()]
    for d in autodiff[1:]:
        validate_checkpointing(op, autodiff[0], d)
    return autodiff[0] if autodiff else devices[0]


def strategy_against_first(op, args):
    """Checks every input's strategy against the first one's: a plain first input passes
    beside any, so in ``cat([plain, autodiff, checkpointing])`` the two strategies never meet."""
    devices = [t.device for _n, t in tensor_inputs(args)]
    if not devices:
        return args["device"]
    for d in devices[1:]:
        if d != devices[0]:
            raise ValueError(f"{op}: Input tensor is on the wrong device")
        validate_checkpointing(op, devices[0], d)
    return next((d for d in devices if d.is_autodiff()), devices[0])


def strategy_only_against_a_first_autodiff(op, args):
    """Checks strategies only against the first input, and only when it is autodiff: in
    ``cat([plain, autodiff, checkpointing])`` the two strategies never meet."""
    devices = [t.device for _n, t in tensor_inputs(args)]
    if not devices:
        return args["device"]
    for d in devices[1:]:
        if d != devices[0]:
            raise ValueError(f"{op}: Input tensor is on the wrong device")
        if devices[0].is_autodiff() and d.is_autodiff():
            validate_checkpointing(op, devices[0], d)
    return next((d for d in devices if d.is_autodiff()), devices[0])


def kinds_compared(op, args):
    """Rule 2 on the backend kind alone: flex:1 and flex:0 pass."""
    devices = [t.device for _n, t in tensor_inputs(args)]
    if not devices:
        return args["device"]
    if any(d.kind != devices[0].kind for d in devices):
        raise ValueError(f"{op}: Input tensor is on the wrong device")
    autodiff = [d for d in devices if d.is_autodiff()]
    for d in autodiff[1:]:
        validate_checkpointing(op, autodiff[0], d)
    return autodiff[0] if autodiff else devices[0]


def autodiff_floats_only(op, args):
    """Rule 3 for float ops only: a Bool op of a plain and an autodiff mask stays plain."""
    devices = [t.device for _n, t in tensor_inputs(args)]
    if not devices:
        return args["device"]
    if any(d != devices[0] for d in devices):
        raise ValueError(f"{op}: Input tensor is on the wrong device")
    autodiff = [d for d in devices if d.is_autodiff()]
    for d in autodiff[1:]:
        validate_checkpointing(op, autodiff[0], d)
    if autodiff and op.startswith("float_"):
        return autodiff[0]
    return devices[0]


#: name → (wrong solution, the verdict kind it must get)
PLANTED = {
    "first device only": (first_device_only, "check"),
    "devices compared by identity": (by_identity, "check"),
    "no checkpointing check": (no_checkpointing_check, "check"),
    "lists not walked": (lists_not_walked, "check"),
    "strategy checked against a plain input": (strategy_against_first, "check"),
    "strategy checked against a first autodiff input only":
        (strategy_only_against_a_first_autodiff, "check"),
    "devices compared by kind": (kinds_compared, "check"),
    "rule 3 for float ops only": (autodiff_floats_only, "check"),
}

# ----- the scenarios -------------------------------------------------------------------------
PLAIN, AUTODIFF = Device.flex(), Device.flex().autodiff()
#: scenario → (device of x, device of the layer's w and b, the error the op must raise or None)
SCENARIOS = {
    "creation op: Tensor.zeros on ndarray()": (Device.ndarray(), Device.ndarray(), None),
    "plain batch, plain model": (PLAIN, PLAIN, None),
    "plain batch, autodiff model": (PLAIN, AUTODIFF, None),
    "autodiff batch, autodiff model": (AUTODIFF, AUTODIFF, None),
    "ndarray batch, flex.autodiff model": (Device.ndarray(), AUTODIFF, "wrong device"),
    "checkpointing mismatch": (AUTODIFF, AUTODIFF.gradient_checkpointing(), "strategy mismatch"),
    "plain batch, checkpointing model": (PLAIN, AUTODIFF.gradient_checkpointing(), None),
    "flex:1 batch, flex:0 model": (Device.flex(1), AUTODIFF, "wrong device"),
    "cat of a flex and an ndarray tensor": (PLAIN, Device.ndarray(), "wrong device"),
    "cat of a plain, an autodiff and a checkpointing tensor":
        (PLAIN, AUTODIFF.gradient_checkpointing(), "strategy mismatch"),
    "bool ops on an autodiff tensor": (AUTODIFF, AUTODIFF, None),
    "bool op of a plain and an autodiff mask": (PLAIN, AUTODIFF, None),
}


#: scenario → the rule it tests, named in a failure so the reader knows which rule to reread
RULE = {
    "creation op: Tensor.zeros on ndarray()": "rule 1, for an op with no tensor input: its "
                                              "device argument",
    "plain batch, plain model": "rule 1: the first input sets the expectation",
    "plain batch, autodiff model": "rule 3: an autodiff input sets the backend",
    "autodiff batch, autodiff model": "rule 3: an autodiff input sets the backend",
    "ndarray batch, flex.autodiff model": "rule 2: equal devices, ignoring autodiff",
    "checkpointing mismatch": "rule 2: two autodiff inputs share a checkpointing strategy",
    "plain batch, checkpointing model": "rule 2's strategy check, which a plain input has no "
                                        "part in, and rule 3",
    "flex:1 batch, flex:0 model": "rule 2: equal devices (the index counts)",
    "cat of a flex and an ndarray tensor": "rules 1 and 2: tensors inside a list count",
    "cat of a plain, an autodiff and a checkpointing tensor":
        "rule 2: any two autodiff inputs share a strategy, wherever they sit",
    "bool ops on an autodiff tensor": "rule 3, for a Bool result",
    "bool op of a plain and an autodiff mask": "rule 3, for a Bool op: any input's device, "
                                               "whatever the op's kind",
}


MIXED_MASKS = "bool op of a plain and an autodiff mask"
CAT_STRATEGIES = "cat of a plain, an autodiff and a checkpointing tensor"
CREATION = "creation op: Tensor.zeros on ndarray()"


def _listener(op, backend, args) -> None:
    """A route listener: while one is on, every generated forwarder goes through route."""


def _in_solution(err: BaseException, solution: Any) -> str:
    """Where in the reader's ``solution`` ``err`` was raised (its innermost line there), or
    "" when the reader's code is not on the traceback (a backend raised it)."""
    code = getattr(getattr(solution, "__func__", solution), "__code__", None)
    mine = [f for f in traceback.extract_tb(err.__traceback__)
            if code is not None and f.filename == code.co_filename and f.name == code.co_name]
    if not mine:
        return ""
    return f"line {mine[-1].lineno} of {code.co_name}: `{(mine[-1].line or '').strip()}`"


def route_run(solution: Any, case: dict) -> dict:
    """Install ``solution`` as route's device choice for one run and drive the scenario."""
    from minidl import functional

    x_dev, w_dev, _error = SCENARIOS[case["scenario"]]
    original = route_module._routing_device
    chosen: list = []

    def recorded(op, args):
        device = solution(op, args)
        chosen.append(f"{op} → {device!r}")
        return device

    route_module._routing_device = recorded
    route_module.ROUTE_LISTENERS.append(_listener)
    out: dict = {"_chosen": chosen}
    try:
        x = Tensor.from_numpy(case["_x"], x_dev)
        w = Tensor.from_numpy(case["_w"], w_dev)
        b = Tensor.from_numpy(case["_b"], w_dev)
        if w_dev.is_autodiff():
            w, b = w.require_grad(), b.require_grad()
        if case["scenario"] == CREATION:  # a creation op: no tensor input
            out["_zeros on"] = Tensor.zeros((1, 2), device=Device.ndarray()).device
            return out
        if case["scenario"].startswith("cat"):  # a list input: its tensors count, in order
            try:
                more = [AUTODIFF, w_dev] if case["scenario"] == CAT_STRATEGIES else [w_dev]
                Tensor.cat([x, *(Tensor.from_numpy(case["_x"], d) for d in more)], 0)
            except ValueError as err:
                out["_error"] = str(err)
            except Exception as err:  # noqa: BLE001 - the reader's own line: the list missed?
                where = _in_solution(err, solution)
                if not where:
                    raise
                out["_list_raise"] = f"{type(err).__name__}: {err}, at {where}"
            return out
        if case["scenario"] == MIXED_MASKS:  # bool_and(plain mask, autodiff mask)
            mask = (x > 0).bool_and(Tensor.from_numpy(case["_x"], w_dev) > 0)
            out["_mask on"] = mask.device
            y = x.mask_fill(mask, 0.0) @ w
        elif case["scenario"].startswith("bool"):
            mask = (x > 0).bool_not()  # Bool ops on an autodiff device
            out["_mask on"] = mask.device
            y = x.mask_fill(mask, 0.0) @ w
        else:
            try:
                y = functional.linear(x, w, b)
            except ValueError as err:
                out["_error"] = str(err)
                return out
            except (AttributeError, TypeError) as err:  # a backend got another's primitive
                if _in_solution(err, solution):
                    raise  # the reader's own line raised it: the harness says which
                out["_crash"] = f"{type(err).__name__}: {err}"
                return out
        out["_out on"] = y.device
        out["out"] = y.inner().to_numpy()
        if y.device.is_autodiff():
            grads = (y * Tensor.from_numpy(case["_g"], y.device)).sum().backward()
            out["grad w"] = w.grad(grads)
            if not case["scenario"].startswith("bool"):
                out["grad b"] = b.grad(grads)
    finally:
        route_module._routing_device = original
        route_module.ROUTE_LISTENERS.remove(_listener)
    return out


def _torch(case: dict) -> dict:
    _x_dev, w_dev, error = SCENARIOS[case["scenario"]]
    if error or case["scenario"] == CREATION:
        return {}
    x = torch.from_numpy(case["_x"])
    w, b = (torch.from_numpy(case[k]).requires_grad_(True) for k in ("_w", "_b"))
    bool_ops = case["scenario"].startswith("bool")
    mask = x > 0 if case["scenario"] == MIXED_MASKS else x <= 0
    y = x.masked_fill(mask, 0.0) @ w if bool_ops else x @ w + b
    want = {"out": y.detach().numpy()}
    if w_dev.is_autodiff():
        (y * torch.from_numpy(case["_g"])).sum().backward()
        want["grad w"] = w.grad.numpy()
        if not bool_ops:
            want["grad b"] = b.grad.numpy()
    return want


def _inputs(scenario: str) -> str:
    """The scenario's inputs as the verdict names them: the cat's list, or linear's x, w, b."""
    x_dev, w_dev, _error = SCENARIOS[scenario]
    if scenario == CAT_STRATEGIES:
        return f"Tensor.cat of tensors on {x_dev!r}, {AUTODIFF!r} and {w_dev!r}, in that order"
    if scenario.startswith("cat"):
        return f"Tensor.cat of a tensor on {x_dev!r}, then one on {w_dev!r}"
    return f"x on {x_dev!r}, w and b on {w_dev!r}"


def _devices(solution, case, outputs, trace) -> str | None:
    x_dev, w_dev, error = SCENARIOS[case["scenario"]]
    where = (f"In the scenario {case['scenario']!r} ({_inputs(case['scenario'])}; "
             f"it tests {RULE[case['scenario']]})")
    if case["scenario"] == CREATION:
        found = outputs.get("_zeros on")
        if found != Device.ndarray() or found.is_autodiff():
            return (f"In the scenario {CREATION!r} (it tests {RULE[CREATION]}), "
                    "Tensor.zeros((1, 2), device=Device.ndarray()) landed on "
                    f"{found!r}; it must land on Device.ndarray()")
        return None
    if "_list_raise" in outputs:
        return (f"{where}, your routing_device raised {outputs['_list_raise']}. Tensor.cat "
                "hands its tensors as one argument, a list: does your walk look inside it?")
    if error:
        raised = outputs.get("_error")
        if raised is None and case["scenario"] == CAT_STRATEGIES:
            return (f"{where}, the cat ran; it must fail with a ValueError ({error}). The first "
                    "input is plain, and the two autodiff ones differ in strategy: does "
                    "yours compare strategies only with the first input?")
        if raised is None:
            return (f"{where}, linear ran and returned a tensor on {outputs.get('_out on')!r}; "
                    f"it must fail with a ValueError ({error})")
        if error not in raised:
            return f"{where}, the op failed with {raised!r}; it must fail with {error!r}"
        return None
    if "_crash" in outputs:
        return (f"{where}, linear crashed inside a backend ({outputs['_crash']}): your "
                f"routing_device sent {outputs['_chosen'][-1]}, whose backend received a "
                "primitive it does not own")
    if "_error" in outputs:
        return f"{where}, the op failed with {outputs['_error']!r}; it must run"
    want = w_dev if w_dev.is_autodiff() else x_dev
    if outputs.get("_mask on") is not None and not outputs["_mask on"].is_autodiff():
        if case["scenario"] == MIXED_MASKS:
            return (f"{where}, bool_and of the plain mask (x > 0) and the autodiff one landed "
                    f"on {outputs['_mask on']!r}; it must be on {w_dev!r}. Rule 3 asks "
                    "whether any input is on an autodiff device, whatever the op: does yours "
                    "apply only to float ops?")
        return (f"{where}, the comparison's Bool result is on {outputs['_mask on']!r}: "
                "an op routed by an autodiff input stays on the autodiff device")
    found = outputs.get("_out on")
    if found != want or found.is_autodiff() != want.is_autodiff():
        return f"{where}, the output is on {found!r}; it must be on {want!r}"
    return None


AGAINST = ("Checked against: each scenario's expected device or error (rules 1-3); "
           "values and gradients against PyTorch, on generated cases.")


class _RouteExercise(BuildExercise):
    """Its banner names what the checks compare (devices and errors), not only the value
    reference: a routing function is judged by where ops land, PyTorch gives the numbers."""

    def _repr_markdown_(self) -> str:
        return super()._repr_markdown_().replace(
            "Checked against: PyTorch, on generated cases.", AGAINST, 1)


def exercise(max_examples: int = 6) -> BuildExercise:
    """The checker for the reader's ``routing_device(op, args)``."""
    return _RouteExercise(
        "route's choice of device (rules 1-3)",
        cases=linear_cases(SCENARIOS),
        run=route_run,
        references=[Reference("PyTorch", _torch, rtol=1e-5, atol=1e-5)],
        checks=[_devices],
        rules=Rules(helpers=(tensor_inputs,)),  # the checker's walk, handed to the reader
        examples=[linear_example(s) for s in SCENARIOS],
        hints=[
            ("check", "The verdict names the rule its scenario tests. Run that scenario's "
                      "devices through your function by hand: which device does each line "
                      "see, and what does it return or raise?"),
            ("error", "The verdict quotes the line of yours that raised: run it by hand on "
                      "that scenario's args (name → DispatchTensor, a list of them, or a "
                      "device for a creation op)."),
            ("check", "Rule 2 has two halves. Devices: == ignores the autodiff flag, where "
                      "`is` and the kind alone say something else. Strategies: only two "
                      "autodiff inputs must share one (validate_checkpointing); a plain "
                      "input has none and takes the autodiff one's."),
        ],
        reference_solution=routing_device,
        max_examples=max_examples,
        order=("scenario",),  # the arrays (underscored) say nothing about a route
    )

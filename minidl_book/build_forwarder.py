"""Build exercise of the dispatch chapter: a forwarder generator, ``write_forwarder``.

minidl's ``write_forwarders.py`` writes every forwarder of ``Dispatch`` from the protocol's
signatures. The reader writes the small version: ``write_forwarder(op, signature) -> str``
returns the source of one forwarder, a ``def`` named ``op`` with ``cls`` and the protocol's
parameters (defaults included) whose body hands every argument, by name, to ``route``.

The checker asks it for six ops (``linear``, the one burn-dispatch leaves as
``// TODO: linear ops``, among them), compiles each source where a generated file's names
are defined (``route``, ``backend_for``, ``DispatchTensor``), installs the functions on
``Dispatch`` for one run (removed again afterwards) and drives real calls through two
backends, ``Flex`` and ``NdArray``, plain and autodiff: the values and gradients against
PyTorch, the backend ``route`` chose, ``Autodiff[Flex].linear``'s one ``LinearWithBias``
step, and a batch on the wrong device refused. A failure names the scenario and shows the
source the reader's generator wrote, never the random arrays.
"""

from __future__ import annotations

import inspect
import linecache
import traceback
from typing import Any

import torch

from minidl import Device, Tensor
from minidl.backend import FloatTensorOps, ModuleOps
from minidl.dispatch import route as route_module
from minidl.dispatch.route import backend_for, route
from minidl.dispatch.tensor import DispatchTensor
from minidl_book.build_check import BuildExercise, Reference, Rules
from minidl_book.strategies import linear_cases, linear_example

__trace_hide__ = True

__all__ = ["OPS", "PLANTED", "SCENARIOS", "args_text", "exercise", "signature_of",
           "write_forwarder"]

#: The ops the checker asks the reader's generator for, with the protocol that declares each.
OPS = {"linear": ModuleOps, "float_matmul": FloatTensorOps, "float_add_scalar": FloatTensorOps,
       "float_sum_dim": FloatTensorOps, "float_zeros": FloatTensorOps, "float_cat": FloatTensorOps}


def signature_of(op: str) -> inspect.Signature:
    """The protocol's signature of ``op`` without ``cls`` and without annotations, as the
    generated files write it: ``(x, weight, bias=None)``."""
    sig = inspect.signature(getattr(OPS[op], op))
    empty = inspect.Parameter.empty
    return sig.replace(parameters=[p.replace(annotation=empty) for p in sig.parameters.values()],
                       return_annotation=empty)


def args_text(names) -> str:
    """The text of a dict literal that maps each name, quoted, to the variable of that name:
    ``args_text(["x", "bias"])`` is ``"{'x': x, 'bias': bias}"``. The page no longer hands it
    to the reader (working out the quoting is part of the exercise); a reader who finds it
    may still call it."""
    return "{" + ", ".join(f"{name!r}: {name}" for name in names) + "}"


def write_forwarder(op, signature):
    """The forwarder of ``op``, as source: every argument, by name, to route."""
    # str(p) keeps a default (bias=None); !r writes a name in quotes
    params = ", ".join(str(p) for p in signature.parameters.values())
    args = "{" + ", ".join(f"{n!r}: {n}" for n in signature.parameters) + "}"
    return f"def {op}(cls, {params}):\n    return route({op!r}, {args})\n"


# ----- planted wrong solutions ---------------------------------------------------------------
def defaults_dropped(op, signature):
    """Names only: ``bias`` loses its ``=None``."""
    params = ", ".join(signature.parameters)
    args = ", ".join(f"{name!r}: {name}" for name in signature.parameters)
    return f"def {op}(cls, {params}):\n    return route({op!r}, {{{args}}})\n"


def op_name_unquoted(op, signature):
    """``route(linear, ...)``: the op's name written as a variable, not as a string."""
    params = ", ".join(str(p) for p in signature.parameters.values())
    args = ", ".join(f"{name!r}: {name}" for name in signature.parameters)
    return f"def {op}(cls, {params}):\n    return route({op}, {{{args}}})\n"


def defaulted_args_left_out(op, signature):
    """Hands route only the arguments without a default: the backend's own default (no
    bias) replaces the caller's bias."""
    params = ", ".join(str(p) for p in signature.parameters.values())
    names = [n for n, p in signature.parameters.items() if p.default is p.empty]
    args = ", ".join(f"{name!r}: {name}" for name in names)
    return f"def {op}(cls, {params}):\n    return route({op!r}, {{{args}}})\n"


def backend_of_first_input(op, signature):
    """Skips route: calls the backend of the first argument's device itself. Right while
    every input shares one device; a plain batch meeting an autodiff layer is not lifted."""
    params = ", ".join(str(p) for p in signature.parameters.values())
    first = next(iter(signature.parameters))
    device = "device" if first == "shape" else (f"{first}[0].device" if first == "tensors"
                                                else f"{first}.device")
    call = ", ".join(
        f"{n}.backend_tensor" if n in ("x", "weight", "lhs", "tensor")
        else (f"[t.backend_tensor for t in {n}]" if n == "tensors"
              else (f"{n} and {n}.backend_tensor" if n == "bias" else n))
        for n in signature.parameters)
    return (f"def {op}(cls, {params}):\n"
            f"    return DispatchTensor(backend_for({device}).{op}({call}), {device})\n")


def no_cls(op, signature):
    """Forgets ``cls``: a classmethod's first argument is the class."""
    params = ", ".join(str(p) for p in signature.parameters.values())
    args = ", ".join(f"{name!r}: {name}" for name in signature.parameters)
    return f"def {op}({params}):\n    return route({op!r}, {{{args}}})\n"


#: name → (wrong generator, the verdict kind it must get)
PLANTED = {
    "defaults dropped": (defaults_dropped, "check"),
    "op name not quoted": (op_name_unquoted, "check"),
    "defaulted arguments left out": (defaulted_args_left_out, "value"),
    "backend of the first input, route skipped": (backend_of_first_input, "check"),
    "cls forgotten": (no_cls, "check"),
}

# ----- the scenarios -------------------------------------------------------------------------
FLEX, NDARRAY = Device.flex(), Device.ndarray()
FLEX_AD, NDARRAY_AD = FLEX.autodiff(), NDARRAY.autodiff()
#: scenario → (the op it calls, device of the first input, of the second, the backend route
#: must choose, or the error the call must raise)
SCENARIOS = {
    "functional.linear(x, w, b) on flex": ("linear", FLEX, FLEX, "Flex"),
    "functional.linear(x, w, b) on ndarray": ("linear", NDARRAY, NDARRAY, "NdArray"),
    "functional.linear, plain flex batch, flex.autodiff layer":
        ("linear", FLEX, FLEX_AD, "Autodiff[Flex]"),
    "functional.linear, ndarray batch, flex layer": ("linear", NDARRAY, FLEX, "wrong device"),
    "x @ w, plain ndarray x, ndarray.autodiff w":
        ("float_matmul", NDARRAY, NDARRAY_AD, "Autodiff[NdArray]"),
    "x + 2.5 on ndarray": ("float_add_scalar", NDARRAY, None, "NdArray"),
    "x.sum_dim(1) on flex": ("float_sum_dim", FLEX, None, "Flex"),
    "Tensor.zeros((2, 3), device=ndarray), no tensor input": ("float_zeros", NDARRAY, None,
                                                              "NdArray"),
    "Tensor.cat([x, x], 0) on flex, a list input": ("float_cat", FLEX, None, "Flex"),
}

_FILE = "<your write_forwarder: {op}>"


def _compile(solution: Any, op: str) -> tuple[Any, str, str]:
    """``(function, its source, problem)``: the reader's source for ``op``, compiled where the
    names of a generated file are defined; ``problem`` is "" when the function is usable."""
    source = solution(op, signature_of(op))
    if not isinstance(source, str):
        return None, "", (f"write_forwarder({op!r}, signature) returned a "
                          f"{type(source).__name__}; it must return the source text of a def")
    filename = _FILE.format(op=op)
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    namespace = {"route": route, "backend_for": backend_for, "DispatchTensor": DispatchTensor}
    try:
        exec(compile(source, filename, "exec"), namespace)  # noqa: S102 - the reader's generated code
    except SyntaxError as err:
        return None, source, f"Its source is not valid Python ({err.msg}, line {err.lineno})"
    except Exception as err:  # noqa: BLE001
        return None, source, f"Defining it raised {type(err).__name__}: {err}"
    fn = namespace.get(op)
    if isinstance(fn, classmethod):  # `@classmethod` above the def, as a generated file has it
        fn = fn.__func__
    elif isinstance(fn, staticmethod):
        return None, source, (f"Its {op!r} is a @staticmethod, which gets no cls; a forwarder "
                              f"is a classmethod of Dispatch: write @classmethod, or no "
                              f"decorator (the checker makes it one), with cls first")
    if not inspect.isfunction(fn):
        return None, source, f"Its source defines no function named {op!r}"
    want = ["cls", *(str(p) for p in signature_of(op).parameters.values())]
    found = [str(p) for p in inspect.signature(fn).parameters.values()]
    if found[1:] != want[1:] or not found or not found[0].isidentifier():  # cls: any name
        return None, source, (f"Its parameters are ({', '.join(found)}); a forwarder's are "
                              f"({', '.join(want)}): cls, then the protocol's, defaults included")
    return fn, source, ""


def _raised_in(err: BaseException, source: str) -> str:
    """Where in the reader's generated source ``err`` was raised, if it was."""
    for frame in reversed(traceback.extract_tb(err.__traceback__)):
        if frame.filename.startswith("<your write_forwarder"):
            line = source.splitlines()[frame.lineno - 1].strip() if source else ""
            return f", at its line {frame.lineno}: `{line}`"
    return ""


def forwarder_run(solution: Any, case: dict) -> dict:
    """Generate the six forwarders with ``solution``, install them on ``Dispatch`` (removed
    again afterwards) and run the case's scenario; a route listener records the ops route
    was handed and the backend it chose."""
    from minidl import functional
    from minidl.autodiff import graph
    from minidl.dispatch import Dispatch

    op, first_dev, second_dev, want = SCENARIOS[case["scenario"]]
    out: dict = {"_op": op}
    made = {}
    for name in OPS:
        fn, source, problem = _compile(solution, name)
        if problem:
            out.update(_problem=problem, _source=source, _op=name)
            return out
        made[name] = (fn, source)
    out["_source"] = made[op][1]
    clash = [name for name in OPS if name in vars(Dispatch)]
    if clash:
        raise RuntimeError(f"Dispatch already defines {clash}: the exercise installs them")
    routed: list = []

    def heard(name, backend, args) -> None:
        routed.append((name, backend.__name__))

    for name, (fn, _source) in made.items():
        setattr(Dispatch, name, classmethod(fn))
    route_module.ROUTE_LISTENERS.append(heard)
    x = w = None
    try:
        x = Tensor.from_numpy(case["_x"], first_dev)
        if second_dev is not None:
            w = Tensor.from_numpy(case["_w"], second_dev)
            w = w.require_grad() if second_dev.is_autodiff() else w
            b = Tensor.from_numpy(case["_b"], second_dev)
            b = b.require_grad() if second_dev.is_autodiff() else b
        if op == "linear":
            y = functional.linear(x, w, b)
        elif op == "float_matmul":
            y = x @ w
        elif op == "float_add_scalar":
            y = x + 2.5
        elif op == "float_sum_dim":
            y = x.sum_dim(1)
        elif op == "float_zeros":
            y = Tensor.zeros((2, 3), device=first_dev)
        else:
            y = Tensor.cat([x, x], 0)
        out["_steps"] = graph(y).ops if y.device.is_autodiff() else []
        out["out"] = y.inner().to_numpy()
        if w is not None and second_dev.is_autodiff():
            grads = (y * Tensor.from_numpy(case["_g"], FLEX)).sum().backward() if op == "linear" \
                else y.sum().backward()
            out["grad w"] = w.grad(grads)
    except ValueError as err:
        out["_error"] = f"ValueError: {err}"
    except Exception as err:  # noqa: BLE001 - the generated code raised: the verdict says where
        out["_raised"] = f"{type(err).__name__}: {err}{_raised_in(err, made[op][1])}"
    finally:
        route_module.ROUTE_LISTENERS.remove(heard)
        for name in made:
            delattr(Dispatch, name)
    out["_routed"] = [f"{name} → {backend}" for name, backend in routed if name == op]
    return out


def _forwarder_checks(solution, case, outputs, trace) -> str | None:
    op, _first, _second, want = SCENARIOS[case["scenario"]]
    shown = outputs.get("_source", "").rstrip()
    source = f"\n  The source your write_forwarder wrote for {outputs['_op']}:\n    " + \
        shown.replace("\n", "\n    ") if shown else ""
    if "_problem" in outputs:
        return f"write_forwarder({outputs['_op']!r}, ...): {outputs['_problem']}{source}"
    where = f"In the scenario {case['scenario']!r}, Dispatch.{op} (your forwarder)"
    if "_raised" in outputs:
        return f"{where} raised {outputs['_raised']}{source}"
    routed = outputs["_routed"]
    if want == "wrong device":
        if "_error" not in outputs:
            return (f"{where} ran ({', '.join(routed) or 'route never heard it'}); the batch "
                    f"and the layer are on different backends, so it must fail with a "
                    f"ValueError (wrong device){source}")
        return None
    if "_error" in outputs:
        return f"{where} failed with {outputs['_error']}; it must run{source}"
    if not routed:
        return (f"{where} never handed {op!r} to route: route chooses the backend (and lifts a "
                f"plain input into an autodiff graph); the forwarder only names the op and its "
                f"arguments{source}")
    if routed[0] != f"{op} → {want}":
        return f"{where}: route ran {routed[0]}; it must run on {want}{source}"
    if op == "linear" and want.startswith("Autodiff") and \
            not any(s.startswith("Linear") for s in outputs["_steps"]):
        return (f"{where}: the graph holds {outputs['_steps']}, no Linear step: Autodiff's "
                f"linear did not record it{source}")
    return None


def _torch(case: dict) -> dict:
    op, _first, second, want = SCENARIOS[case["scenario"]]
    if want == "wrong device":
        return {}
    x = torch.from_numpy(case["_x"])
    w = b = None
    if second is not None:
        w = torch.from_numpy(case["_w"]).requires_grad_(second.is_autodiff())
        b = torch.from_numpy(case["_b"])
    if op == "linear":
        y = x @ w + b  # minidl's weight is [d_input, d_output]
    elif op == "float_matmul":
        y = x @ w
    elif op == "float_add_scalar":
        y = x + 2.5
    elif op == "float_sum_dim":
        y = x.sum(1, keepdim=True)
    elif op == "float_zeros":
        y = torch.zeros(2, 3)
    else:
        y = torch.cat([x, x], 0)
    expected = {"out": y.detach().numpy()}
    if w is not None and second.is_autodiff():
        loss = (y * torch.from_numpy(case["_g"])).sum() if op == "linear" else y.sum()
        loss.backward()
        expected["grad w"] = w.grad.numpy()
    return expected


def exercise(max_examples: int = 6) -> BuildExercise:
    """The checker for the reader's ``write_forwarder(op, signature)``."""
    return BuildExercise(
        "a forwarder generator: each call must reach the backend minidl's route picks "
        "(Flex, NdArray, plain or autodiff), an autodiff linear must record one "
        "LinearWithBias step, a wrong device must fail",
        cases=linear_cases(SCENARIOS),
        run=forwarder_run,
        references=[Reference("PyTorch, for values and gradients", _torch, rtol=1e-5,
                              atol=1e-5)],
        checks=[_forwarder_checks],
        rules=Rules(helpers=(args_text,)),  # not on the page, allowed if found
        examples=[linear_example(s) for s in SCENARIOS],
        hints=[
            ("check", "Print write_forwarder('linear', signature_of('linear')) and read it "
                      "as a file: would Python run it, and is it the shape of the "
                      "float_matmul forwarder above?"),
            ("value", "route calls the backend with exactly the arguments in its dict; "
                      "an argument left out takes the backend's default, not the caller's."),
            ("check", "str() of a parameter keeps its default; a name inside the returned "
                      "text is looked up when the forwarder runs, a string is not."),
        ],
        reference_solution=write_forwarder,
        max_examples=max_examples,
        order=("scenario",),
    )

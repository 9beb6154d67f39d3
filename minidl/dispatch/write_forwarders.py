"""Writes the forwarding ops: ``dispatch/ops/*.py`` and Autodiff's int and bool ops.

burn writes Dispatch's forwarding with macros; we generate plain Python once, so every
forwarder is a real function with a file and line a debugger can stop at and a traceback
names. Two kinds of file come out of here:

- ``dispatch/ops/<family>.py``: one forwarding classmethod per backend op, which routes the
  call by the device of its first input. ``linear`` and its backward helpers are deliberately
  not forwarded (burn 0.22's ``// TODO: linear ops``).
- ``autodiff/ops/int_tensor.py`` and ``bool_tensor.py``: Int and Bool tensors are never
  differentiated, so each op of ``Autodiff[B]`` calls ``B``'s op (burn-autodiff writes them
  out one by one in ``ops/int_tensor.rs`` / ``bool_tensor.rs``).

Run ``python minidl/dispatch/write_forwarders.py`` (a script, so a stale file cannot stop it) after
changing the protocol; a test checks every file is current.
"""

from __future__ import annotations

import inspect
from pathlib import Path

from minidl.backend import (
    ActivationOps,
    BoolTensorOps,
    DType,
    FloatTensorOps,
    IntTensorOps,
    ModuleOps,
    op_names,
)

#: Ops Dispatch does not forward, so the ModuleOps default runs with B = Dispatch.
NOT_FORWARDED = ("linear", "linear_x_backward", "linear_weight_backward", "linear_bias_backward")

#: Ops whose Dispatch version is written by hand in ``dispatch/backend.py`` (they move tensors
#: between devices or read the device, rather than run on one backend).
HANDWRITTEN = (
    "float_device", "int_device", "bool_device", "float_to_device", "int_to_device", "bool_to_device",
)

#: Ops whose backend result is always one tensor primitive: their forwarder wraps it without
#: asking (the others may return a tuple, data, a device or a flag, which ``wrap`` sorts out).
#: The element-wise arithmetic and the products every training step makes, nothing rarer.
ONE_TENSOR = frozenset({
    "float_add", "float_sub", "float_mul", "float_div", "float_add_scalar", "float_sub_scalar",
    "float_mul_scalar", "float_div_scalar", "float_matmul", "float_neg", "float_exp", "float_log",
    "float_transpose", "float_reshape", "float_sum_dim", "float_mean",
})

FAMILIES = {
    "float_tensor": ("FloatForwarding", FloatTensorOps),
    "int_tensor": ("IntForwarding", IntTensorOps),
    "bool_tensor": ("BoolForwarding", BoolTensorOps),
    "activation": ("ActivationForwarding", ActivationOps),
    "module": ("ModuleForwarding", ModuleOps),
}

TODO_LINEAR = '''
    # TODO: linear ops
    # def linear(cls, x, weight, bias=None):
    #     ...
    #
    # Dispatch does not forward linear (nor its three backward helpers): burn 0.22's
    # burn-dispatch/src/ops/module.rs ends with this same comment. So `Dispatch.linear` is the
    # ModuleOps default running with B = Dispatch: it splits linear into Dispatch.float_matmul
    # + Dispatch.float_reshape + Dispatch.float_add, and Autodiff's dedicated linear step is
    # never reached. The chapter "nn modules" follows the consequences.
'''


def _params(fn) -> list[inspect.Parameter]:
    return list(inspect.signature(fn).parameters.values())[1:]


def _default_source(value) -> str:
    return f"DType.{value.name}" if isinstance(value, DType) else repr(value)


#: Parameter names that hold a tensor (unless the op's name says scalar, see ``_is_tensor``).
TENSOR_PARAMS = frozenset({
    "lhs", "rhs", "tensor", "x", "weight", "weights", "mask", "grad", "output_grad", "indices",
    "output", "gamma", "beta", "mean", "var", "query", "key", "value",
})
#: Parameter names that never hold a tensor: passed through without a check.
PLAIN_PARAMS = frozenset({
    "dim", "dim1", "dim2", "axes", "shape", "dtype", "options", "times", "slices", "start", "end",
    "step", "epsilon", "negative_slope", "output_size", "padding", "padding_end", "stride",
    "dilation", "groups", "require_grad",
})


def _is_tensor(op: str, param: str) -> bool:
    """Whether ``param`` of ``op`` is a tensor by its name (``rhs`` of ``float_add_scalar`` is a
    number). A wrong guess is only slower: the check fails and ``route`` takes the call."""
    if param in ("rhs", "value") and ("scalar" in op or "fill" in op or "powi" in op
                                      or op.endswith("_elem")):
        return False
    return param in TENSOR_PARAMS


def _forwarder(name: str, fn) -> str:
    params = _params(fn)
    sig = ", ".join(
        ["cls"] + [p.name if p.default is inspect._empty else f"{p.name}={_default_source(p.default)}" for p in params]
    )
    args = ", ".join(f"{p.name!r}: {p.name}" for p in params)
    slow = f"        return route({name!r}, {{{args}}})\n"
    tensors = [p.name for p in params if _is_tensor(name, p.name)]
    if not tensors:  # creation ops and the like: route by their device argument
        return f"\n    @classmethod\n    def {name}({sig}):\n{slow}"
    # The fast path, inlined (a speed trick, ARCHITECTURE.md "Where speed tricks may live"):
    # every tensor input on the same Device object (so no autodiff lifting), nothing else a
    # tensor, no route listener -> the backend from ROUTED, called directly. The op listeners
    # (debug output) are told here, so the path they log is the path taken without them.
    # ROUTED's `get` is bound once (ROUTED_GET), and a ONE_TENSOR op's DispatchTensor is made
    # by `object.__new__` and two slot writes rather than a call of its `__init__`: together
    # 0.10 us of the forwarder's 0.48 on a 4x4 add (one thread's CPU time, Zen 4, Python 3.11).
    first = tensors[0]
    conds = [f"type({t}) is DispatchTensor and {t}.device is device" for t in tensors[1:]]
    conds += [f"type({p.name}) is not DispatchTensor" for p in params
              if p.name not in tensors and p.name not in PLAIN_PARAMS]
    call = ", ".join(f"{p.name}.backend_tensor" if p.name in tensors else p.name for p in params)
    heard = ", ".join(f"{p.name!r}: {p.name}.backend_tensor" if p.name in tensors else f"{p.name!r}: {p.name}"
                      for p in params)
    lines = [
        "\n    @classmethod",
        f"    def {name}({sig}):",
        f"        if type({first}) is DispatchTensor and not ROUTE_LISTENERS:",
        f"            device = {first}.device",
    ]
    indent = "            "
    if conds:
        lines.append(f"            if {' and '.join(conds)}:")
        indent += "    "
    lines += [
        f"{indent}backend = ROUTED_GET(id(device)) or backend_for(device)",
        f"{indent}if OP_LISTENERS:",
        f"{indent}    for listener in OP_LISTENERS:",
        f"{indent}        listener({name!r}, backend, {{{heard}}})",
    ]
    backend_call = f"backend.{name}({call})"
    if name in ONE_TENSOR:  # made without __init__'s call: 0.05 us of a 4x4 add's 2 (see below)
        lines += [
            f"{indent}result = new_object(DispatchTensor)",
            f"{indent}result.backend_tensor = {backend_call}",
            f"{indent}result.device = device",
            f"{indent}return result",
        ]
    else:
        lines += [
            f"{indent}out = {backend_call}",
            f"{indent}return DispatchTensor(out, device) if type(out) in PRIMITIVE_TYPES else wrap(out, device)",
        ]
    return "\n".join(lines) + "\n" + slow


def render(module: str) -> str:
    """The source of one generated ``dispatch/ops/<module>.py``."""
    class_name, proto = FAMILIES[module]
    lines = [
        f'"""Dispatch forwarding for {proto.__name__} (generated by minidl.dispatch.write_forwarders; do not edit)."""',
        "",
        "from __future__ import annotations",
        "",
        f"from minidl.backend import PRIMITIVE_TYPES, {', '.join(sorted(['DType', proto.__name__]))}  # noqa: F401",
        "from minidl.dispatch.route import (  # noqa: F401",
        *[f"    {name}," for name in ("OP_LISTENERS", "ROUTE_LISTENERS", "ROUTED", "ROUTED_GET",
                                      "backend_for", "new_object", "route", "wrap")],
        ")",
        "from minidl.dispatch.tensor import DispatchTensor  # noqa: F401",
        "",
        "",
        f"class {class_name}({proto.__name__}):",
        f'    """Forwards every {proto.__name__} op to the backend of its first input\'s device.',
        "",
        "    When every tensor input sits on the same device, the forwarder calls that device's",
        "    backend itself (telling the ``OP_LISTENERS`` first); any other case (mixed devices,",
        '    autodiff lifting, a route listener) goes through ``route``, which decides the general way."""',
    ]
    body = []
    for name in op_names(proto):  # the protocol's own ops, in declaration order
        func = proto.__dict__[name].__func__
        if name in NOT_FORWARDED:
            if name == "linear":
                body.append(TODO_LINEAR)
            continue
        if name not in HANDWRITTEN:
            body.append(_forwarder(name, func))
    return "\n".join(lines) + "".join(body)


def target(module: str) -> Path:
    """Where the generated Dispatch forwarding of one op family lives."""
    return Path(__file__).parent / "ops" / f"{module}.py"


# ----- Autodiff's pass-through ops -------------------------------------------------------------
#: The Autodiff files written here: module -> (mixin name, protocol, burn-autodiff file).
AUTODIFF_FAMILIES = {
    "int_tensor": ("AutodiffIntOps", IntTensorOps, "ops/int_tensor.rs"),
    "bool_tensor": ("AutodiffBoolOps", BoolTensorOps, "ops/bool_tensor.rs"),
}

AUTODIFF_DOC = '''"""Autodiff's {kind} ops: each one is the inner backend's (burn-autodiff ``{rs}``).

Generated by minidl.dispatch.write_forwarders; do not edit (run ``python minidl/dispatch/write_forwarders.py``).

{kind_title} tensors are never differentiated, so on an autodiff device they are the inner backend's
primitives and every op is a plain call of ``B``'s op, as burn writes them out one by one. Two
rules: a ``device`` argument is handed down as the inner device, and ``{kind_lower}_into_float``
wraps its result as an untracked ``AutodiffTensor`` (a float on the autodiff side). Every
``{proto}`` op is defined here, so none falls back to a protocol default running on
``Autodiff[B]``.
"""
'''


def _passthrough(name: str, fn) -> str:
    params = _params(fn)
    sig = ", ".join(
        ["cls"] + [p.name if p.default is inspect._empty else f"{p.name}={_default_source(p.default)}" for p in params]
    )
    args = ", ".join(f"plain_device({p.name})" if p.name == "device" else p.name for p in params)
    call = f"cls._inner.{name}({args})"
    if name.endswith("_into_float"):  # a float result belongs to the autodiff side
        call = f"AutodiffTensor.untracked({call})"
    return f"\n    @classmethod\n    def {name}({sig}):\n        return {call}\n"


def render_autodiff(module: str) -> str:
    """The source of one generated ``autodiff/ops/<module>.py``."""
    class_name, proto, rs = AUTODIFF_FAMILIES[module]
    kind = "int" if proto is IntTensorOps else "bool"
    ops = [(name, proto.__dict__[name].__func__) for name in op_names(proto)]
    needs_dtype = any(isinstance(p.default, DType) for _, fn in ops for p in _params(fn))
    lines = [
        AUTODIFF_DOC.format(kind=kind, kind_title=kind.capitalize(), kind_lower=kind, rs=rs,
                            proto=proto.__name__),
        "from __future__ import annotations",
        "",
        "from minidl.autodiff.ops.base import AutodiffOpsBase, plain_device",
        "from minidl.autodiff.tensor import AutodiffTensor",
    ]
    if needs_dtype:
        lines.append("from minidl.backend.dtype import DType")
    lines += [
        "",
        "",
        f"class {class_name}(AutodiffOpsBase):",
        f'    """{kind.capitalize()} ops of ``Autodiff[B]``: each one calls ``B``\'s."""',
    ]
    return "\n".join(lines) + "\n" + "".join(_passthrough(name, fn) for name, fn in ops)


def autodiff_target(module: str) -> Path:
    """Where one generated family of Autodiff's pass-through ops lives."""
    return Path(__file__).parent.parent / "autodiff" / "ops" / f"{module}.py"


def main() -> None:
    for module in FAMILIES:
        target(module).write_text(render(module))
        print("wrote", target(module))
    for module in AUTODIFF_FAMILIES:
        autodiff_target(module).write_text(render_autodiff(module))
        print("wrote", autodiff_target(module))


if __name__ == "__main__":
    main()

"""``build_program``: two recorded runs of a step become one straight-line Python function.

The second run is the program; the first tells its inputs apart. Every array a call reads is

- made by an earlier call of the same run: a temporary (``t12``, fresh every replay);
- a declared input (the batch): ``in0``, rebound by each replay;
- made by the *previous* run: carried state (a parameter, a moment), ``st3``. Its stable
  buffer is the array the run left behind (the one the model and optimizer now hold); each
  replay writes the new value into it, so the objects the caller holds see every update;
- none of these: a constant, which must be the same array in both runs.

A non-array argument that differs between the runs is a host value the step computes every
time (Adam's ``1 - beta_1 ** t`` with an undeclared step count): refused, since a replay would
freeze it. A declared scalar (a :class:`SymbolicScalar`) becomes an expression evaluated per
replay. The program is generated as Python source (printed by ``Graph.program_text``): one
line per backend call, no interpretation between them.

burn's counterpart (v0.22.0-pre.2) is the end of ``capture`` in
``burn-tensor/src/tensor/api/graph.rs`` (:71-80): ``Backend::graph_stop_capture`` (on CubeCL,
``burn-cubecl/src/backend.rs:84``) returns the recorded launches as one hardware graph, with
no input, state or output signature: its buffers are whatever the closure touched.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from minidl.capture.errors import CaptureError
from minidl.capture.recorder import Call, root
from minidl.capture.scalar import SymbolicScalar

_LITERALS = (int, float, bool, str, type(None))

#: same-shape elementwise ops a replay may run with ``out=`` into a dying buffer: NumPy's
#: ufuncs round exactly as the kernels do (IEEE add, sub, mul, div, sqrt in the array dtype)
UFUNCS = {"float_add": np.add, "float_sub": np.subtract, "float_mul": np.multiply,
          "float_div": np.divide, "float_add_scalar": np.add, "float_sub_scalar": np.subtract,
          "float_mul_scalar": np.multiply, "float_div_scalar": np.divide, "float_sqrt": np.sqrt}


@dataclass
class Program:
    """The generated replay function and what it needs."""

    source: str
    fn: Callable
    n_inputs: int
    scalars: list[SymbolicScalar]
    state: list[np.ndarray]
    outputs: list[str] = field(default_factory=list)
    calls: int = 0  # backend calls one replay makes
    #: per state slot, the (call, path) that makes its new value
    positions: list[tuple[int, str]] = field(default_factory=list)
    names: list[str] = field(default_factory=list)
    namespace: dict[str, Any] = field(default_factory=dict)

    def rebind(self, state: list[np.ndarray]) -> None:
        """Make ``state`` the carried buffers (same shapes and dtypes as before)."""
        self.state = list(state)
        self.namespace["STATE"] = tuple(state)


def _paths(out: Any, prefix: str) -> list[tuple[str, np.ndarray]]:
    if isinstance(out, np.ndarray):
        return [(prefix, out)]
    if isinstance(out, tuple | list):
        found = []
        for i, item in enumerate(out):
            found += _paths(item, f"{prefix}[{i}]")
        return found
    return []


class _Builder:
    def __init__(self, prev: list[Call], calls: list[Call], inputs: dict[int, str]):
        self.prev, self.calls, self.inputs = prev, calls, inputs
        self.made: dict[int, str] = {}            # id(array) -> expression, this run
        self.prev_made: dict[int, tuple[int, str]] = {}  # id(array) -> (call, path), previous run
        self.state: dict[tuple[int, str], int] = {}     # (call, path) -> state slot
        self.state_arrays: list[np.ndarray] = []
        self.state_roots: list[int] = []
        self.consts: dict[str, Any] = {}
        self.scalars: list[SymbolicScalar] = []
        self.reads: dict[int, int] = {}           # id(root) -> last call reading it
        for j, call in enumerate(prev):
            for path, arr in _paths(call.out, ""):
                self.prev_made.setdefault(id(arr), (j, path))

    def const(self, value: Any) -> str:
        name = f"c{len(self.consts)}"
        self.consts[name] = value
        return name

    def refuse(self, i: int, call: Call, what: str) -> None:
        raise CaptureError(f"capture refused call {i} ({call.name}, from {call.where}): {what}")

    def array(self, i: int, call: Call, arr: np.ndarray, before: Any) -> str:
        key = id(arr)
        self.reads[id(root(arr))] = i
        if key in self.made:
            return self.made[key]
        if key in self.inputs:
            return self.inputs[key]
        if key in self.prev_made:
            j, path = self.prev_made[key]
            if self.calls[j].name != self.prev[j].name:
                self.refuse(i, call, "it reads state the previous run made in a different call")
            slot = self.state.get((j, path))
            if slot is None:
                slot = self.state[(j, path)] = len(self.state_arrays)
                current = dict(_paths(self.calls[j].out, ""))[path]
                self.state_arrays.append(current)
                self.state_roots.append(id(root(arr)))
            return f"st{slot}"
        same = before is arr or (isinstance(before, np.ndarray) and id(before) not in self.prev_made
                                 and before.shape == arr.shape and before.dtype == arr.dtype
                                 and np.array_equal(before, arr))
        if not same:
            self.refuse(i, call, f"an array argument of shape {list(arr.shape)} changes between two runs "
                        f"but is neither a declared input nor made by the step (host data made inside "
                        f"the step would be frozen: pass it as an input)")
        return self.const(arr)

    def arg(self, i: int, call: Call, value: Any, before: Any) -> str:
        if isinstance(value, np.ndarray):
            return self.array(i, call, value, before)
        if isinstance(value, SymbolicScalar):
            self.scalars.append(value)
            return f"s{len(self.scalars) - 1}"
        if isinstance(value, tuple | list) and isinstance(before, tuple | list) and len(value) == len(before):
            items = [self.arg(i, call, v, b) for v, b in zip(value, before)]
            text = ", ".join(items)
            return f"({text},)" if isinstance(value, tuple) else f"[{text}]"
        if not _equal(value, before):
            self.refuse(i, call, f"the argument {before!r} of one run was {value!r} in the next: a host "
                        f"value the step computes every time (a learning rate from a schedule, Adam's "
                        f"step count) would be frozen into the capture. Declare it: pass it to the step "
                        f"as an argument, or pass the optimizer in `optimizers=`")
        if isinstance(value, _LITERALS) and not (isinstance(value, float) and not np.isfinite(value)):
            return repr(value)
        return self.const(value)


def _launch_writes_into(call: Call, path: str, buf: np.ndarray, state_root: int, last_read: int,
                        j: int) -> bool:
    """Whether fused launch ``j`` may write output ``path`` straight into the state buffer
    ``buf``: nothing after it reads the old value, and where the launch itself reads it, its
    kernel reads that input at element i only, before storing element i (``aliasable``, from
    :mod:`minidl.capture.launches`), and at the output's own layout."""
    aliasable = getattr(call.fn, "aliasable", None)
    if aliasable is None or not path.startswith("[") or last_read > j:
        return False
    made = call.out[int(path[1:-1])]
    if made.shape != buf.shape or made.dtype != buf.dtype or not buf.flags.c_contiguous:
        return False
    for pos, arg in enumerate(call.args):
        if isinstance(arg, np.ndarray) and id(root(arg)) == state_root:
            start = root(arg).__array_interface__["data"][0]
            if ((pos, int(path[1:-1])) not in aliasable or arg.shape != buf.shape or not arg.flags.c_contiguous
                    or arg.__array_interface__["data"][0] != start):
                return False
    return True


def _equal(a: Any, b: Any) -> bool:
    if type(a) is not type(b):
        return False
    try:
        return bool(a == b)
    except (TypeError, ValueError):
        return a is b


def build_program(prev: list[Call], calls: list[Call], inputs: dict[int, str], n_inputs: int,
                  outputs: list[np.ndarray]) -> Program:
    """The replay function of ``calls`` (the second run); ``prev`` is the run before it,
    ``inputs`` maps each declared input array's id to its name (``in0``...)."""
    if [c.name for c in prev] != [c.name for c in calls]:
        first = next((k for k, (a, b) in enumerate(zip(prev, calls)) if a.name != b.name),
                     min(len(prev), len(calls)))
        a = prev[first].name if first < len(prev) else "(end)"
        b = calls[first].name if first < len(calls) else "(end)"
        raise CaptureError(
            f"capture refused: two runs of the step made different programs ({len(prev)} and "
            f"{len(calls)} backend calls; call {first} was {a} then {b}, from "
            f"{(calls + prev)[min(first, len(calls + prev) - 1)].where}). Python control flow changed "
            f"between steps (a first optimizer step, a branch on a value): warm up more, or remove it")
    b = _Builder(prev, calls, inputs)
    lines: dict[int, tuple[str, str]] = {}
    for i, (call, before) in enumerate(zip(calls, prev)):
        if not _paths(call.out, ""):  # a query (float_device, float_shape): nothing to replay
            continue
        args = [b.arg(i, call, v, w) for v, w in zip(call.args, before.args)]
        args += [f"{k}={b.arg(i, call, v, before.kwargs.get(k))}" for k, v in call.kwargs.items()]
        fname = b.const(call.fn)
        lines[i] = (f"t{i} = {fname}({', '.join(args)})", call.name)
        for path, arr in _paths(call.out, ""):
            b.made.setdefault(id(arr), f"t{i}{path}")
    # every state slot receives the value the call that made it in the previous run makes now:
    # in the call itself when it is an elementwise op and its buffer is read no later (the
    # in-place update SGD's `w - lr * g` allows), else copied after the program
    tail, into = [], {}
    for (j, path), slot in b.state.items():
        op = calls[j].name
        last_read = b.reads.get(b.state_roots[slot], -1)
        buf = b.state_arrays[slot]
        made = dict(_paths(calls[j].out, ""))[path]
        if op in UFUNCS and path == "" and last_read <= j and made.shape == buf.shape and made.dtype == buf.dtype:
            code, name = lines[j]
            fn_args = code.split("(", 1)[1].rsplit(")", 1)[0]
            lines[j] = (f"t{j} = {b.const(UFUNCS[op])}({fn_args}, out=st{slot})", name + "  # in place")
        elif _launch_writes_into(calls[j], path, buf, b.state_roots[slot], last_read, j):
            into.setdefault(j, {})[int(path[1:-1])] = slot
        else:
            tail.append(f"np.copyto(st{slot}, t{j}{path})")
    for j, slots in into.items():  # a fused launch given its state buffers as outputs
        code, name = lines[j]
        outs = ", ".join(f"st{slots[k]}" if k in slots else "None" for k in range(len(calls[j].out)))
        lines[j] = (f"{code[:-1]}, outs=({outs},))", name + "  # in place")
    outs = []
    for arr in outputs:
        expr = b.made.get(id(arr)) or b.inputs.get(id(arr))
        if expr is None:
            raise CaptureError("capture refused: the step returned a tensor the step did not compute "
                               "(return only tensors made inside the step)")
        outs.append(expr)
    params = ", ".join([f"in{k}" for k in range(n_inputs)] + [f"s{k}" for k in range(len(b.scalars))])
    body = [f"    {code:<36} # {name}" for code, name in lines.values()] + [f"    {t}" for t in tail]
    state_names = ", ".join(f"st{k}" for k in range(len(b.state_arrays)))
    header = f"def replay({params}):"
    if state_names:
        body.insert(0, f"    {state_names}, = STATE")
    body.append(f"    return ({', '.join(outs)}{',' if outs else ''})")
    source = "\n".join([header, *body])
    namespace: dict[str, Any] = {"np": np, "STATE": tuple(b.state_arrays), **b.consts}
    exec(compile(source, "<captured step>", "exec"), namespace)  # noqa: S102 - our own generated code
    positions = sorted(b.state, key=b.state.get)
    return Program(source, namespace["replay"], n_inputs, b.scalars, b.state_arrays, outs, len(lines),
                   positions, [c.name for c in calls], namespace)

"""Build exercises of the capture chapter. The chapter's: ``classify(run1, run2, inputs)``,
the core of capture (each array the second recorded run reads: temporary, input, carried
state or constant; a host value that changes between the runs refused); see the section
below ``classify``. Kept beside it (tested, not on the page): the guard a replay runs before
its program.

A captured program is fixed to what the capture saw at each argument position: a tensor's
shape, dtype and device, a scalar input, a static value. The reader writes
``guard(specs, args)``: return ``None`` when ``args`` fit ``specs``, else raise
``ReplayMismatchError`` with a message that names the argument's position and what differs
(both values). The specs here are plain dicts, not minidl's ``_Spec`` objects, so the
library's own check cannot be pasted in. The checker generates specs and argument lists
(fitting ones, ones where a declared scalar has another value, which must go through, and
ones with one argument changed: its shape, dtype, device, kind, or a static value, or one
argument too many or too few), and compares which calls are refused, at
which position, with the generator's own record of what it changed; a guard must look at
shapes, dtypes and devices only, never at a tensor's values.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import numpy as np
from hypothesis import strategies as st

from minidl import Device, Tensor
from minidl.capture import ReplayMismatchError
from minidl_book.build_check import BuildExercise, Reference, Rules

__all__ = ["CLASSIFY_PLANTED", "EXAMPLE", "PLANTED", "classify", "classify_exercise", "exercise",
           "guard", "show_runs"]

DEVICES = {"flex+ad": Device.flex().autodiff(), "flex": Device.flex()}


def guard(specs: list[dict], args: tuple) -> None:
    """Refuse ``args`` that do not fit ``specs``, naming the position and what differs."""
    if len(args) != len(specs):
        raise ReplayMismatchError(f"{len(args)} arguments, the capture had {len(specs)}")
    for i, (spec, arg) in enumerate(zip(specs, args)):
        where = f"argument {i}"
        if spec["kind"] == "tensor":
            if not isinstance(arg, Tensor):
                raise ReplayMismatchError(f"{where} must be a Tensor, found {type(arg).__name__}")
            # Device equality ignores autodiff: Device.flex() == Device.flex().autodiff()
            for field, found, same in (
                    ("shape", tuple(arg.shape), lambda a, b: a == b),
                    ("dtype", arg.dtype, lambda a, b: a == b),
                    ("device", arg.device, lambda a, b: a == b and a.is_autodiff() == b.is_autodiff())):
                if not same(found, spec[field]):
                    raise ReplayMismatchError(
                        f"{where} has {field} {found}, the capture had {spec[field]}")
        elif spec["kind"] == "scalar":
            if not isinstance(arg, int | float) or isinstance(arg, bool):
                raise ReplayMismatchError(f"{where} must be a number, found {arg!r}")
        elif arg != spec["value"]:
            raise ReplayMismatchError(f"{where} is {arg!r}, the capture had {spec['value']!r}")


# ----- planted wrong solutions ---------------------------------------------------------------
def shapes_only(specs: list[dict], args: tuple) -> None:
    """Checks shapes and nothing else: another dtype or device goes through."""
    for i, (spec, arg) in enumerate(zip(specs, args)):
        if spec["kind"] == "tensor" and tuple(arg.shape) != spec["shape"]:
            raise ReplayMismatchError(f"argument {i} has shape {tuple(arg.shape)}, "
                                      f"the capture had {spec['shape']}")


def scalar_frozen(specs: list[dict], args: tuple) -> None:
    """Refuses any other value of a declared scalar, which a replay must accept (another
    learning rate is what a scalar input is for)."""
    guard(specs, args)
    for i, (spec, arg) in enumerate(zip(specs, args)):
        if spec["kind"] == "scalar" and arg != spec["value"]:
            raise ReplayMismatchError(f"argument {i} is {arg!r}, the capture had {spec['value']!r}")


def vague(specs: list[dict], args: tuple) -> None:
    """Refuses the right calls, but its message says neither where nor what."""
    try:
        guard(specs, args)
    except ReplayMismatchError:
        raise ReplayMismatchError("replay: the arguments do not match") from None


def wrong_error(specs: list[dict], args: tuple) -> None:
    """Raises a TypeError, which a caller catching replay mismatches does not catch."""
    try:
        guard(specs, args)
    except ReplayMismatchError as err:
        raise TypeError(str(err)) from None


def reads_values(specs: list[dict], args: tuple) -> None:
    """Right verdicts, but it pulls each tensor's values to the host to learn its shape."""
    for arg in args:
        if isinstance(arg, Tensor):
            np.asarray(arg.to_numpy())
    guard(specs, args)


#: name → (wrong solution, the verdict kind it must get)
PLANTED = {
    "shapes only": (shapes_only, "value"),
    "a scalar frozen at its capture value": (scalar_frozen, "value"),
    "vague message": (vague, "check"),
    "another exception": (wrong_error, "error"),
    "reads the values": (reads_values, "rule"),
}


# ----- cases: specs, arguments, and what the generator changed -----------------------------
def _spec_strategy() -> st.SearchStrategy:
    tensor = st.fixed_dictionaries({
        "kind": st.just("tensor"),
        "shape": st.lists(st.integers(1, 4), min_size=1, max_size=3).map(tuple),
        "dtype": st.sampled_from(["float32", "int64"]),
        "device": st.sampled_from(sorted(DEVICES)),
    })
    scalar = st.fixed_dictionaries({"kind": st.just("scalar"), "value": st.floats(0.001, 1.0)})
    static = st.fixed_dictionaries({"kind": st.just("static"),
                                    "value": st.sampled_from([True, False, "sum", "mean", 3])})
    return st.one_of(tensor, tensor, scalar, static)


CHANGES = ("none", "scalar", "shape", "dtype", "device", "kind", "static", "extra", "missing")


def _cases() -> st.SearchStrategy:
    return st.fixed_dictionaries({
        "specs": st.lists(_spec_strategy(), min_size=1, max_size=4),
        "change": st.sampled_from(CHANGES),
        "at": st.integers(0, 3),
    })


def _value(spec: dict) -> Any:
    if spec["kind"] == "tensor":
        return ("tensor", spec["shape"], spec["dtype"], spec["device"])
    return spec["value"]


def arguments(case: dict) -> tuple[list, int]:
    """The case's argument list (tensors as descriptions) and the position it changed
    (-1: none, or a count mismatch)."""
    specs, change = case["specs"], case["change"]
    values = [_value(s) for s in specs]
    if change == "extra":
        return values + [0.5], -1
    if change == "missing":
        return values[:-1], -1
    if change == "none":
        return values, -1
    wanted = {"scalar": "scalar", "shape": "tensor", "dtype": "tensor", "device": "tensor", "kind": None,
              "static": "static"}[change]
    fits = [i for i, s in enumerate(specs) if wanted is None or s["kind"] == wanted]
    if not fits:
        return values, -1
    i = fits[case["at"] % len(fits)]
    spec = specs[i]
    if change == "shape":
        values[i] = ("tensor", spec["shape"][:-1] + (spec["shape"][-1] + 1,), spec["dtype"],
                     spec["device"])
    elif change == "dtype":
        other = "int64" if spec["dtype"] == "float32" else "float32"
        values[i] = ("tensor", spec["shape"], other, spec["device"])
    elif change == "device":
        other = "flex" if spec["device"] == "flex+ad" else "flex+ad"
        values[i] = ("tensor", spec["shape"], spec["dtype"], other)
    elif change == "scalar":  # a new value of a declared scalar: the replay must accept it
        values[i] = round(spec["value"] / 2 + 0.25, 6)
    elif change == "kind":
        values[i] = "a string" if spec["kind"] != "static" else None
    else:
        values[i] = "another" if spec["value"] != "another" else "other"
    return values, i


def _make(value: Any) -> Any:
    if isinstance(value, tuple) and value and value[0] == "tensor":
        _, shape, dtype, device = value
        return Tensor.from_numpy(np.zeros(shape, dtype), DEVICES[device])
    return value


def _reader_specs(specs: list[dict]) -> list[dict]:
    out = []
    for s in specs:
        if s["kind"] == "tensor":
            dtype = Tensor.from_numpy(np.zeros(1, s["dtype"]), Device.flex()).dtype
            out.append({"kind": "tensor", "shape": s["shape"], "dtype": dtype,
                        "device": DEVICES[s["device"]]})
        else:
            out.append(dict(s))
    return out


def guard_run(solution: Any, case: dict) -> dict:
    """Call ``solution(specs, args)``; outputs whether it refused with a
    ReplayMismatchError (1) or let the call through (0), the position its message names
    (-1: none), and the message (``_message``, for the check)."""
    values, _ = arguments(case)
    args = tuple(_make(v) for v in values)
    try:
        solution(_reader_specs(case["specs"]), args)
    except ReplayMismatchError as err:
        found = re.search(r"argument (\d+)", str(err))
        return {"refused": np.int64(1), "argument": np.int64(int(found.group(1)) if found else -1),
                "_message": str(err)}
    return {"refused": np.int64(0), "argument": np.int64(-1), "_message": ""}


def _expected(case: dict) -> dict:
    values, at = arguments(case)
    if case["change"] in ("extra", "missing"):
        return {"refused": np.int64(1)}
    refused = case["change"] != "scalar" and values != [_value(s) for s in case["specs"]]
    return {"refused": np.int64(int(refused)), "argument": np.int64(at if refused else -1)}


def _names_what_differs(solution, case, outputs, trace) -> str | None:
    """A refusal of a changed argument names its position, and shows what it found."""
    values, at = arguments(case)
    if at < 0 or not outputs["refused"]:
        return None
    message, change = outputs["_message"], case["change"]
    if f"argument {at}" not in message:
        return (f"Your guard refused the call, but its message {message!r} does not say "
                f"'argument {at}': a reader of the error cannot tell which argument differs")
    if change == "shape":
        shape = values[at][1]
        if str(shape) not in message and str(list(shape)) not in message:
            return (f"Your message {message!r} does not show the shape it found ({shape}): "
                    "say what the replay got, beside what the capture had")
    return None


def exercise(max_examples: int = 20) -> BuildExercise:
    """The checker for the reader's ``guard(specs, args)``."""
    return BuildExercise(
        "the guard a replay runs before its program",
        cases=_cases(),
        run=guard_run,
        references=[Reference("the case generator's record of what it changed", _expected)],
        rules=Rules(no_data=True, no_numpy=True),
        checks=[_names_what_differs],
        hints=[
            "Compare the number of arguments first; then walk specs and args together "
            "with their position.",
            "A tensor spec has shape, dtype and device: compare tuple(arg.shape), "
            "arg.dtype and arg.device with them (no values needed).",
            "Two devices compare equal whether or not one has autodiff: compare "
            "is_autodiff() too. A scalar must be an int or float but not a bool (True is an int in Python); "
            "a static value must be equal.",
        ],
        reference_solution=guard,
        examples=[{"specs": [{"kind": "tensor", "shape": (8, 12), "dtype": "float32",
                              "device": "flex+ad"}, {"kind": "scalar", "value": 0.1}],
                   "change": change, "at": 0}
                  for change in ("none", "scalar", "shape", "dtype", "device")],
        max_examples=max_examples,
        order=("specs", "change", "at"),
    )


# ===== the chapter's build-it: classify the arrays of two recorded runs =====================
# A recorded call is a dict: {"op": "matmul", "reads": ["#7", "#3"], "makes": ["#12"],
# "number": None} ("makes": the arrays it returned, none for a query, two for
# max_dim_with_indices); "number" is the host number the call was given: None, a float the host
# computed, or "lr" (a declared scalar input: symbolic, the same in both runs). The reader
# writes classify(run1, run2, inputs, equal): each array the second run reads -> "temporary",
# "input", "state" or "constant"; a CaptureError naming "call <i>" where the runs disagree on a
# host number, or read an array that is none of the four. A constant is what minidl's
# program.py takes as one: at that call and position run 1 read the same array, or an array
# with equal values (``equal(a, b)``, np.array_equal: a host array the step rebuilds
# identically every run).

from minidl.capture import CaptureError  # noqa: E402

KINDS = ("temporary", "input", "state", "constant")


def classify(run1: list[dict], run2: list[dict], inputs: set[str],
             equal: Callable[[str, str], bool]) -> dict[str, str]:
    """What each array the second run reads is; refuse what a replay would freeze."""
    made_by_run1 = {a for call in run1 for a in call["makes"]}
    made_by_run2: set[str] = set()
    kinds = {}
    for i, (before, call) in enumerate(zip(run1, run2)):
        if call["number"] != before["number"]:
            raise CaptureError(f"call {i} ({call['op']}) got {before['number']!r}, "
                               f"then {call['number']!r}: a replay would freeze it")
        for old, array in zip(before["reads"], call["reads"]):
            if array in made_by_run2:
                kinds[array] = "temporary"
            elif array in inputs:
                kinds[array] = "input"
            elif array in made_by_run1:
                kinds[array] = "state"
            elif array == old or equal(old, array):
                kinds[array] = "constant"
            else:
                raise CaptureError(f"call {i} ({call['op']}) read {old}, then {array}: "
                                   "host data made in the step, a replay would freeze")
        made_by_run2.update(call["makes"])
    return kinds


# ----- planted wrong solutions ---------------------------------------------------------------
def _no_refusals(run1, run2, inputs, equal):
    """Right kinds, but never refuses: a changed host number or array goes through."""
    made_by_run1 = {a for call in run1 for a in call["makes"]}
    made_now: set[str] = set()
    kinds = {}
    for call in run2:
        for array in call["reads"]:
            kinds[array] = ("temporary" if array in made_now else "input" if array in inputs
                            else "state" if array in made_by_run1 else "constant")
        made_now.update(call["makes"])
    return kinds


def _no_state(run1, run2, inputs, equal):
    """Forgets the previous run: a weight made by run 1 counts as a constant."""
    kinds = _no_refusals(run1, run2, inputs, equal)
    return {a: "constant" if k == "state" else k for a, k in kinds.items()}


def _refuses_declared_scalars(run1, run2, inputs, equal):
    """Refuses every call given a number, the declared learning rate included."""
    for i, call in enumerate(run2):
        if call["number"] is not None:
            raise CaptureError(f"call {i} ({call['op']}) takes a host number")
    return classify(run1, run2, inputs, equal)


def _host_array_is_constant(run1, run2, inputs, equal):
    """Refuses a changed host number, but an array neither made by a run nor an input is a
    "constant" even when run 2 read another one than run 1."""
    for i, (before, call) in enumerate(zip(run1, run2)):
        if call["number"] != before["number"]:
            raise CaptureError(f"call {i} ({call['op']}) got another number")
    return _no_refusals(run1, run2, inputs, equal)


def _unmatched_is_state(run1, run2, inputs, equal):
    """Calls every array that differs from run 1's "state", without checking run 1 made it."""
    made_now: set[str] = set()
    kinds = {}
    for i, (before, call) in enumerate(zip(run1, run2)):
        if call["number"] != before["number"]:
            raise CaptureError(f"call {i} ({call['op']}) got another number")
        for old, array in zip(before["reads"], call["reads"]):
            kinds[array] = ("temporary" if array in made_now else "input" if array in inputs
                            else "constant" if array == old or equal(old, array)
                            else "state")
        made_now.update(call["makes"])
    return kinds


def _same_id_only(run1, run2, inputs, equal):
    """Takes only the very same array as a constant: refuses a host array the step rebuilt
    with equal values, which minidl captures as a constant."""
    return classify(run1, run2, inputs, lambda a, b: a == b)


def _constant_anywhere(run1, run2, inputs, equal):
    """Calls an array a constant when run 1 read it at *any* call, not at this one."""
    read_by_run1 = {a for call in run1 for a in call["reads"]}
    made_by_run1 = {a for call in run1 for a in call["makes"]}
    made_now: set[str] = set()
    kinds = {}
    for i, (before, call) in enumerate(zip(run1, run2)):
        if call["number"] != before["number"]:
            raise CaptureError(f"call {i} ({call['op']}) got another number")
        for old, array in zip(before["reads"], call["reads"]):
            if array in made_now:
                kinds[array] = "temporary"
            elif array in inputs:
                kinds[array] = "input"
            elif array in made_by_run1:
                kinds[array] = "state"
            elif array in read_by_run1 or equal(old, array):
                kinds[array] = "constant"
            else:
                raise CaptureError(f"call {i} ({call['op']}) read a host array")
        made_now.update(call["makes"])
    return kinds


def _constant_before_state(run1, run2, inputs, equal):
    """Tests "equal values" before "made by run 1": a weight the update left unchanged (lr 0)
    becomes a constant, frozen at its capture value."""
    made_by_run1 = {a for call in run1 for a in call["makes"]}
    made_now: set[str] = set()
    kinds = {}
    for i, (before, call) in enumerate(zip(run1, run2)):
        if call["number"] != before["number"]:
            raise CaptureError(f"call {i} ({call['op']}) got another number")
        for old, array in zip(before["reads"], call["reads"]):
            if array in made_now:
                kinds[array] = "temporary"
            elif array in inputs:
                kinds[array] = "input"
            elif array == old or equal(old, array):
                kinds[array] = "constant"
            elif array in made_by_run1:
                kinds[array] = "state"
            else:
                raise CaptureError(f"call {i} ({call['op']}) read a host array")
        made_now.update(call["makes"])
    return kinds


#: name → (wrong solution, the verdict kind it must get)
CLASSIFY_PLANTED = {
    "constant tested before state": (_constant_before_state, "check"),
    "an equal copy refused": (_same_id_only, "check"),
    "a constant read at another call": (_constant_anywhere, "check"),
    "never refuses": (_no_refusals, "check"),
    "no carried state": (_no_state, "check"),
    "refuses the declared lr": (_refuses_declared_scalars, "check"),
    "a changed host array is a constant": (_host_array_is_constant, "check"),
    "any unmatched array is state": (_unmatched_is_state, "check"),
}

_FORWARD_OPS = ("matmul", "add", "relu", "mul", "exp", "sum")


@st.composite
def _recipes(draw) -> dict:
    """A step: forward/backward ops over inputs, constants, parameters and earlier results,
    then one update per parameter; and what (if anything) differs between the two runs."""
    n_params, n_inputs, n_consts = draw(st.integers(1, 3)), draw(st.integers(1, 2)), \
        draw(st.integers(0, 2))
    sources = [("in", k) for k in range(n_inputs)] + [("const", k) for k in range(n_consts)] \
        + [("param", k) for k in range(n_params)]
    ops = []
    for j in range(draw(st.integers(2, 5))):
        pool = sources + [("tmp", m) for m in range(j)]
        reads = draw(st.lists(st.sampled_from(pool), min_size=1, max_size=2))
        number = draw(st.sampled_from([None, None, 0.5]))
        ops.append((draw(st.sampled_from(_FORWARD_OPS)), reads, number))
    for k in range(n_params):
        ops.append(("mul_scalar", [("tmp", draw(st.integers(0, len(ops) - 1)))], "lr"))
        ops.append(("sub", [("param", k), ("tmp", len(ops) - 1)], None))
    change = draw(st.sampled_from(["none", "none", "host number", "host array", "equal copy",
                                   "moved constant", "lr 0"]))
    return {"ops": ops, "n_params": n_params, "n_inputs": n_inputs, "n_consts": n_consts,
            "change": change, "at": draw(st.integers(0, 20))}


def _runs(recipe: dict) -> dict:
    """The warm-up and two recorded runs of a recipe, with opaque array names."""
    counter = iter(range(1, 1000))

    def name() -> str:
        return f"#{next(counter)}"

    inputs = [name() for _ in range(recipe["n_inputs"])]
    consts = [name() for _ in range(recipe["n_consts"])]
    params = [name() for _ in range(recipe["n_params"])]
    numbered = [j for j, op in enumerate(recipe["ops"]) if op[2] == 0.5]
    # a host array replaces a read of a constant or a parameter (there is always one: the
    # updates read every parameter)
    const_reads = [(j, r) for j, op in enumerate(recipe["ops"])
                   for r, src in enumerate(op[1]) if src[0] in ("const", "param")]
    const_only = [(j, r) for j, r in const_reads if recipe["ops"][j][1][r][0] == "const"]
    read_consts = sorted({consts[k] for op in recipe["ops"] for s, k in op[1] if s == "const"})
    equal: set[frozenset] = set()
    runs, starts = [], []
    for run in range(3):  # warm-up, run 1, run 2
        made, calls, new_params = [], [], list(params)
        starts.append(list(params))
        for j, (op, reads, number) in enumerate(recipe["ops"]):
            names = []
            for src_kind, k in reads:
                names.append({"in": inputs, "const": consts, "param": params,
                              "tmp": made}[src_kind][k])
            if run == 2 and recipe["change"] == "host number" and numbered and \
                    j == numbered[recipe["at"] % len(numbered)]:
                number = 0.25  # Adam's bias correction: another value each step
            if run == 2 and recipe["change"] == "host array" and const_reads and \
                    j == const_reads[recipe["at"] % len(const_reads)][0]:
                r = const_reads[recipe["at"] % len(const_reads)][1]
                names[r] = f"#{900 + j}"  # an array the step made on the host this time
            if run == 2 and recipe["change"] == "equal copy" and const_only and \
                    j == const_only[recipe["at"] % len(const_only)][0]:
                r = const_only[recipe["at"] % len(const_only)][1]
                equal.add(frozenset((names[r], f"#{900 + j}")))
                names[r] = f"#{900 + j}"  # made on the host again, with the same values
            if run == 2 and recipe["change"] == "moved constant" and const_reads and \
                    j == const_reads[recipe["at"] % len(const_reads)][0]:
                r = const_reads[recipe["at"] % len(const_reads)][1]
                others = [c for c in read_consts if c != names[r]]
                if others:  # a constant run 1 read at another call
                    names[r] = others[recipe["at"] % len(others)]
            made.append(name())
            calls.append({"op": op, "reads": names, "makes": [made[-1]], "number": number})
            if op == "sub" and reads[0][0] == "param":
                new_params[reads[0][1]] = made[-1]
        params = new_params
        runs.append(calls)
    if recipe["change"] == "lr 0":  # the update left every weight's values as they were
        equal |= {frozenset(pair) for pair in zip(starts[1], starts[2])}
    return {"run1": runs[1], "run2": runs[2], "inputs": set(inputs), "equal": equal}


#: the page's example: x @ w, times a constant and a host number, then w - lr * that
_EXAMPLE_RECIPE = {"ops": [("matmul", [("in", 0), ("param", 0)], None),
                           ("mul", [("tmp", 0), ("const", 0)], 0.5),
                           ("mul_scalar", [("tmp", 1)], "lr"),
                           ("sub", [("param", 0), ("tmp", 2)], None)],
                   "n_params": 1, "n_inputs": 1, "n_consts": 1, "change": "none", "at": 0}
EXAMPLE = _runs(_EXAMPLE_RECIPE)




def _host_array_at(call: int, position: int, same_values: bool = False) -> dict:
    """EXAMPLE, but run 2's call reads at ``position`` an array the step made on the host
    (with the values of the one run 1 read there when ``same_values``)."""
    case = _runs({**_EXAMPLE_RECIPE})
    old = case["run2"][call]["reads"][position]
    case["run2"][call]["reads"][position] = f"#{900 + call}"
    if same_values:
        case["equal"] = {frozenset((case["run1"][call]["reads"][position], f"#{900 + call}"))}
    assert old
    return case


def _constant_moved() -> dict:
    """EXAMPLE, but run 2's call 0 reads the constant (which run 1 read at call 1) where run 1
    read the weight: an array run 1 read, but at another call."""
    case = _runs({**_EXAMPLE_RECIPE})
    case["run2"][0]["reads"][1] = case["run1"][1]["reads"][1]
    return case


def _weight_unchanged() -> dict:
    """EXAMPLE at lr 0: run 2 reads the weight run 1's update made, with the values of the
    weight run 1 read (equal), so only "made by run 1, tested first" makes it state."""
    case = _runs({**_EXAMPLE_RECIPE})
    case["equal"] = {frozenset((case["run1"][c]["reads"][1 - c // 3],
                                case["run2"][c]["reads"][1 - c // 3])) for c in (0, 3)}
    return case


WEIGHT_UNCHANGED = _weight_unchanged()

def _query_and_pair() -> dict:
    """EXAMPLE with three calls after call 0 in both runs, as the spec's ``makes`` allows: a
    query (burn's ``float_device``: no array), a call making two arrays
    (``float_max_dim_with_indices``: values, indices) and call 3 reading both; a classify
    reading only ``makes[0]`` fails here."""
    case = _runs({**_EXAMPLE_RECIPE})
    for run, base in (("run1", 800), ("run2", 810)):
        t0 = case[run][0]["makes"][0]
        a, b, c = (f"#{base + k}" for k in (1, 2, 3))
        case[run][1:1] = [
            {"op": "float_device", "reads": [t0], "makes": [], "number": None},
            {"op": "float_max_dim_with_indices", "reads": [t0], "makes": [a, b], "number": 1},
            {"op": "add", "reads": [a, b], "makes": [c], "number": None}]
    return case


QUERY_AND_PAIR = _query_and_pair()

#: the checker's explicit cases after the page's example: run 2 reads a new host-made array
#: where run 1 read the constant (call 1), the same with equal values (a constant), a new
#: array where run 1 read the weight (call 0), and the constant where run 1 read the weight
HOST_ARRAY_EXAMPLES = [_host_array_at(1, 1), _host_array_at(1, 1, same_values=True),
                       _host_array_at(0, 1), _constant_moved()]


def show_runs(case: dict) -> None:
    """Print a case's two runs side by side, one call a line."""
    def text(c: dict) -> str:
        number = "" if c["number"] is None else f", {c['number']!r}"
        return f"{', '.join(c['makes'])} = {c['op']}({', '.join(c['reads'])}{number})"

    print("inputs:", *sorted(case["inputs"]))
    for pair in sorted(sorted(p) for p in case.get("equal", ())):
        print("equal values:", " and ".join(pair))
    print(f"{'call':<5}{'run1':<32}run2")
    for i, (a, b) in enumerate(zip(case["run1"], case["run2"])):
        print(f"{i:<5}{text(a):<32}{text(b)}")


def _classify_cases() -> st.SearchStrategy:
    return _recipes().map(_runs)


def _equal(case: dict) -> Any:
    """The case's ``equal(a, b)``: the same array, or two arrays with equal values."""
    pairs = case.get("equal", set())
    return lambda a, b: a == b or frozenset((a, b)) in pairs


#: "call 3", "Call 3", "call #3", "call no. 3" in a classify's refusal: the call it names
CALL_NAMED = re.compile(r"\bcall\s*(?:#|no\.?|number)?\s*(\d+)", re.IGNORECASE)


def classify_run(solution: Any, case: dict) -> dict:
    """Call ``solution(run1, run2, inputs, equal)`` on copies; outputs whether it refused (1/0) and
    the call its message names (-1: none); the kinds and message for the check."""
    copy = [[dict(c, reads=list(c["reads"])) for c in case[k]] for k in ("run1", "run2")]
    try:
        kinds = solution(copy[0], copy[1], set(case["inputs"]), _equal(case))
    except CaptureError as err:
        found = CALL_NAMED.search(str(err))
        return {"refused": np.int64(1), "call": np.int64(int(found.group(1)) if found else -1),
                "_kinds": None, "_message": str(err)}
    return {"refused": np.int64(0), "call": np.int64(-1), "_kinds": kinds, "_message": ""}


def _expected_classes(case: dict) -> dict:
    try:
        classify(case["run1"], case["run2"], case["inputs"], _equal(case))
    except CaptureError as err:
        call = int(re.search(r"call (\d+)", str(err)).group(1))
        return {"refused": np.int64(1), "call": np.int64(call)}
    return {"refused": np.int64(0), "call": np.int64(-1)}


def _same_kinds(solution, case, outputs, watch) -> str | None:
    """Readable verdicts: the first array classified wrong, or a refusal where none is due
    (or none where one is)."""
    try:
        expected = classify(case["run1"], case["run2"], case["inputs"], _equal(case))
        due = None
    except CaptureError as err:
        expected, due = None, str(err)
    if due is None and outputs["_kinds"] is None:
        for i, (before, call) in enumerate(zip(case["run1"], case["run2"])):
            for old, new in zip(before["reads"], call["reads"]):
                if old != new and frozenset((old, new)) in case.get("equal", ()):
                    return (f"Your classify refused ({outputs['_message']!r}), but call {i} "
                            f"reads {new} where run 1 read {old}, and equal({old!r}, "
                            f"{new!r}) is True: the step rebuilt the array on the host with "
                            "the same values, which minidl takes as a constant")
        for i, call in enumerate(case["run2"]):
            if len(call["makes"]) > 1 and str(i + 1) in CALL_NAMED.findall(
                    outputs["_message"]):
                return (f"Your classify refused ({outputs['_message']!r}), but call {i} "
                        f"makes two arrays, {call['makes']}, and call {i + 1} reads both: "
                        "add every array in 'makes' to what a run made, not only the first")
        return (f"Your classify refused ({outputs['_message']!r}), but nothing here changes "
                "between the runs that a replay would freeze")
    if due is not None:
        call = re.search(r"call (\d+)", due).group(0)
        if outputs["_kinds"] is not None and "read" in due.split(": ", 1)[0]:
            old, new = re.search(r"read (\S+), then (\S+):", due).groups()
            return (f"Your classify called {new} (read by {call} of run 2) "
                    f"{outputs['_kinds'].get(new)!r}, but where run 1 read {old} run 2 reads "
                    f"{new}: an array no call of run 1 made (so not state), not an input, "
                    f"and neither run 1's array at this call nor equal to it (so not a "
                    "constant; run 1 reading it at another call does not count). A replay "
                    f"would freeze it: raise CaptureError naming {call}")
        if outputs["_kinds"] is not None:
            return (f"Your classify returned kinds, but {call} differs between the two runs: "
                    f"{due.split(': ', 1)[0].split(') ', 1)[1]}. A replay would freeze it: "
                    "raise CaptureError naming the call")
        if call.split()[1] not in CALL_NAMED.findall(outputs["_message"]):
            return (f"Your classify refused, but its message {outputs['_message']!r} does not "
                    f"name {call}, where the runs differ")
        return None
    found = outputs["_kinds"]
    if not isinstance(found, dict):
        return f"classify must return a dict {{array: kind}}, it returned {type(found).__name__}"
    for array, kind in expected.items():
        if found.get(array) != kind:
            reader = next(i for i, c in enumerate(case["run2"]) if array in c["reads"])
            if kind == "state" and found.get(array) == "constant":
                return (f"{array} (read by call {reader} of run 2) is 'state', your classify "
                        "says 'constant': run 1's update made it, so it is carried state "
                        "even when its values equal run 1's (here lr is 0). As a constant a "
                        "replay would never see the weights move: test 'made by run 1' "
                        "before 'equal values'")
            return (f"{array} (read by call {reader} of run 2) is {kind!r}, your classify "
                    f"says {found.get(array)!r}")
    extra = set(found) - set(expected)
    if extra:
        return f"{sorted(extra)} are not read by run 2: classify only what run 2 reads"
    return None


def classify_exercise(max_examples: int = 25) -> BuildExercise:
    """The checker for the reader's ``classify(run1, run2, inputs)``."""
    return BuildExercise(
        "classify the arrays of two recorded runs",
        cases=_classify_cases(),
        run=classify_run,
        references=[Reference("the reference classification", _expected_classes)],
        rules=Rules(no_numpy=True, helpers=(_equal,)),  # the reader calls equal()
        checks=[_same_kinds],
        hints=[
            "Walk the two runs side by side: zip(run1, run2) gives the same call of each run, "
            "and zip(before['reads'], call['reads']) the same argument position.",
            "Keep two sets: what run 1 made (every array in the 'makes' lists of run1) and "
            "what run 2 has made so far (add each call's 'makes' after reading its arguments).",
            "Order of the tests: made earlier in run 2 → temporary; in inputs → input; made "
            "by run 1 → state; the array run 1 read at this call and position, or "
            "equal(old, array) → constant; else refuse. Compare 'number' first: 'lr' in both "
            "runs is fine, 0.5 then 0.25 is not.",
        ],
        reference_solution=classify,
        examples=[EXAMPLE, QUERY_AND_PAIR, *HOST_ARRAY_EXAMPLES, WEIGHT_UNCHANGED],
        max_examples=max_examples,
        order=("run1", "run2", "inputs", "equal"),
    )

"""The capture chapter's second build-it: ``emit(run1, run2, kinds, inputs, outputs)``, the
emitter. From the two recorded runs (the shape of ``build_guard.classify``'s) and the kinds
``classify`` gave, it writes the replay function's source, one line per call of run 2::

    def replay(in0, in1, s0):
        st0 = ST['#4']
        t0 = K[0](in0, st0, N[0])
        t1 = K[1](t0, C['#2'], N[1])
        t2 = K[2](t1, s0)
        t3 = K[3](st0, t2, N[3], out=st0)
        return (t1,)

``K[i]`` is call ``i``'s kernel (its reads, then its number; ``out=`` writes the result into
a buffer), ``N[i]`` the number recorded for call ``i``, ``C[a]`` a constant array, ``ST[a]``
the buffer of state ``a``: the array run 2 made where run 1 made ``a``, the one the model
holds after capture. Declared inputs are ``in0``... in the order of
``inputs``; each declared scalar a call gets (a ``str`` number such as ``"lr"``) is a
parameter ``s0``, ``s1``... in call order; a state array's new value, made by the call that
made it in run 1, is written in place (``out=st…``) when no later call reads the old value,
else copied after the last call (``np.copyto(st…, t…)``), as ``build_program`` does.

The checker runs the reader's program three times on symbolic values (every kernel returns a
name for what it computed) beside the reference's, with a new batch and new declared floats
each replay (each ``s…`` its own name's value, so swapped parameters show), and names the
first call whose arguments differ. A new value copied into its buffer
after its last reader, where the reference writes it in place, computes the same and passes.
Named slips: a new state value neither written in place nor copied (the first replay is
right, the second reads the old weights), a stale or too-new weight read, in place though
a later call reads the old value, a copy left out, a declared scalar
frozen as ``N[i]`` (the capture's value), two declared floats swapped (``s0`` for ``wd``,
``s1`` for ``lr``), inputs numbered by the order the calls read them.
``capture_lab.RecordedRuns.emitted`` runs the same source on the real kernels.
"""

from __future__ import annotations

import hashlib
import inspect
import random
import re
from typing import Any

from minidl_book import build_guard
from minidl_book.harness import run_check, show_solution
from minidl_book.verdict import Verdict

__all__ = ["annotated", "emit", "exercise", "EXAMPLES"]


def emit(run1, run2, kinds, inputs, outputs):
    """The replay function's source: run 2's calls over in…, s…, st…, constants;
    new state in place unless read later (minidl's ``build_program``)."""
    made_by_run1 = {a: (j, p) for j, call in enumerate(run1)
                    for p, a in enumerate(call["makes"])}
    last_read = {a: i for i, call in enumerate(run2) for a in call["reads"]}
    state = [a for a, kind in kinds.items() if kind == "state"]
    into, copies = {}, []  # call → its buffer; (buffer, array) to copy after
    for k, a in enumerate(state):
        j, p = made_by_run1[a]
        if last_read[a] <= j and len(run2[j]["makes"]) == 1:
            into[j] = f"st{k}"
        else:
            copies.append((f"st{k}", run2[j]["makes"][p]))
    names = {a: f"in{k}" for k, a in enumerate(inputs)}
    names |= {a: f"st{k}" for k, a in enumerate(state)}
    lines = [f"st{k} = ST[{a!r}]" for k, a in enumerate(state)]
    n_scalars = 0
    for i, call in enumerate(run2):
        if not call["makes"]:
            continue  # a query (a tensor's device): nothing to replay
        args = [names.get(a) or f"C[{a!r}]" for a in call["reads"]]
        if isinstance(call["number"], str):  # declared: new every replay
            args.append(f"s{n_scalars}")
            n_scalars += 1
        else:
            args.append(f"N[{i}]")
        out = f", out={into[i]}" if i in into else ""
        lines.append(f"t{i} = K[{i}]({', '.join(args)}{out})")
        for p, a in enumerate(call["makes"]):
            names[a] = f"t{i}[{p}]" if len(call["makes"]) > 1 else f"t{i}"
    lines += [f"np.copyto({buf}, {names[a]})" for buf, a in copies]
    lines.append(f"return ({', '.join(names[a] for a in outputs)},)")
    params = [f"in{k}" for k in range(len(inputs))]
    params += [f"s{k}" for k in range(n_scalars)]
    body = "".join(f"\n    {line}" for line in lines)
    return f"def replay({', '.join(params)}):{body}"


def annotated(run1, run2, kinds, inputs, outputs) -> str:
    """``emit``'s source with each line's rule as a comment: what each read is, where the
    number comes from, why a new state value is written in place or copied."""
    made_by_run1 = {a: j for j, call in enumerate(run1) for a in call["makes"]}
    new_value = {j: a for a, j in made_by_run1.items() if kinds.get(a) == "state"}
    notes = []
    for line in emit(run1, run2, kinds, inputs, outputs).splitlines():
        head = re.match(r"\s*(?:t(\d+) = K|st\d+ = ST\[(.*)\]|np\.copyto|return|def)", line)
        i, bound = head.group(1), head.group(2)
        if line.startswith("def"):
            note = "in… as `inputs` orders them; an s… per str number"
        elif bound:
            note = f"run 2's array where run 1 made {bound[1:-1]}: the model's"
        elif i is not None:
            call = run2[int(i)]
            note = ", ".join(f"{kinds.get(a, 'temporary')} {a}" for a in call["reads"])
            if isinstance(call["number"], str):
                note += f"; {call['number']!r}"
            if "out=" in line:  # the out= rule matters more than its reads here
                note = f"{new_value[int(i)]}'s new value, in place: read no later"
        elif "copyto" in line:
            note = "a later call read the old value: copied after"
        else:
            note = "the outputs"
        notes.append((line, note))
    width = max(len(line) for line, _ in notes) + 2
    return "\n".join(f"{line:<{width}}# {note}" for line, note in notes)


# ----- planted wrong solutions ---------------------------------------------------------------
def _not_in_place(run1, run2, kinds, inputs, outputs):
    """Forgets out=: the new weights are computed and dropped."""
    return re.sub(r", out=st\d+", "", emit(run1, run2, kinds, inputs, outputs))


def _always_in_place(run1, run2, kinds, inputs, outputs):
    """Writes every new state value in place (out=st…), even where a later call reads
    the old value: that call then reads the new one."""
    source = emit(run1, run2, kinds, inputs, outputs)
    made_by_run1 = {a: j for j, call in enumerate(run1) for a in call["makes"]}
    state = [a for a, kind in kinds.items() if kind == "state"]
    for k, a in enumerate(state):
        copy = f"\n    np.copyto(st{k}, t{made_by_run1[a]})"
        if copy in source:
            j = made_by_run1[a]
            source = source.replace(copy, "")
            source = re.sub(rf"(\n    t{j} = K\[{j}\]\(.*)\)", rf"\1, out=st{k})", source)
    return source


def _no_copy(run1, run2, kinds, inputs, outputs):
    """Leaves out the copies after the last call: those new values are dropped."""
    return re.sub(r"\n    np\.copyto\(.*\)", "", emit(run1, run2, kinds, inputs, outputs))


def _frozen_number(run1, run2, kinds, inputs, outputs):
    """Passes every number as recorded: the declared rate stays the capture's."""
    run2 = [dict(c, number=None) if isinstance(c["number"], str) else c for c in run2]
    return emit(run1, run2, kinds, inputs, outputs)


def _swapped_scalars(run1, run2, kinds, inputs, outputs):
    """Swaps s0 and s1 in the calls: the weight decay gets the rate and back."""
    source = emit(run1, run2, kinds, inputs, outputs)
    if ", s1" not in source.split("\n", 1)[0]:
        return source  # one declared float: nothing to swap
    body = re.sub(r"\b(s[01])\)", lambda m: {"s0": "s1)", "s1": "s0)"}[m.group(1)],
                  source.split("\n", 1)[1])
    return source.split("\n", 1)[0] + "\n" + body


def _inputs_by_reading(run1, run2, kinds, inputs, outputs):
    """Numbers the inputs in the order the calls read them, not as declared."""
    read = [a for c in run2 for a in c["reads"] if a in inputs]
    return emit(run1, run2, kinds, list(dict.fromkeys(read)), outputs)


PLANTED = {"state not written in place": _not_in_place,
           "in place although a later call reads the old value": _always_in_place,
           "a state's copy left out": _no_copy,
           "a declared scalar frozen as N[i]": _frozen_number,
           "two declared floats swapped": _swapped_scalars,
           "inputs bound in reading order": _inputs_by_reading}


# ----- cases -----------------------------------------------------------------------------------
def _case(runs: dict, inputs: list[str], outputs: list[str] | None = None) -> dict:
    kinds = build_guard.classify(runs["run1"], runs["run2"], set(runs["inputs"]),
                                 build_guard._equal(runs))
    if outputs is None:
        outputs = [next(a for c in reversed(runs["run2"]) if c["op"] not in ("mul_scalar", "sub")
                        for a in c["makes"])]
    return {"run1": runs["run1"], "run2": runs["run2"], "kinds": kinds, "inputs": inputs,
            "outputs": outputs}


def _two_inputs() -> dict:
    """y is declared first but read last; a query; a call that makes two arrays."""
    def run(w: str, base: int) -> list[dict]:
        t = [f"#{base + k}" for k in range(6)]
        return [{"op": "matmul", "reads": ["#2", w], "makes": [t[0]], "number": None},
                {"op": "device", "reads": [t[0]], "makes": [], "number": None},
                {"op": "max_dim_with_indices", "reads": [t[0]], "makes": [t[1], t[2]],
                 "number": 1},
                {"op": "sub", "reads": [t[0], t[1]], "makes": [t[3]], "number": None},
                {"op": "gather", "reads": [t[3], "#1"], "makes": [t[4]], "number": 1},
                {"op": "mul_scalar", "reads": [t[4]], "makes": [t[5]], "number": "lr"},
                {"op": "sub", "reads": [w, t[5]], "makes": [f"#{base + 6}"], "number": None}]

    runs = {"run1": run("#4", 10), "run2": run("#16", 20), "inputs": {"#1", "#2"}}
    return _case(runs, ["#1", "#2"], ["#24"])


def _generated(seed: int) -> dict:
    rng = random.Random(seed)
    n_params, n_inputs, n_consts = rng.randint(1, 3), rng.randint(1, 2), rng.randint(0, 2)
    sources = [("in", k) for k in range(n_inputs)] + [("const", k) for k in range(n_consts)] \
        + [("param", k) for k in range(n_params)]
    ops = []
    for j in range(rng.randint(2, 5)):
        pool = sources + [("tmp", m) for m in range(j)]
        reads = [rng.choice(pool) for _ in range(rng.randint(1, 2))]
        ops.append((rng.choice(build_guard._FORWARD_OPS), reads, rng.choice([None, 0.5])))
    for k in range(n_params):
        ops.append(("mul_scalar", [("tmp", rng.randrange(len(ops)))], "lr"))
        if seed % 4 == 2 and k == 0:  # a second declared float: lr * g + wd * w
            ops.append(("mul_scalar", [("param", k)], "wd"))
            ops.append(("add", [("tmp", len(ops) - 2), ("tmp", len(ops) - 1)], None))
        ops.append(("sub", [("param", k), ("tmp", len(ops) - 1)], None))
    if seed % 3 == 0:  # a later call reads a weight's old value after its update
        ops.append((rng.choice(build_guard._FORWARD_OPS),
                    [("param", 0), ("tmp", len(ops) - 1)], None))
    runs = build_guard._runs({"ops": ops, "n_params": n_params, "n_inputs": n_inputs,
                              "n_consts": n_consts, "change": "none", "at": 0})
    inputs = sorted(runs["inputs"], key=lambda a: int(a[1:]), reverse=seed % 2 == 1)
    return _case(runs, inputs)


EXAMPLES = [_case(build_guard.EXAMPLE, ["#1"]), _two_inputs()]


# ----- the symbolic run ------------------------------------------------------------------------
class _Buf:
    """A state buffer: its value changes when a kernel writes into it."""

    def __init__(self, name: str, value: str):
        self.name, self.v = name, value


def _value(x: Any) -> Any:
    return x.v if isinstance(x, _Buf) else x


class _CopyTo:
    """``np`` in the symbolic run: only ``np.copyto(st…, value)``."""

    @staticmethod
    def copyto(dst: Any, src: Any) -> None:
        if not isinstance(dst, _Buf):
            raise TypeError("np.copyto's first argument must be a state buffer st…")
        dst.v = _value(src)


def _run(source: str, case: dict, replays: int = 3) -> dict:
    """Compile ``source`` and replay it ``replays`` times on symbolic values; per replay the
    calls (their arguments, number and out= buffer) and the returned values."""
    run2 = case["run2"]
    state = [a for a, k in case["kinds"].items() if k == "state"]
    st = {a: _Buf(a, f"W{a}") for a in state}
    trace: list[dict] = []

    def kernel(i: int):
        call = run2[i]

        def k(*args, out=None):
            if len(args) != len(call["reads"]) + 1:
                raise TypeError(f"K[{i}] takes call {i}'s {len(call['reads'])} reads, then its "
                                f"number; it got {len(args)} arguments")
            vals = tuple(_value(a) for a in args)
            trace.append({"call": i, "reads": vals[:-1], "number": vals[-1],
                          "out": out.name if isinstance(out, _Buf) else out})
            made = call["op"] + hashlib.sha1(repr((i, vals)).encode()).hexdigest()[:8]
            if out is not None:
                if not isinstance(out, _Buf) or len(call["makes"]) != 1:
                    raise TypeError(f"out= of call {i} must be a state buffer st…")
                out.v = made
                return out
            if len(call["makes"]) > 1:
                return tuple(f"{made}[{p}]" for p in range(len(call["makes"])))
            return made
        return k

    namespace = {"K": [kernel(i) for i in range(len(run2))],
                 "N": [f"{c['number']} (at capture)" if isinstance(c["number"], str)
                       else c["number"] for c in run2],
                 "C": {a: f"C{a}" for a, k in case["kinds"].items() if k == "constant"},
                 "ST": st, "np": _CopyTo()}
    exec(compile(source, "<your program>", "exec"), namespace)  # noqa: S102
    declared = [c["number"] for c in run2 if isinstance(c["number"], str)]
    # s0, s1… get the values of their calls' names, so swapped parameters show; one
    # parameter per name (in order of first use) computes the same and passes; a replay
    # without s… parameters still runs: its calls then show what it froze
    n_params = len(inspect.signature(namespace["replay"]).parameters)
    n_scalars = max(0, n_params - len(case["inputs"]))
    if n_scalars < len(declared) and n_scalars == len(set(declared)):
        declared = list(dict.fromkeys(declared))
    declared = declared[:n_scalars]
    found = []
    for r in range(replays):
        trace.clear()
        ins = [f"in{k}@replay{r + 1}" for k in range(len(case["inputs"]))]
        result = namespace["replay"](*ins, *[f"{n}@replay{r + 1}" for n in declared])
        found.append({"calls": list(trace), "returns": [_value(x) for x in result],
                      "state": {a: b.v for a, b in st.items()}})
    return {"replays": found, "state": state}


def _diagnose(case: dict, mine: dict, ref: dict) -> str | None:
    for r, (m, e) in enumerate(zip(mine["replays"], ref["replays"])):
        for got, want in zip(m["calls"], e["calls"]):
            i, call = want["call"], case["run2"][want["call"]]
            if got["call"] != i:
                return (f"Your program calls K[{got['call']}] where the reference calls K[{i}]: "
                        "one line per call of run 2, in order, none for a query (no 'makes')")
            if got["out"] and not want["out"]:
                a = got["out"]
                j = max(n for n, c in enumerate(case["run2"]) if a in c["reads"])
                return (f"Call {i} writes state {a}'s new value in place (out=st…), but "
                        f"call {j} reads {a}'s old value after it, and now gets the new "
                        "one. Write in place only when no later call reads the old value; "
                        f"else keep t{i} and np.copyto(st…, t{i}) after the last call")
            if got["number"] != want["number"]:
                if isinstance(call["number"], str) and str(got["number"]).endswith("capture)"):
                    return (f"Call {i}'s number is {call['number']!r}, a declared scalar, but "
                            f"your program passes N[{i}], the value at capture: every replay "
                            "trains at the capture's rate, a schedule never reaches it. Make "
                            "it a parameter s0, s1… of replay, one per such call")
                if isinstance(call["number"], str) and "@replay" in str(got["number"]):
                    return (f"Call {i}'s number is {call['number']!r}, but your program "
                            f"passes it {str(got['number']).split('@')[0]!r}, another "
                            "declared float: the parameters s0, s1… follow the calls "
                            "that get a str number, in call order")
                return (f"Call {i} gets the number {got['number']!r} in replay {r + 1}, "
                        f"where it should get {want['number']!r}")
            for pos, (g, w) in enumerate(zip(got["reads"], want["reads"])):
                if g != w:
                    a = call["reads"][pos]
                    if a in case["inputs"]:
                        return (f"Call {i} reads input {a}, which is inputs[{case['inputs'].index(a)}]"
                                f" and so in{case['inputs'].index(a)}; your program passes "
                                f"{str(g).split('@')[0]}. Bind inputs by their position in "
                                "`inputs` (the replay's arguments), not by the order calls "
                                "read them")
                    if case["kinds"].get(a) == "state":
                        return (f"Call {i} reads state {a} as {g!r} in replay {r + 1}, where "
                                f"the reference has {w!r}: a stale or a too-new weight. "
                                f"{a}'s buffer must hold its old value up to the last call "
                                "that reads it, and the new one before the next replay")
                    return (f"Call {i}'s argument {pos} ({a}, a {case['kinds'].get(a, 'temporary')}"
                            f") is {g!r} in replay {r + 1}, where the reference has {w!r}")
            if len(got["reads"]) != len(want["reads"]):
                return f"Call {i} gets {len(got['reads'])} arrays, it reads {len(call['reads'])}"
        if len(m["calls"]) != len(e["calls"]):
            return (f"Your program makes {len(m['calls'])} calls per replay, the reference "
                    f"{len(e['calls'])}: one per call of run 2 that makes an array")
        in_place = {c["out"]: c["call"] for c in e["calls"] if c["out"]}
        for a, value in e["state"].items():
            if m["state"][a] != value and a in in_place:
                i = in_place[a]
                return (f"Call {i} makes the new value of state {a} (run 1's call {i} made "
                        f"the {a} run 2 reads), but your program neither writes it into "
                        f"{a}'s buffer (out=st…) nor copies it there (np.copyto). Replay "
                        "1's loss is right; replay 2 reads the old weights again, so from "
                        "step 2 on it diverges")
            if m["state"][a] != value:
                return (f"After replay {r + 1} state {a}'s buffer still holds "
                        f"{m['state'][a]!r}: its new value never reached it. Where a later "
                        "call reads the old value, np.copyto(st…, t…) after the last call")
        if m["returns"] != e["returns"]:
            return (f"Replay {r + 1} returns {m['returns']}, not the values of "
                    f"{case['outputs']}: return (…,) of the arrays `outputs` names")
    return None


class EmitExercise:
    """Checks ``emit(run1, run2, kinds, inputs, outputs) -> source``."""

    title = "emit the replay function"

    def __init__(self, n_generated: int = 25):
        self.cases = EXAMPLES + [_generated(seed) for seed in range(n_generated)]
        self.attempts = 0

    def find_failure(self, solution: Any) -> Verdict | None:
        for n, case in enumerate(self.cases):
            shown = (f"case {n + 1}: inputs {case['inputs']}, outputs {case['outputs']}, "
                     f"kinds {case['kinds']}")
            try:
                source = solution(case["run1"], case["run2"], dict(case["kinds"]),
                                  list(case["inputs"]), list(case["outputs"]))
                if not isinstance(source, str):
                    return Verdict(False, "value", "emit must return the source text (a str) "
                                   f"of def replay(...), it returned {type(source).__name__}",
                                   shown)
                mine = _run(source, case)
            except Exception as err:  # noqa: BLE001 - the reader's code raised: a verdict
                return Verdict(False, "error", f"{type(err).__name__}: {err}", shown, hints=[
                    "replay takes in0, in1… (as `inputs` orders them), then s0, s1… (one per "
                    "call whose number is a str, in call order); call i is "
                    "K[i](reads…, number) with out=st… where it makes a state's new value."])
            reason = _diagnose(case, mine, _run(emit(**{k: case[k] for k in (
                "run1", "run2", "kinds", "inputs", "outputs")}), case))
            if reason:
                return Verdict(False, "value", reason, shown)
        return None

    def check(self, solution: Any = ...) -> Verdict:
        """Check the reader's ``emit``; print the verdict."""
        return run_check(self, solution, lambda: (
            f"✓ {self.title}: on {len(self.cases)} steps your program makes the reference's "
            "calls, with the same arguments, over three replays."))

    def solution(self, name: str | None = None):
        """Show the reference emitter (renamed to ``name``) and check it."""
        return show_solution(self, emit, name, "✓ The reference emitter passes.")


def exercise(n_generated: int = 25) -> EmitExercise:
    """The checker for the chapter's ``emit``."""
    return EmitExercise(n_generated)

"""Build exercises: the reader writes a piece of the framework, the checker runs it for real.

A think-about-it :class:`~minidl_book.exercises.Exercise` asks for a prediction. A
:class:`BuildExercise` asks for code (a function, a backward ``Step``, a backend op, a layer)
and checks it the way the framework would use it:

* **cases** come from a seeded hypothesis strategy (shapes included), after any explicit
  examples; a failing case is shrunk to a small one before it is shown;
* **references** are independent of the reader: PyTorch for values and gradients, float64
  central differences for gradients, so a wrong gradient of a wrong forward cannot pass;
* **rules** are enforced by recording what the solution dispatched with
  :func:`minidl.debug.trace`: the Tensor ops it may call itself, calls it must not reach
  (another backend's kernel, a tensor's data pulled out to NumPy), calls it must reach
  (its own override);
* the **verdict** is short: the failing case and its inputs, the first element that differs
  with its index, expected vs found, or the rule broken and the line of the reader's code that
  broke it. An exception is reported at the reader's own frame, never as a deep traceback.
* a **hint ladder**: every failed check opens the next hint; the solution stays folded
  (the chapter shows it in a ``{solution}`` dropdown, or :meth:`BuildExercise.solution`).

The harness functions that drive a solution (``run``) and this module are hidden from the
trace (``__trace_hide__``), so what the rules see is the reader's code and the stack below it.
"""

from __future__ import annotations

import inspect
import re
import traceback
from collections.abc import Callable, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from minidl.debug.names import display_path
from minidl_book.harness import is_placeholder
from minidl_book.reader_code import (
    numpy_uses,
    reader_codes,
    reader_frame,
    show_source,
    solution_files,
)
from minidl_book.verdict import (
    TODO,
    Verdict,
    compare_outputs,
    describe_inputs,
    op_label,
)
from minidl_book.watch import ALIASES, Frozen, Violation, Watch, freeze

__trace_hide__ = True

__all__ = ["BuildExercise", "Reference", "Rules", "Verdict"]

#: Tensor-level calls (methods, classmethods and dunders of ``Tensor``) a rule can see.
TENSOR_OPS = r"^Tensor\.(?!(_[a-z]\w*|__init__)$)\w+$"
#: Printing a tensor: ``repr``, ``str``, ``print`` and f-strings all run ``Tensor.__repr__``,
#: which writes the values out (a solution could parse them back).
PRINTING = ("__repr__", "__str__", "__format__")
#: Reading the values out of a tensor: "no NumPy on the tensor's data".
DATA_OUT = ("to_numpy", "tolist", "into_data", "into_scalar", "__array__", "__float__",
            "__int__", "__bool__", "__iter__", "__index__") + PRINTING
#: Below the Tensor methods: backend ops called directly, and minidl's functional ops (named
#: after the minidl/tensor module that defines them: ``activation.relu``, ``module.linear``).
BACKEND_OPS = r"^(Dispatch|Flex|NdArray|Autodiff\[[^\]]*\])\.\w+$"


def _functional_ops() -> str:
    import pkgutil

    import minidl.tensor

    names = sorted(m.name for m in pkgutil.iter_modules(minidl.tensor.__path__))
    return r"^(" + "|".join(names) + r")\.[a-z]\w*$"


OTHER_OPS = f"{BACKEND_OPS}|{_functional_ops()}"
#: Asking about a tensor's structure is always allowed.
ALWAYS = frozenset({"shape", "dims", "rank", "device", "dtype", "kind", "numel", "__len__"})


@dataclass(frozen=True)
class Rules:
    """What a solution may, must and must not dispatch (checked on every case by trace).

    Args:
        allowed: the Tensor ops the solution may call itself (``"arange"``, ``"__mul__"``,
            ``"sum_dim"``...; shape queries are always allowed). ``None``: any op.
        forbidden: ``{regex over qualified names: why}``, e.g.
            ``{r"^NdArray\\.float_exp$": "call NdArray's float_exp: write your own"}``.
        must_reach: ``{regex: what it means}``; the run must hit each at least once.
        no_data: forbid pulling a tensor's values out (``to_numpy``, ``tolist``, ``float(t)``,
            iterating...): everything stays inside the framework.
        no_numpy: forbid NumPy in the reader's code (a step or a backend op computing on a
            primitive's array with ``np.exp`` instead of the backend's ops), however it was
            imported: NumPy's Python functions and builtins are seen when the reader calls
            them, its names in every piece of the reader's code that runs.
        no_torch: forbid torch in the reader's code (on by default: the references are
            PyTorch's, the reader's answer must not be).
        fresh_result: the output ``out`` must be a minidl ``Tensor`` made during the run (not
            an input handed back, not an object of the reader's own kind).
        helpers: functions of the book the reader may call (earlier puzzles' solutions).
        helper_checks: ``{helper: check(arguments, result) -> why or None}``: every call the
            reader's code makes to such a helper is judged after the run (a reader's own
            earlier solution must do what its puzzle says for the inputs it is given).

    Rules are frozen (``dataclasses.replace`` makes a changed copy) and copied again when a
    check starts; changing them from the reader's code changes nothing but the verdict ("the checker is not yours to change"). Allowing an operator
    allows its named op too (``*``: ``mul``, ``mul_scalar``).
    """

    allowed: Sequence[str] | None = None
    forbidden: Mapping[str, str] = field(default_factory=dict)
    must_reach: Mapping[str, str] = field(default_factory=dict)
    no_data: bool = False
    no_numpy: bool = False
    no_torch: bool = True
    fresh_result: bool = False
    helpers: Sequence[Any] = ()
    helper_checks: Mapping[Any, Callable[[dict, Any], str | None]] = field(default_factory=dict)

    def describe(self) -> str:
        """One line per rule, for the page."""
        lines = []
        if self.allowed is not None:
            ops = ", ".join(dict.fromkeys(op_label(a) for a in self.allowed))
            lines.append(f"Allowed Tensor ops: {ops} (shape queries are always allowed).")
        if self.no_data:
            lines.append("No values out of a tensor: no to_numpy, tolist, float(t), printing it, loops over "
                         "elements.")
        if self.no_numpy:
            lines.append("No NumPy in your code: compute with the ops the exercise names.")
        lines += [f"Must not: {why}." for why in self.forbidden.values()]
        lines += [f"Must: {what}." for what in self.must_reach.values()]
        return "\n".join(lines)


@dataclass
class Reference:
    """An independent answer: ``fn(case)`` returns ``{output name: expected}`` (any subset of
    the outputs); ``label`` names it in verdicts (``"PyTorch"``, ``"float64 central
    differences"``); ``rtol``/``atol`` are its tolerances; ``dtype=True`` also asks for
    the reference's exact dtype (float32 stays float32)."""

    label: str
    fn: Callable[[dict], Mapping[str, Any]]
    rtol: float = 1e-5
    atol: float = 1e-6
    dtype: bool = False


class _Failed(Exception):
    def __init__(self, verdict: Verdict):
        super().__init__(verdict.text)
        self.verdict = verdict


class BuildExercise:
    """An exercise whose answer is code, checked through the real stack.

    Args:
        title: what to build, shown with the verdicts.
        cases: a hypothesis strategy of cases (``dict`` of named inputs).
        run: ``run(solution, case) -> {output name: value}``: drives the solution the way
            the framework would (calls it, records its step and runs backward, builds the
            backend...). Its values may be minidl tensors, primitives, NumPy or torch.
        references: the independent answers (see :class:`Reference`), checked in order.
        rules: what the solution may dispatch (see :class:`Rules`).
        checks: extra ``check(solution, case, outputs, watch) -> str | None``; a string is
            a failed verdict ("kept 'out' and 'tensor', needs only one").
        hints: the ladder; failed check *n* shows hints 1..n (the newest last). A hint can
            be tied to the kind of failure it helps with (``value``, ``shape``, ``dtype``,
            ``rule``, ``error``, ``check``): ``{"shape": "...", "value": ["...", "..."]}``
            (key ``"*"``: any failure), or list items ``("shape", "...")`` /
            ``(("value", "dtype"), "...")`` beside plain strings. A failure opens the next
            hint that applies to its kind and shows the opened hints that apply.
        reference_solution: the hidden solution; :meth:`solution` prints its source.
        examples: explicit cases tried first, in order.
        max_examples: how many generated cases (keep pages fast: 10-30).
        seed: hypothesis seed (cases are the same on every run).
        order: the order inputs are printed in (a case's own order otherwise).
        probes: cases of growing size, run after every other case passed: when the number
            of library calls the reader's own code makes grows from each probe to the next,
            the solution loops in Python over elements (a rule verdict, "no loops").
    """

    def __init__(
        self,
        title: str,
        *,
        cases: Any,
        run: Callable[[Any, dict], Mapping[str, Any]],
        references: Sequence[Reference],
        rules: Rules | None = None,
        checks: Sequence[Callable[..., str | None]] = (),
        hints: Sequence[str | tuple[Any, str]] | Mapping[str, str | Sequence[str]] = (),
        reference_solution: Any = None,
        examples: Sequence[dict] = (),
        max_examples: int = 20,
        seed: int = 0,
        order: Sequence[str] = (),
        probes: Sequence[dict] | Callable[[], Sequence[dict]] = (),
    ) -> None:
        self.title = title
        self.cases = cases
        self.run = run
        self.references = list(references)
        self.rules = rules or Rules()
        self.checks = list(checks)
        self.hint_ladder = _hint_ladder(hints)
        self.hints = [text for _, text in self.hint_ladder]
        self.hints_opened: list[int] = []  # indices into hint_ladder, in the order opened
        self.reference_solution = reference_solution
        self.examples = list(examples)
        self.max_examples = max_examples
        self.seed = seed
        self.order = tuple(order)
        self.probes = probes
        self.attempts = 0
        self.hints_open = 0

    # ----- one case -------------------------------------------------------------------------
    def verdict_for(self, solution: Any, case: dict) -> Verdict | None:
        """Run one case; ``None`` when it passes, else the verdict."""
        verdict = self._verdict_for(solution, case, "")
        if verdict is not None:
            verdict.inputs = describe_inputs(case, self.order)
        return verdict

    def _verdict_for(self, solution: Any, case: dict, inputs: str) -> Verdict | None:
        frozen = getattr(self, "_frozen", None) or freeze(self.rules, self.rules.helpers)
        files = solution_files(solution)
        watch = Watch(frozen, reader_codes(solution), self._checker_codes(),
                      reader_files=list(files.values()))
        error, message, outputs = None, "", None
        run = self._run_frozen or self.run
        with watch:
            try:
                outputs = _drive(watch, run, solution, case)
            except KeyboardInterrupt:
                raise
            except BaseException as err:  # noqa: BLE001 - the reader's code raised: a verdict
                error = err
                message = _message(err)  # the reader's __str__ runs here, under the watch
        changed = self._restore()
        if changed:
            watch.add("the checker is not yours to change", f"your code changed the checker's "
                      f"{changed} (put back as it was)")
        if watch.violations:
            return _rule(watch.violations[0], inputs)
        for check, args, result, site in watch.helper_results:
            try:
                why = check(args, result)
            except Exception as err:  # noqa: BLE001 - a result the check cannot read
                why = f"a call of an earlier solution gave what the checker cannot read ({err})"
            if why:
                return Verdict(False, "rule", f"Rule broken: {why}\n  {site}", inputs,
                               rule="earlier puzzles as stated", call=site)
        if error is not None:
            return self._raised(error, files, inputs, message)
        try:
            outputs, wrong = _plain_outputs(outputs, watch, frozen)
        except Exception as err:  # noqa: BLE001
            return Verdict(False, "check", f"The checker could not read the run's outputs: "
                           f"{type(err).__name__}: {err}", inputs)
        if wrong:
            return Verdict(False, "rule", wrong, inputs, rule="a tensor made by your code")
        broken = self._rule_verdict(watch, frozen, inputs)
        if broken is not None:
            return broken
        raised = outputs.pop("_raised_after", None)
        if raised is not None:  # a later part of the run raised: the rules judged the rest first
            return self._raised(raised, files, inputs, _message(raised))
        for check in self._checks_frozen or self.checks:  # structure first
            try:
                text = check(solution, case, outputs, watch)
            except Exception as err:  # noqa: BLE001 - a check that cannot read the output
                text = f"The checker could not check the output: {type(err).__name__}: {err}"
            if text:
                return Verdict(False, "check", text, inputs)
        for ref in self._references_frozen or self.references:
            expected = ref.fn(case)
            try:
                diff = compare_outputs(outputs, expected, ref.rtol, ref.atol, ref.label, ref.dtype)
            except Exception as err:  # noqa: BLE001 - an output that cannot be compared
                return Verdict(False, "value", f"The output could not be compared with {ref.label}: "
                               f"{type(err).__name__}: {err}", inputs)
            if diff is not None:
                verdict = Verdict(False, diff.kind, diff.text,
                                  inputs, index=diff.index, expected=diff.expected, found=diff.found,
                                  output=diff.output)
                try:
                    import numpy as np

                    from minidl_book.compare import to_numpy

                    verdict.arrays = {
                        "inputs": {k: v for k, v in case.items()
                                   if not k.startswith("_") and isinstance(v, np.ndarray)},
                        "expected": to_numpy(expected[diff.output]),
                        "found": outputs[diff.output]}
                except Exception:  # noqa: BLE001 - a drawing is a bonus, never a verdict
                    verdict.arrays = None
                return verdict
        for regex, what in frozen.must_reach:
            if regex.pattern not in watch.reached:
                return Verdict(False, "rule", f"Rule broken: the run must {what}, and it never did",
                               inputs, rule=what)
        return None

    def _restore(self) -> str:
        """What of this exercise the run changed (rules, run, checks, references), put back."""
        kept = getattr(self, "_kept", None)
        if kept is None:
            return ""
        rules, fingerprint, run, checks, references, ref_fields = kept
        changed = []
        if self.rules is not rules or _fingerprint(rules) != fingerprint:
            changed.append("rules")
            for name, value in zip(("allowed", "forbidden", "must_reach", "no_data", "no_numpy",
                                    "no_torch", "fresh_result", "helpers", "helper_checks"),
                                   fingerprint):
                object.__setattr__(rules, name, value)
            self.rules = rules
        if self.run is not run or self.checks != checks or self.references != references:
            changed.append("run, checks or references")
            self.run, self.checks, self.references = run, checks, references
        for ref, fields in ref_fields:
            if vars(ref) != fields:
                changed.append("references")
                vars(ref).update(fields)
        return " and ".join(changed)

    _kept: Any = None
    _frozen: Frozen | None = None
    _run_frozen: Any = None
    _checks_frozen: Any = None
    _references_frozen: Any = None

    def _checker_codes(self) -> set:
        codes: set = set()
        for fn in [self.run, *self.checks, *(r.fn for r in self.references)]:
            fn = getattr(fn, "__func__", fn)
            code = getattr(fn, "__code__", None)
            stack = [code] if code is not None else []
            while stack:
                c = stack.pop()
                codes.add(c)
                stack += [k for k in c.co_consts if hasattr(k, "co_code")]
        return codes

    def _raised(self, err: BaseException, files: Mapping[str, str], inputs: str,
                message: str = "") -> Verdict:
        entry = reader_frame(err.__traceback__, files)
        message = (message or type(err).__name__).strip()
        last = traceback.extract_tb(err.__traceback__)[-1] if err.__traceback__ else None
        if entry is None and last is not None:
            where = (f"inside minidl, in {last.name} ({display_path(last.filename)}:{last.lineno}), "
                     "not in a line of your code: look at what your code returned")
        elif entry is None:
            where = "before any line of your code ran"
        else:
            where = f"at line {entry.lineno} of {entry.name}: `{(entry.line or '').strip()}`"
        inside = last is not None and entry is not None and last is not entry \
            and display_path(last.filename) not in files
        text = f"Your code raised {message}\n  {where}"
        if inside:
            path = display_path(last.filename)
            owner = (f"the book's {last.name}" if path.startswith("minidl_book/")
                     else "minidl")
            text += f"\n  (raised inside {owner}, by {path}:{last.lineno}, called from that line)"
        return Verdict(False, "error", text, inputs, call=where)

    def _rule_verdict(self, watch: Watch, rules: Frozen, inputs: str) -> Verdict | None:
        """The first library call the reader's own code made that the rules do not allow."""
        allowed = None if rules.allowed is None else _with_aliases(rules.allowed) | ALWAYS
        tensor_ops = re.compile(TENSOR_OPS)
        other_ops = re.compile(OTHER_OPS)
        count = 0
        self._last_calls = list(watch.calls)
        for call in watch.calls:
            if tensor_ops.search(call.name):
                op = call.name.split(".", 1)[1]
                if op in PRINTING and not rules.no_data:
                    continue  # printing is no op of the solution's unless values must stay in
                count += 1
                if rules.no_data and op in DATA_OUT:
                    label = "" if op_label(op) == op else f" ({op_label(op)})"
                    if op in PRINTING:
                        label = " (repr, str, print and f-strings write its values out)"
                    return Verdict(False, "rule", f"Rule broken: no values out of a tensor; "
                                   f"your code called {call.name}{label}\n  {call.site}",
                                   inputs, rule="no data out", call=call.site)
                if allowed is not None and op not in allowed:
                    return Verdict(False, "rule", f"Rule broken: {op_label(op)} is not an allowed op; "
                                   f"your code called {call.name}\n  {call.site}",
                                   inputs, rule=f"allowed ops (not {op})", call=call.site)
            elif allowed is not None and other_ops.search(call.name):
                return Verdict(False, "rule", f"Rule broken: {call.name} is not an allowed op "
                               f"(only the Tensor ops listed)\n  {call.site}", inputs,
                               rule=f"allowed ops (not {call.name})", call=call.site)
        if (rules.allowed is not None or rules.no_data) and count > 200:
            return Verdict(False, "rule", "Rule broken: over 200 Tensor calls for one small case; "
                           "solve it with whole-tensor ops, not a Python loop over elements",
                           inputs, rule="no loops")
        return None

    # ----- the whole check ------------------------------------------------------------------
    def find_failure(self, solution: Any) -> Verdict | None:
        """Run the explicit examples, then the generated cases; the first failure, shrunk.

        The rules, the run, the checks and the references are copied first: what the reader's
        code does to the exercise object during the runs does not change this check."""
        self._frozen = freeze(self.rules, self.rules.helpers)
        self._kept = (self.rules, _fingerprint(self.rules), self.run, list(self.checks),
                      list(self.references), [(r, vars(r).copy()) for r in self.references])
        self._run_frozen, self._checks_frozen = self.run, tuple(self.checks)
        self._references_frozen = tuple(Reference(r.label, r.fn, r.rtol, r.atol, r.dtype)
                                        for r in self.references)
        try:
            return self._find_failure(solution)
        finally:
            self._frozen = self._run_frozen = self._checks_frozen = self._references_frozen = None
            self._kept = None

    def _find_failure(self, solution: Any) -> Verdict | None:
        if self.rules.no_numpy:
            uses = numpy_uses(solution)
            if uses:
                name, where = uses[0]
                return Verdict(False, "rule", f"Rule broken: no NumPy in your code; it uses "
                               f"{name}\n  {where}", "", rule="no NumPy", call=where)
        for case in [dict(c) for c in self.examples]:
            verdict = self.verdict_for(solution, case)
            if verdict is not None:
                return verdict
        if self.max_examples < 1:  # the fixed cases only (examples, then probes)
            return self._loop_verdict(solution)
        from hypothesis import HealthCheck, Phase, Verbosity, given, settings
        from hypothesis import seed as hseed

        seen: list[Verdict] = []

        @hseed(self.seed)
        @settings(max_examples=self.max_examples, deadline=None, database=None, derandomize=False,
                  suppress_health_check=list(HealthCheck), verbosity=Verbosity.quiet,
                  phases=(Phase.generate, Phase.shrink), print_blob=False, report_multiple_bugs=False)
        @given(self.cases)
        def property_(case):
            verdict = self.verdict_for(solution, case)
            if verdict is not None:
                seen.append(verdict)
                raise _Failed(verdict)

        try:
            with _no_local_constants():
                property_()
        except _Failed as failed:
            return failed.verdict
        except Exception:
            # hypothesis says "flaky" when a random solution (a dropout mask) fails a case once
            # and passes it on the replay: the failure it saw is still the reader's verdict
            if seen:
                return seen[-1]
            raise
        return self._loop_verdict(solution)

    _last_calls: list = []

    def _loop_verdict(self, solution: Any) -> Verdict | None:
        """Run the probes (cases of growing size): a failure on one is its verdict; a count of
        the reader's library calls that grows from each probe to the next is a Python loop
        over elements ("no loops"), named at the line whose calls grew most."""
        from collections import Counter

        probes = self.probes() if callable(self.probes) else self.probes
        if len(probes) < 2 or (self.rules.allowed is None and not self.rules.no_data):
            return None
        counts, sites = [], []
        for case in [dict(c) for c in probes]:
            self._last_calls = []
            verdict = self.verdict_for(solution, case)
            if verdict is not None:
                return verdict
            counts.append(len(self._last_calls))
            sites.append(Counter(call.site for call in self._last_calls))
        if not all(b > a for a, b in zip(counts, counts[1:])):
            return None
        grown = sites[-1] - sites[0]
        site = max(grown, key=grown.get) if grown else ""
        sizes = [f"{c} for {_size(case)}" for c, case in zip(counts, probes)]
        sizes[0] = sizes[0].replace(" for", " library calls for", 1)
        return Verdict(False, "rule", "Rule broken: no Python loop; your code "
                       f"made {' and '.join(sizes)}: the number of ops grows with the input's "
                       "size (a loop over elements or steps). Use whole-tensor ops: the same "
                       "few calls at every size"
                       + (f"\n  the line that repeats: {site}" if site else ""), "",
                       rule="no loops", call=site or None)

    def check(self, solution: Any = ...) -> Verdict:
        """Check the reader's solution; print the verdict (and the next hint when it fails)."""
        if solution is Ellipsis or is_placeholder(solution):
            verdict = Verdict(False, "todo", f"{TODO} Write your solution first: replace ... "
                              "with it and run the cell again.", "")
            print(verdict.text)
            return verdict
        self.attempts += 1
        verdict = self.find_failure(solution)
        if verdict is None:
            verdict = Verdict(True, "ok", "", "")
            verdict.text = f"✓ {self.title}: every case passed (rules and references)."
        elif self.hint_ladder:
            fits = [i for i, (kinds, _) in enumerate(self.hint_ladder)
                    if kinds is None or verdict.kind in kinds]
            new = next((i for i in fits if i not in self.hints_opened), None)
            if new is not None:
                self.hints_opened.append(new)
            self.hints_open = len(self.hints_opened)
            verdict.hints = [self.hint_ladder[i][1] for i in fits if i in self.hints_opened]
            verdict.hints_total = len(fits)
        print(verdict.render())
        return verdict

    def solution(self, name: str | None = None) -> Any:
        """Print the reference solution's source (its ``def`` renamed to ``name`` when given)
        and check it; return it."""
        sol = self.reference_solution
        if sol is None:
            raise ValueError(f"{self.title}: no reference solution")
        source = inspect.getsource(sol).rstrip()
        if name:
            source = source.replace(f"def {sol.__name__}(", f"def {name}(", 1)
        show_source(source)
        verdict = self.find_failure(sol)
        if verdict is not None:  # the book's own answer must pass: a broken checker, not the reader's
            raise RuntimeError(f"{self.title}: the reference solution fails: {verdict.text}")
        print("✓ The reference solution passes every case.")
        return sol

    def _repr_markdown_(self) -> str:
        title = self.title[:1].upper() + self.title[1:]
        against = "; ".join(ref.label for ref in self.references)
        checked = f"Checked against: {against}, on generated cases." if against else (
            "Checked on generated cases.")
        head = f"**Build it.** {title}.  \n{checked}"
        rules = [line for line in self.rules.describe().splitlines() if line]
        return head + "".join(f"\n\n- {rule}" if i == 0 else f"\n- {rule}"
                              for i, rule in enumerate(rules))

    def __repr__(self) -> str:
        return f"BuildExercise({self.title!r})"


def _size(case: Mapping[str, Any]) -> str:
    """``a: [4], j = 4``: a probe's shapes and numbers, for the loop verdict."""
    parts = []
    for name, value in case.items():
        if name.startswith("_"):
            continue
        shape = getattr(value, "shape", None)
        parts.append(f"{name}: {list(shape)}" if shape is not None else f"{name} = {value}")
    return ", ".join(parts)


def _hint_ladder(hints: Any) -> list[tuple[frozenset[str] | None, str]]:
    """``[(kinds or None for any failure, text)]`` from the plain list, the ``{kind: hint(s)}``
    dict, or a list mixing strings and ``(kind(s), text)`` pairs."""
    items = []
    if isinstance(hints, Mapping):
        for key, texts in hints.items():
            for text in [texts] if isinstance(texts, str) else texts:
                items.append((key, text))
    else:
        items = [(None, h) if isinstance(h, str) else tuple(h) for h in hints]
    out = []
    for key, text in items:
        if not isinstance(text, str):
            raise TypeError(f"a hint is a string, not {type(text).__name__}")
        if key is None or key == "*":
            out.append((None, text))
        else:
            kinds = frozenset([key] if isinstance(key, str) else key)
            unknown = kinds - HINT_KINDS
            if unknown:
                raise ValueError(f"hint kinds {sorted(unknown)}: a hint is tied to one of "
                                 f"{sorted(HINT_KINDS)}")
            out.append((kinds, text))
    return out


#: The verdict kinds a hint can be tied to.
HINT_KINDS = frozenset({"value", "shape", "dtype", "rule", "error", "check"})


def _with_aliases(allowed) -> set[str]:
    """The allowed ops with the named ops that do the same (``__mul__`` → ``mul``)."""
    out = set(allowed)
    for op in allowed:
        out.update(ALIASES.get(op, ()))
    return out


@contextmanager
def _no_local_constants():
    """Generation without the constants hypothesis collects from the loaded source modules.

    Hypothesis (6.131+) sometimes draws a literal found in any local module in ``sys.modules``
    (cached in ``.hypothesis/constants``); which modules are loaded differs between a test run
    and a chapter's kernel, so under one seed the two drew different cases (the kernel never
    drew a corner a planted slip needs). Hypothesis has no setting for this: the pool of local
    constants is emptied while a check generates, and its cache cleared on both sides."""
    try:
        from hypothesis.internal.conjecture import providers
        empty = providers.Constants()
        get, cache = providers._get_local_constants, providers.CONSTANTS_CACHE.cache
    except (ImportError, AttributeError):  # another hypothesis: nothing to turn off
        yield
        return
    providers._get_local_constants = lambda: empty
    cache.clear()
    try:
        yield
    finally:
        providers._get_local_constants = get
        cache.clear()


def _drive(watch: Watch, run, solution, case):
    """The checker's frame that runs the reader's code (the watch's boundary)."""
    watch.boundary = _drive.__code__
    result = run(solution, case)
    return dict(result)


def _message(err: BaseException) -> str:
    try:
        return f"{type(err).__name__}: {err}"
    except Exception:  # noqa: BLE001 - an exception whose str raises
        return type(err).__name__


def _rule(v: Violation, inputs: str) -> Verdict:
    site = f"\n  {v.site}" if v.site else ""
    text = v.text if v.text.startswith("must not") else v.text
    return Verdict(False, "rule", f"Rule broken: {text}{site}", inputs, rule=v.rule,
                   call=v.site or None)


def _library_type(value: Any) -> bool:
    """Whether ``value``'s class is one of minidl's own (found under its name in its module,
    and defined in the package's files), so reading it runs no code of the reader's."""
    import sys

    klass = type(value)
    module = sys.modules.get(getattr(klass, "__module__", "") or "")
    if module is None or not klass.__module__.startswith("minidl."):
        return False
    return vars(module).get(klass.__name__) is klass


def _plain_outputs(outputs: Any, watch: Watch, rules: Frozen) -> tuple[dict, str]:
    """The run's outputs as NumPy arrays (``_``-names as they are: the harness's records), and
    a reason when an output is not a tensor of the library's (or NumPy/torch's) own kind."""
    import numpy as np

    from minidl import Tensor
    from minidl_book.compare import to_numpy

    if type(outputs) is not dict:
        return {}, f"the run gave {type(outputs).__name__}, not its outputs"
    plain: dict = {}
    for name, value in outputs.items():
        if name.startswith("_"):
            plain[name] = value
            continue
        if rules.fresh_result and name == "out" and not watch.made(value):
            if rules.allowed is not None or type(value) is Tensor:
                kind = "a Tensor that was not made during this run" if type(value) is Tensor \
                    else f"a {type(value).__name__}"
                return {}, (f"Rule broken: the result must be a minidl Tensor your code made from "
                            f"its inputs; it returned {kind}")
            return {}, (f"Rule broken: the result must be what the backend's ops returned; this "
                        f"{type(value).__name__} was made some other way (NumPy on the array?)")
        if value is None:
            plain[name] = None
        elif type(value) is np.ndarray or (isinstance(value, np.generic) and type(value).__module__ == "numpy"):
            array = np.asarray(value)
            if array.dtype.kind not in "biuf":
                return {}, f"Rule broken: {name} holds {array.dtype} values, not numbers"
            plain[name] = array
        elif type(value) in (int, float, bool):
            plain[name] = np.asarray(value)
        elif type(value) is Tensor:
            plain[name] = Tensor.to_numpy(value)
        elif _library_type(value) or type(value).__module__.split(".")[0] == "torch" and \
                type(value).__name__ in ("Tensor", "Parameter"):
            plain[name] = to_numpy(value)
        else:
            return {}, (f"Rule broken: {name} is a {type(value).__name__}, not a tensor: return "
                        "what the library's ops made")
    return plain, ""


def _fingerprint(rules: Rules) -> tuple:
    """The rules' values, copied (to tell whether the reader's code changed them)."""
    return (None if rules.allowed is None else tuple(rules.allowed), dict(rules.forbidden),
            dict(rules.must_reach), rules.no_data, rules.no_numpy, rules.no_torch,
            rules.fresh_result, tuple(rules.helpers), dict(rules.helper_checks))

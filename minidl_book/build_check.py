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
import traceback
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from minidl.debug import trace
from minidl.debug.names import display_path
from minidl_book.harness import is_placeholder
from minidl_book.reader_code import numpy_uses, reader_frame, solution_files
from minidl_book.reader_code import site as call_site
from minidl_book.verdict import (
    TODO,
    Verdict,
    compare_outputs,
    describe_inputs,
    op_label,
)

__trace_hide__ = True

__all__ = ["BuildExercise", "Reference", "Rules", "Verdict"]

#: Tensor-level calls (methods, classmethods and dunders of ``Tensor``) a rule can see.
TENSOR_OPS = r"^Tensor\.(?!(_[a-z]\w*|__init__|__repr__|__format__)$)\w+$"
#: Reading the values out of a tensor: "no NumPy on the tensor's data".
DATA_OUT = ("to_numpy", "tolist", "into_data", "into_scalar", "__array__", "__float__",
            "__int__", "__bool__", "__iter__", "__index__")
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


@dataclass
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
            primitive's array with ``np.exp`` instead of the backend's ops). A NumPy ufunc
            call leaves no trace event, so this one is read from the code's global names.
    """

    allowed: Sequence[str] | None = None
    forbidden: Mapping[str, str] = field(default_factory=dict)
    must_reach: Mapping[str, str] = field(default_factory=dict)
    no_data: bool = False
    no_numpy: bool = False

    def leading(self) -> list[str]:
        """The built-in breakpoints that come before ``forbidden`` and ``must_reach``."""
        out = [TENSOR_OPS] if self.allowed is not None or self.no_data else []
        return out + ([OTHER_OPS] if self.allowed is not None else [])

    def patterns(self) -> list[str]:
        """The breakpoints one traced run needs."""
        return self.leading() + list(self.forbidden) + list(self.must_reach)

    def describe(self) -> str:
        """One line per rule, for the page."""
        lines = []
        if self.allowed is not None:
            ops = ", ".join(dict.fromkeys(op_label(a) for a in self.allowed))
            lines.append(f"Allowed Tensor ops: {ops} (shape queries are always allowed).")
        if self.no_data:
            lines.append("No values out of a tensor: no to_numpy, tolist, float(t), loops over elements.")
        if self.no_numpy:
            lines.append("No NumPy in your code: compute with the backend's ops.")
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
        checks: extra ``check(solution, case, outputs, trace) -> str | None``; a string is
            a failed verdict ("kept 'out' and 'tensor', needs only one").
        hints: the ladder; failed check *n* shows hints 1..n (the newest last).
        reference_solution: the hidden solution; :meth:`solution` prints its source.
        examples: explicit cases tried first, in order.
        max_examples: how many generated cases (keep pages fast: 10-30).
        seed: hypothesis seed (cases are the same on every run).
        order: the order inputs are printed in (a case's own order otherwise).
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
        hints: Sequence[str] = (),
        reference_solution: Any = None,
        examples: Sequence[dict] = (),
        max_examples: int = 20,
        seed: int = 0,
        order: Sequence[str] = (),
    ) -> None:
        self.title = title
        self.cases = cases
        self.run = run
        self.references = list(references)
        self.rules = rules or Rules()
        self.checks = list(checks)
        self.hints = list(hints)
        self.reference_solution = reference_solution
        self.examples = list(examples)
        self.max_examples = max_examples
        self.seed = seed
        self.order = tuple(order)
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
        files = solution_files(solution)
        patterns = self.rules.patterns()
        try:
            t = trace(self.run, solution, case, breakpoints=patterns, echo=False)
        except Exception as err:  # the reader's code raised: report it at the reader's line
            return self._raised(err, files, inputs)
        outputs = dict(t.result)
        broken = self._rule_verdict(t, files, inputs)
        if broken is not None:
            return broken
        for check in self.checks:  # structure first: a module the walk cannot see has no grads
            text = check(solution, case, outputs, t)
            if text:
                return Verdict(False, "check", text, inputs)
        for ref in self.references:
            expected = ref.fn(case)
            diff = compare_outputs(outputs, expected, ref.rtol, ref.atol, ref.label, ref.dtype)
            if diff is not None:
                return Verdict(False, diff.kind, diff.text,
                               inputs, index=diff.index, expected=diff.expected, found=diff.found,
                               output=diff.output)
        broken = self._reach_verdict(t, inputs)
        if broken is not None:
            return broken
        return None

    def _raised(self, err: Exception, files: Mapping[str, str], inputs: str) -> Verdict:
        entry = reader_frame(err.__traceback__, files)
        message = f"{type(err).__name__}: {err}".strip()
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
            text += f"\n  (raised inside minidl, by {display_path(last.filename)}:{last.lineno}, called from that line)"
        return Verdict(False, "error", text, inputs, call=where)

    def _rule_verdict(self, t, files: Mapping[str, str], inputs: str) -> Verdict | None:
        rules = self.rules
        if rules.allowed is not None or rules.no_data:
            allowed = None if rules.allowed is None else set(rules.allowed) | ALWAYS
            bp = t.breakpoints[0]
            for hit in t.hits_of(bp.id):
                if len(hit.frames) < 2 or hit.frames[1].path not in files:
                    continue  # called by the library itself, not by the reader
                op = hit.name.split(".", 1)[1]
                site = call_site(hit.frames[1], files)
                if rules.no_data and op in DATA_OUT:
                    label = "" if op_label(op) == op else f" ({op_label(op)})"
                    return Verdict(False, "rule", f"Rule broken: no values out of a tensor; "
                                   f"your code called {hit.name}{label}\n  {site}",
                                   inputs, rule="no data out", call=site)
                if allowed is not None and op not in allowed:
                    return Verdict(False, "rule", f"Rule broken: {op_label(op)} is not an allowed op; "
                                   f"your code called {hit.name}\n  {site}",
                                   inputs, rule=f"allowed ops (not {op})", call=site)
            if bp.hits > 200:
                return Verdict(False, "rule", "Rule broken: over 200 Tensor calls for one small case; "
                               "solve it with whole-tensor ops, not a Python loop over elements",
                               inputs, rule="no loops")
        if rules.allowed is not None:  # a functional or backend op called directly
            for hit in t.hits_of(2):
                if len(hit.frames) >= 2 and hit.frames[1].path in files:
                    site = call_site(hit.frames[1], files)
                    return Verdict(False, "rule", f"Rule broken: {hit.name} is not an allowed op "
                                   f"(only the Tensor ops listed)\n  {site}", inputs,
                                   rule=f"allowed ops (not {hit.name})", call=site)
        offset = len(rules.leading())
        for i, why in enumerate(rules.forbidden.values()):
            hits = t.hits_of(i + 1 + offset)
            if hits:
                hit = hits[0]
                frame = next((f for f in hit.frames if f.path in files), None)
                site = call_site(frame, files) if frame else "(below your code)"
                return Verdict(False, "rule", f"Rule broken: must not {why}; the run reached "
                               f"{hit.name}\n  {site}", inputs, rule=why, call=site)
        return None

    def _reach_verdict(self, t, inputs: str) -> Verdict | None:
        rules = self.rules
        offset = len(rules.leading()) + len(rules.forbidden)
        for i, what in enumerate(rules.must_reach.values()):
            if not t.hits_of(i + 1 + offset):
                return Verdict(False, "rule", f"Rule broken: the run must {what}, and it never did",
                               inputs, rule=what)
        return None

    # ----- the whole check ------------------------------------------------------------------
    def find_failure(self, solution: Any) -> Verdict | None:
        """Run the explicit examples, then the generated cases; the first failure, shrunk."""
        if self.rules.no_numpy:
            uses = numpy_uses(solution)
            if uses:
                name, where = uses[0]
                return Verdict(False, "rule", f"Rule broken: no NumPy in your code; it uses "
                               f"{name}\n  {where}", "", rule="no NumPy", call=where)
        for case in self.examples:
            verdict = self.verdict_for(solution, case)
            if verdict is not None:
                return verdict
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
            property_()
        except _Failed as failed:
            return failed.verdict
        except Exception:
            # hypothesis says "flaky" when a random solution (a dropout mask) fails a case once
            # and passes it on the replay: the failure it saw is still the reader's verdict
            if seen:
                return seen[-1]
            raise
        return None

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
        elif self.hints:
            self.hints_open = min(len(self.hints), self.hints_open + 1)
            verdict.hints = self.hints[: self.hints_open]
        print(verdict.render(len(self.hints)))
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
        print(source)
        verdict = self.find_failure(sol)
        assert verdict is None, f"the reference solution fails: {verdict.text}"
        print("\n✓ The reference solution passes every case.")
        return sol

    def _repr_markdown_(self) -> str:
        title = self.title[:1].upper() + self.title[1:]
        against = "; ".join(ref.label for ref in self.references)
        lines = [f"**Build it.** {title}.", f"Checked against: {against}, on generated cases."]
        lines += [line for line in self.rules.describe().splitlines() if line]
        return "  \n".join(lines)

    def __repr__(self) -> str:
        return f"BuildExercise({self.title!r})"

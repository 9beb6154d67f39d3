"""What a build exercise's checker says: the verdict, and the comparisons that make it.

A verdict names one thing: the failing case's inputs, and then either the first element
that differs (``out[1, 2]: expected 0.3133 (PyTorch), found 0.6931``), a shape or dtype
that differs, the rule that was broken with the reader's line that broke it, or the
exception the reader's code raised, at the reader's own line.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from minidl_book.compare import to_numpy

__trace_hide__ = True

RIGHT, WRONG, TODO = "✓", "✗", "✎"

#: How the dunders and operator-like ops read in a rule or a verdict.
OP_LABELS = {
    "__add__": "+", "__radd__": "+", "__sub__": "-", "__rsub__": "-", "__mul__": "*",
    "__rmul__": "*", "__truediv__": "/", "__rtruediv__": "/", "__neg__": "unary -",
    "__matmul__": "@", "__mod__": "%", "__pow__": "**", "__rpow__": "**",
    "__eq__": "==", "__ne__": "!=", "__lt__": "<", "__le__": "<=", "__gt__": ">",
    "__ge__": ">=", "__and__": "&", "__or__": "|", "__xor__": "^", "__invert__": "~",
    "__getitem__": "t[...]", "__setitem__": "t[...] =", "__bool__": "bool(t)",
    "__float__": "float(t)", "__int__": "int(t)", "__iter__": "iterating over t",
    "__array__": "np.asarray(t)", "__index__": "t as an index",
}


def op_label(op: str) -> str:
    """``__mul__`` → ``*``; named ops as they are."""
    return OP_LABELS.get(op, op)


@dataclass
class Verdict:
    """The checker's answer. ``ok``; ``kind`` (``ok``, ``value``, ``shape``, ``dtype``, ``rule``,
    ``error``, ``check``, ``todo``); ``text`` (the one-paragraph reason); ``inputs`` (the
    failing case, printed); and, when they apply, ``output``/``index``/``expected``/``found``
    (the first differing element), ``rule`` and ``call`` (the broken rule and the reader's
    line), ``hints`` (the hints opened so far). ``bool(verdict)`` is ``ok``."""

    ok: bool
    kind: str
    text: str
    inputs: str
    index: tuple[int, ...] | None = None
    expected: Any = None
    found: Any = None
    output: str | None = None
    rule: str | None = None
    call: str | None = None
    hints: list[str] = field(default_factory=list)
    #: how many hints the exercise has for a failure of this kind (``Hint 2 of 3``)
    hints_total: int = field(default=0, repr=False)
    #: for a value or shape verdict: ``{"inputs": {name: array}, "expected": ..., "found": ...}``
    #: (the failing case's arrays, for a drawing of input, target and yours)
    arrays: dict | None = field(default=None, repr=False)

    def __bool__(self) -> bool:
        return self.ok

    def render(self, total_hints: int | None = None) -> str:
        """The text the checker prints (``total_hints``: how many the ladder holds, the
        verdict's own count when not given; never fewer than the hints shown)."""
        if self.ok or self.kind == "todo":
            return self.text
        total_hints = max(self.hints_total if total_hints is None else total_hints, len(self.hints))
        lines = [f"{WRONG} {self.text}"]
        if self.inputs:
            lines.append("  Failing case:")
            lines += ["    " + row for row in self.inputs.splitlines()]
        for i, hint in enumerate(self.hints, start=1):
            lines.append(f"  Hint {i} of {total_hints}: {hint}")
        if self.hints and len(self.hints) < total_hints:
            lines.append("  (another hint opens at the next failed check)")
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.render()

    def __repr__(self) -> str:  # short: check() has printed the text already
        return f"Verdict(ok={self.ok}, kind={self.kind!r})"


@dataclass
class Difference:
    """The first difference between a solution's output and a reference."""

    output: str
    text: str
    index: tuple[int, ...] | None = None
    expected: Any = None
    found: Any = None
    kind: str = "value"  # or "shape", "dtype"


def _array(value: Any) -> np.ndarray:
    if isinstance(value, np.ndarray):
        return value
    return to_numpy(value)


def _fmt(value: Any) -> str:
    if isinstance(value, float | np.floating):
        return f"{float(value):.6g}"
    return repr(value.item() if isinstance(value, np.generic) else value)


def _kind(a: np.ndarray) -> str:
    if a.dtype == np.bool_:
        return "bool"
    if np.issubdtype(a.dtype, np.integer):
        return "int"
    return "float"


def compare_outputs(outputs: Mapping[str, Any], expected: Mapping[str, Any], rtol: float,
                    atol: float, label: str, dtype: bool = False) -> Difference | None:
    """The first output (in ``expected``'s order) that differs from the reference ``label``
    (in shape, kind of values, dtype when ``dtype``, then value)."""
    for name, want in expected.items():
        if name not in outputs:
            return Difference(name, f"{name}: the run produced no {name!r}")
        got = outputs[name]
        if want is None or got is None:
            if (want is None) != (got is None):
                return Difference(name, f"{name}: expected {want if want is None else 'a tensor'} "
                                  f"({label}), found {'None' if got is None else 'a tensor'}")
            continue
        w, g = _array(want), _array(got)
        if w.shape != g.shape:
            return Difference(name, f"{name}: wrong shape: expected {list(w.shape)} ({label}), "
                              f"found {list(g.shape)}", expected=list(w.shape), found=list(g.shape),
                              kind="shape")
        if _kind(w) != _kind(g):
            return Difference(name, f"{name}: wrong kind: expected {_kind(w)} values ({w.dtype}, "
                              f"{label}), found {_kind(g)} ({g.dtype})", expected=str(w.dtype),
                              found=str(g.dtype), kind="dtype")
        if dtype and w.dtype != g.dtype:
            return Difference(name, f"{name}: wrong dtype: expected {w.dtype} ({label}), found "
                              f"{g.dtype}", expected=str(w.dtype), found=str(g.dtype), kind="dtype")
        if _kind(w) == "float":
            wf, gf = w.astype(np.float64), g.astype(np.float64)
            with np.errstate(invalid="ignore"):
                bad = ~np.isclose(gf, wf, rtol=rtol, atol=atol, equal_nan=True)
            tol = f"rtol {rtol:g}, atol {atol:g}"
        else:
            bad = w != g
            tol = "exact"
        if bad.any():
            index = tuple(int(i) for i in np.argwhere(bad)[0])
            e, f = w[index], g[index]
            where = f"{name}[{', '.join(map(str, index))}]" if index else name
            count = int(bad.sum())
            more = f"; {count} of {bad.size} elements differ" if count > 1 else ""
            return Difference(name, f"{where}: expected {_fmt(e)} ({label}), found {_fmt(f)} "
                              f"({tol}{more})", index=index, expected=e.item(), found=f.item())
    return None


def describe_value(value: Any) -> str:
    """``f32[2, 3] [[0.1, -1.2, 0.5], [...]]`` for arrays, ``repr`` for the rest."""
    if isinstance(value, np.ndarray):
        edge = 3 if value.ndim < 2 else 2  # a big matrix: its corners are enough
        body = np.array2string(value, precision=4, separator=", ", threshold=24, edgeitems=edge,
                               suppress_small=True).replace("\n", "")
        dt = {"float32": "f32", "float64": "f64", "int64": "i64", "int32": "i32", "bool": "bool"}
        return f"{dt.get(str(value.dtype), str(value.dtype))}{list(value.shape)} {' '.join(body.split())}"
    return repr(value)


def describe_inputs(case: Mapping[str, Any], order: Sequence[str] = ()) -> str:
    """One ``name = value`` line per input of a case (``order`` first, then the rest)."""
    names = [n for n in order if n in case] + [n for n in case if n not in order]
    return "\n".join(f"{name} = {describe_value(case[name])}" for name in names
                     if not name.startswith("_"))

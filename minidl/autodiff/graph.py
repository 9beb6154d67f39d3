"""Seeing the recorded graph: ``graph(y)`` lists the steps behind ``y``; ``graph_memory(y)``
sums the bytes they keep for backward.

There is no burn function for this (burn's graph lives in a server thread); it is the book's
window on ``Autodiff``, and ``minidl.debug.graph`` shows the same table.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from html import escape
from typing import Any

from minidl.autodiff.node import Requirement, walk
from minidl.autodiff.step import Recompute
from minidl.autodiff.tensor import AutodiffTensor, autodiff_tensor_of


def _autodiff_tensor(tensor: Any) -> AutodiffTensor:
    """Unwrap ``Tensor`` → ``DispatchTensor`` → ``AutodiffTensor`` (duck-typed: no upward import)."""
    try:
        return autodiff_tensor_of(tensor, "graph: expected a float tensor on an autodiff device")
    except TypeError as err:
        raise TypeError(f"{err} (tensors on a plain device record no graph)") from None


def _describe(value: Any) -> str:
    if isinstance(value, Recompute):
        return f"recompute #{value.node.id}"
    dtype = getattr(getattr(value, "dtype", None), "name", "?")
    return f"{dtype}{list(getattr(value, 'shape', ()))} ({_bytes(getattr(value, 'nbytes', 0))})"


def _bytes(n: int) -> str:
    for unit in ("B", "KiB", "MiB"):
        if n < 1024 or unit == "MiB":
            return f"{n} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return str(n)


@dataclass
class StepRecord:
    """One row of a :class:`Graph`: a node, the step that made it, what that step saved."""

    id: int
    op: str
    parents: tuple[int, ...]
    requirement: Requirement
    saved: dict[str, str] = field(default_factory=dict)
    params: dict[str, Any] = field(default_factory=dict)
    saved_bytes: int = 0  # each distinct array once
    consumed: bool = False
    shared: tuple[tuple[str, ...], ...] = ()  # saved names that hold one array (x * x)

    def saved_text(self) -> str:
        """What the step saved, one entry per array: ``diff * diff`` keeps one array as
        both ``lhs`` and ``rhs``, listed once as ``lhs = rhs: float32[3, 2] (24 B, one
        array)``, so the rows add up to the graph's total."""
        if self.consumed:
            return "(consumed by backward)"
        group = {name: names for names in self.shared for name in names}
        parts = []
        for name, text in self.saved.items():
            names = group.get(name, (name,))
            if len(names) == 1:
                parts.append(f"{name}: {text}")
            elif name == names[0]:
                one = text[:-1] + ", one array)" if text.endswith(")") else text
                parts.append(f"{' = '.join(sorted(names))}: {one}")
        return ", ".join(parts)


@dataclass
class Graph:
    """The steps behind a tensor in topological order (leaves first), printable as a table."""

    root: int
    records: list[StepRecord]
    memory: int = 0  # bytes of the distinct arrays the steps keep (see graph_memory)

    @property
    def steps(self) -> list[StepRecord]:
        """The rows that are recorded ops (not leaves)."""
        return [r for r in self.records if r.op != "leaf"]

    @property
    def ops(self) -> list[str]:
        """The step class names, in the order they were recorded."""
        return [r.op for r in self.steps]

    def __getitem__(self, node_id: int) -> StepRecord:
        for record in self.records:
            if record.id == node_id:
                return record
        raise KeyError(node_id)

    def _rows(self) -> list[tuple[str, str, str, str, str]]:
        rows = []
        for r in self.records:
            op = r.op + ("(" + ", ".join(f"{k}={v}" for k, v in r.params.items()) + ")" if r.params else "")
            saved = r.saved_text()
            parents = ", ".join(f"#{p}" for p in r.parents)
            rows.append((f"#{r.id}", op, parents, str(r.requirement), saved))
        return rows

    def __str__(self) -> str:
        header = ("node", "step", "parents", "requirement", "saved")
        rows = [header, *self._rows()]
        widths = [max(len(row[i]) for row in rows) for i in range(4)]
        lines = [f"graph of #{self.root}: {len(self.steps)} steps, keeping {_bytes(self.memory)}"]
        for row in rows:
            lines.append("  ".join(cell.ljust(w) for cell, w in zip(row[:4], widths)) + "  " + row[4])
        return "\n".join(line.rstrip() for line in lines)

    def __repr__(self) -> str:
        return str(self)

    def _repr_html_(self) -> str:
        head = "".join(f"<th>{h}</th>" for h in ("node", "step", "parents", "requirement", "saved"))
        body = "".join(
            "<tr>" + "".join(f"<td style='text-align:left'>{escape(c)}</td>" for c in row) + "</tr>"
            for row in self._rows()
        )
        caption = f"<caption>graph of #{self.root}: {len(self.steps)} steps, keeping {_bytes(self.memory)}</caption>"
        return f"<table>{caption}<thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def graph(tensor: Any) -> Graph:
    """The recorded graph behind a float tensor on an autodiff device (an ``AutodiffTensor``,
    or anything wrapping one: a ``DispatchTensor``, a ``Tensor``)."""
    root = _autodiff_tensor(tensor).node
    records = []
    for node in walk(root):
        step = node.step
        if step is None:
            records.append(StepRecord(node.id, "leaf", (), node.requirement))
            continue
        records.append(StepRecord(
            id=node.id,
            op=type(step).__name__,
            parents=tuple(p.id for p in node.parents),
            requirement=node.requirement,
            saved={k: _describe(v) for k, v in step.saved.items()},
            params=step.params(),
            saved_bytes=sum(
                int(getattr(v, "nbytes", 0)) for v in _distinct(step.saved).values()),
            consumed=step.consumed,
            shared=tuple(names for names in _same_array(step.saved) if len(names) > 1),
        ))
    return Graph(root.id, records, graph_memory(tensor))


def _same_array(saved: dict[str, Any]) -> list[tuple[str, ...]]:
    """The saved names grouped by the array they hold (a ``Recompute`` is its own group)."""
    groups: dict[int | str, list[str]] = {}
    for name, value in saved.items():
        key: int | str = name if isinstance(value, Recompute) else id(value)
        groups.setdefault(key, []).append(name)
    return [tuple(names) for names in groups.values()]


def _distinct(saved: dict[str, Any]) -> dict[str, Any]:
    """One entry per distinct array of ``saved`` (``Recompute`` entries dropped)."""
    return {names[0]: saved[names[0]] for names in _same_array(saved)
            if not isinstance(saved[names[0]], Recompute)}


def graph_memory(tensor: Any) -> int:
    """Bytes of every distinct array saved by the steps behind ``tensor`` (an array kept by
    several steps counts once; ``Recompute`` entries count nothing)."""
    root = _autodiff_tensor(tensor).node
    arrays: dict[int, int] = {}
    for node in walk(root):
        if node.step is not None:
            for value in node.step.saved.values():
                if not isinstance(value, Recompute):
                    arrays[id(value)] = int(getattr(value, "nbytes", 0))
    return sum(arrays.values())

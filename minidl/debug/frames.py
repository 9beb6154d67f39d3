"""What a breakpoint stop records: :class:`Frame` (one line of a backtrace) and :class:`Hit`
(one stop: its frames, innermost first). :mod:`minidl.debug.trace` makes them;
:mod:`minidl.debug.diagram` draws them.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Frame:
    """One line of a backtrace: ``frame #4: minidl/backends/flex/ops.py:185 Flex.float_matmul(...)``.

    ``layer`` is where the frame sits in DESIGN.md §1 (``tensor``, ``dispatch``, ``autodiff``,
    ``backend``, ``kernel``, ...); ``note`` marks a protocol default body
    (``"ModuleOps default"``); ``library`` is true for code of the minidl package; ``hop`` is
    true for the entry points a call path is told by — backend ops, generic defaults, the
    functions and methods of the tensor and nn layers, kernels — and false for helpers
    (Autodiff's ``record`` and step ``forward``, a backend's private functions).
    """

    index: int
    name: str
    path: str
    line: int
    args: str
    layer: str
    note: str = ""
    library: bool = True
    hop: bool = True

    def __str__(self) -> str:
        note = f"  [{self.note}]" if self.note else ""
        return f"frame #{self.index}: {self.path}:{self.line} {self.name}({self.args}){note}"


@dataclass
class Hit:
    """One stop at a breakpoint: its backtrace (innermost first) and the numba kernels the
    stopped function went on to call."""

    breakpoint: int
    frames: list[Frame]
    kernels: list[str] = field(default_factory=list)
    location: int = 1  # lldb's "breakpoint 1.2": which resolved location stopped

    @property
    def name(self) -> str:
        """The qualified name of the function that matched."""
        return self.frames[0].name

    def chain(self, kernels: bool = False, hops_only: bool = True, library_only: bool = True) -> list[str]:
        """Qualified names outermost → innermost (the path read bottom-up, as the seed does).

        ``hops_only`` keeps the entry points of the layers (see :class:`Frame`) and drops
        helpers in between; ``library_only`` drops frames outside the minidl package (the
        caller's lambda, a test function); ``kernels`` appends the numba kernels called below
        the stop.
        """
        names = [
            f.name for f in reversed(self.frames)
            if (f.library or not library_only) and (f.hop or not hops_only or f.index == 0)
        ]
        if kernels:
            names.extend(k for k in self.kernels if k not in names)
        return names

    def bt(self, n: int | None = None) -> str:
        """The backtrace as lldb's ``bt n`` prints it."""
        frames = self.frames if n is None else self.frames[:n]
        lines = [f"* thread #1, stop reason = breakpoint {self.breakpoint}.{self.location}"]
        for f in frames:
            lines.append(("  * " if f.index == 0 else "    ") + str(f))
        if self.kernels:
            lines.append(f"    (then called: {', '.join(self.kernels)})")
        return "\n".join(lines)

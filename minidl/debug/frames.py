"""What a breakpoint stop records: :class:`Frame` (one line of a backtrace) and :class:`Hit`
(one stop: its frames, innermost first). :mod:`minidl.debug.trace` makes them;
:mod:`minidl.debug.diagram` draws them.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Frame:
    """One line of a backtrace: ``frame #4: minidl/backends/flex/ops.py:185 Flex.float_matmul(...)``.

    ``layer`` is the layer the frame sits in (ARCHITECTURE.md, "The layers": ``tensor``, ``dispatch``, ``autodiff``,
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

    def text(self, width: int | None = None, wrap: bool = False, indent: str = "") -> str:
        """This frame as a backtrace line of at most ``width`` characters (``indent`` included).

        A longer line keeps its location and name and shortens the argument list the way the
        book this library follows elides lldb's arguments: whole arguments while they fit,
        then ``...`` (a long path loses its leading folders first, and a caller outside the
        library its name's qualifiers). With ``wrap`` the arguments are kept and continue on
        further, indented lines instead.
        """
        full = indent + str(self)
        if width is None or len(full) <= width:
            return full
        note = f"  [{self.note}]" if self.note else ""
        path, name = self.path, self.name
        parts = path.split("/")

        def head_of(path: str, name: str) -> str:
            return f"{indent}frame #{self.index}: {path}:{self.line} {name}("

        head = head_of(path, name)
        keep = len(parts) - 1
        while len(head) + len("...)") + len(note) > width and keep > 1:
            path = ".../" + "/".join(parts[-keep:])  # drop the path's leading folders
            head, keep = head_of(path, name), keep - 1
        if len(head) + len("...)") + len(note) > width and not self.library:
            name = name.rsplit(".", 1)[-1]  # a caller's long qualified name: its last part
            head = head_of(path, name)
        if not self.args:
            return head + ")" + note
        args = split_args(self.args)
        if wrap:
            pad = " " * (len(indent) + 4)
            lines, line, fresh = [], head, True
            for i, arg in enumerate(args):
                piece = arg + ("," if i < len(args) - 1 else ")" + note)
                if len(line) + (0 if fresh else 1) + len(piece) > width and line != pad:
                    lines.append(line)
                    line, fresh = pad + piece, False
                else:
                    line, fresh = line + ("" if fresh else " ") + piece, False
            lines.append(line)
            return "\n".join(lines)
        kept: list[str] = []
        for arg in args:
            trial = head + ", ".join([*kept, arg, "..."]) + ")" + note
            if len(trial) > width:
                break
            kept.append(arg)
        if len(kept) == len(args):
            return full
        return head + ", ".join([*kept, "..."]) + ")" + note


def split_args(args: str) -> list[str]:
    """``"a=<f32[4,4] flex>, b=None"`` → ``["a=<f32[4,4] flex>", "b=None"]``: commas inside
    brackets (``()[]{}<>``) do not split."""
    out, depth, start = [], 0, 0
    for i, ch in enumerate(args):
        if ch in "([{<":
            depth += 1
        elif ch in ")]}>":
            depth = max(depth - 1, 0)
        elif ch == "," and depth == 0:
            out.append(args[start:i].strip())
            start = i + 1
    tail = args[start:].strip()
    if tail:
        out.append(tail)
    return out


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
        """Qualified names outermost → innermost (the path read bottom-up, as the burn book reads its backtraces).

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

    def bt(self, n: int | None = None, width: int | None = None, wrap: bool = False) -> str:
        """The backtrace as lldb's ``bt n`` prints it.

        ``width`` keeps every line within that many characters: argument lists are shortened
        to ``...`` (or, with ``wrap``, continued on indented lines); see :meth:`Frame.text`.
        """
        frames = self.frames if n is None else self.frames[:n]
        lines = [f"* thread #1, stop reason = breakpoint {self.breakpoint}.{self.location}"]
        for f in frames:
            lines.append(f.text(width, wrap, "  * " if f.index == 0 else "    "))
        if self.kernels:
            lines.append(f"    (then called: {', '.join(self.kernels)})")
        return "\n".join(lines)

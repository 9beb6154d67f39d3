"""The real ``pdb``, fed commands non-interactively, so a chapter can print a genuine session.

::

    print(pdb_session(lambda: layer.forward(x), ["b Flex.float_matmul", "c", "where", "c"]))

runs the callable under :class:`pdb.Pdb` with its input from the command list and its output
into a buffer, and returns the transcript (each command echoed after its ``(Pdb)`` prompt, as
on a terminal). ``b`` accepts minidl's qualified names (``Flex.float_matmul``,
``Dispatch.linear``, ``linear.linear[Dispatch]``): they are turned into ``file:line`` of the
body's first line, with a condition on ``cls``/``B`` when one body serves several names (a
ModuleOps default running on Dispatch and on Flex). ``file:line`` and pdb's own forms pass
through untouched.
"""

from __future__ import annotations

import bdb
import io
import os
import pdb
import sys
from collections.abc import Sequence

from minidl.debug.catalog import Location, known_locations
from minidl.debug.names import ROOT_DIR

__trace_hide__ = True

_BREAK = ("b", "break", "tbreak")


def resolve_location(name: str) -> Location:
    """The :class:`Location` of a qualified name; ``KeyError`` naming close matches if unknown."""
    known = known_locations()
    if name in known:
        return known[name]
    close = sorted(n for n in known if n.endswith(name) or name in n)[:6]
    raise KeyError(f"no function named {name!r}" + (f"; did you mean {', '.join(close)}?" if close else ""))


def pdb_command(line: str) -> str:
    """Turn ``b Flex.float_matmul`` into ``b /abs/minidl/.../ops.py:186, cls.__name__ == 'Flex'``
    when the argument is a qualified name; other commands are returned unchanged."""
    parts = line.strip().split(maxsplit=1)
    if len(parts) != 2 or parts[0] not in _BREAK:
        return line
    target, _, condition = parts[1].partition(",")
    target = target.strip()
    head = target.rsplit(":", 1)
    if len(head) == 2 and head[1].isdigit():  # file:line
        path = head[0] if os.path.isabs(head[0]) else str(ROOT_DIR / head[0])
        if os.path.exists(path):
            target = f"{path}:{head[1]}"
        return f"{parts[0]} {target}" + (f", {condition.strip()}" if condition.strip() else "")
    try:
        loc = resolve_location(target)
    except KeyError:
        return line  # pdb's own forms (a function in scope, a module.function)
    conds = [c for c in (loc.condition, condition.strip()) if c]
    cond = f", {' and '.join(conds)}" if conds else ""
    return f"{parts[0]} {loc.code.co_filename}:{loc.body_line}{cond}"


def stdlib_pdb() -> type:
    """The standard library's ``pdb.Pdb`` class.

    A Jupyter kernel (ipykernel) replaces ``pdb.Pdb`` with IPython's interruptible debugger,
    which prints ``ipdb>`` prompts in colour to the real stdout instead of the buffer; the
    stdlib class is still in its MRO, and that is the one a transcript needs.
    """
    return next(c for c in pdb.Pdb.__mro__ if c.__module__ == "pdb" and c.__name__ == "Pdb")


class _EchoInput(io.StringIO):
    """Reads commands one line at a time and echoes each after the prompt, like a terminal."""

    def __init__(self, text: str, out: io.StringIO):
        super().__init__(text)
        self.out = out

    def readline(self, *args) -> str:  # type: ignore[override]
        line = super().readline(*args)
        self.out.write(line if line else "\n")
        return line


def pdb_session(fn, commands: Sequence[str], *args, relative_paths: bool = True, **kwargs) -> str:
    """Run ``fn(*args, **kwargs)`` under the real pdb, driven by ``commands``; the transcript.

    pdb stops at the first line of ``fn``; the commands follow (``b …``, ``c``, ``where``,
    ``p x.shape``, …). When the commands run out pdb quits and the run ends there.
    ``relative_paths`` shortens the repository's absolute paths to ``minidl/…`` in the text.
    """
    out = io.StringIO()
    lines = [pdb_command(c) for c in commands]
    stdin = _EchoInput("\n".join(lines) + "\n", out)
    debugger = stdlib_pdb()(stdin=stdin, stdout=out, nosigint=True, readrc=False)
    debugger.use_rawinput = False
    old_trace = sys.gettrace()
    try:
        debugger.runcall(fn, *args, **kwargs)
    except bdb.BdbQuit:
        pass
    finally:
        sys.settrace(old_trace)
    text = out.getvalue()
    if relative_paths:
        text = text.replace(str(ROOT_DIR) + os.sep, "")
    return text

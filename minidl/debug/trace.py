"""Breakpoints and backtraces for Python, printed the way lldb prints them.

The burn book's nn-modules chapter proves "Autodiff's linear is never called" with lldb: a regex breakpoint on the gemm
hits, one on ``Autodiff…::linear`` resolves to no location, and ``bt`` read bottom-up shows the
path. :func:`trace` does the same for a Python callable::

    t = trace(lambda: layer.forward(x), breakpoints=[r"Flex\\.float_matmul", r"Autodiff.*\\.linear$"])
    # Breakpoint 1: 1 location.
    # Breakpoint 2: 1 location.
    # Breakpoint 1: hit 1 time.
    # Breakpoint 2: resolved, never hit.
    t.bt()      # frame #0: minidl/backends/flex/ops.py:185 Flex.float_matmul(lhs=<f32[4,4] flex>, ...)
    t.chain()   # ['Linear.forward', 'module.linear', ..., 'Flex.float_matmul']

It runs ``fn`` once with a ``sys.setprofile`` hook (installed only for that run, so tracing
costs nothing otherwise) and, for every call whose qualified name (see
:mod:`minidl.debug.names`) matches a breakpoint, records the backtrace innermost first.
Frames of modules marked ``__trace_hide__ = True`` (Dispatch's ``route``, this package) and of
the standard library and third-party packages are left out; numba kernels appear as
``kernel <name> [numba]`` frames.
"""

from __future__ import annotations

import re
import sys
import types
from dataclasses import dataclass, field
from html import escape

from minidl.backend import BackendBase
from minidl.debug import _hooks
from minidl.debug.catalog import known_locations
from minidl.debug.diagram import path_diagram
from minidl.debug.frames import Frame, Hit, split_args
from minidl.debug.names import (
    CodeInfo,
    code_info,
    describe,
    frame_args,
    frame_name,
    kernel_info,
    kernel_name,
    layer_of,
)

__trace_hide__ = True

#: How many hits of one breakpoint keep their backtrace (the count goes on).
MAX_HITS = 200
#: Frames recorded per hit, whatever ``depth`` prints, so ``chain()`` sees the whole path.
MAX_FRAMES = 64


@dataclass
class Breakpoint:
    """A regex over qualified names, the known names it resolved to, and how often it hit."""

    id: int
    pattern: str
    locations: list[str]
    hits: int = 0
    hit_names: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.regex = re.compile(self.pattern)

    @property
    def resolved(self) -> bool:
        """Whether the pattern matched a known name before the run."""
        return bool(self.locations)

    def resolution(self) -> str:
        """``Breakpoint 1: 3 locations.`` or ``Breakpoint 2: no locations (pending).``"""
        n = len(self.locations)
        if n == 0:
            return f"Breakpoint {self.id}: no locations (pending)."
        return f"Breakpoint {self.id}: {n} location{'s' if n != 1 else ''}."

    def outcome(self) -> str:
        """What happened during the run (hit count, or that it never hit)."""
        if self.hits:
            where = ", ".join(self.hit_names)
            times = "time" if self.hits == 1 else "times"
            late = "" if self.resolved else " (resolved during the run)"
            kept = f" (backtraces kept for the first {MAX_HITS} only)" if self.hits > MAX_HITS else ""
            return f"Breakpoint {self.id}: hit {self.hits} {times}{late} at {where}.{kept}"
        if self.resolved:
            return f"Breakpoint {self.id}: resolved, never hit ({', '.join(self.locations[:4])}{', …' if len(self.locations) > 4 else ''})."
        return f"Breakpoint {self.id}: no locations (pending), never hit."


class Trace:
    """The result of :func:`trace`: breakpoints, hits, and the value ``fn`` returned."""

    def __init__(self, breakpoints: list[Breakpoint], hits: list[Hit], result: object, depth: int):
        self.breakpoints = breakpoints
        self.hits = hits
        self.result = result
        self.depth = depth

    def hits_of(self, breakpoint: int | str) -> list[Hit]:
        """The hits of one breakpoint, by id (1-based) or by its pattern."""
        bp = self._bp(breakpoint)
        return [h for h in self.hits if h.breakpoint == bp.id]

    def first(self, breakpoint: int | str | None = None) -> Hit:
        """The first hit (of one breakpoint, when given); ``LookupError`` when there is none."""
        hits = self.hits if breakpoint is None else self.hits_of(breakpoint)
        if not hits:
            raise LookupError(f"no hit{'' if breakpoint is None else f' for breakpoint {breakpoint!r}'}")
        return hits[0]

    def never_hit(self) -> list[Breakpoint]:
        """Breakpoints that did not stop once."""
        return [bp for bp in self.breakpoints if not bp.hits]

    def chain(self, hit: int = 0, kernels: bool = False, hops_only: bool = True,
              library_only: bool = True) -> list[str]:
        """Names outermost → innermost of hit number ``hit`` (the first by default); see
        :meth:`Hit.chain`."""
        if not self.hits:
            raise LookupError("no hits: the breakpoints never stopped")
        return self.hits[hit].chain(kernels=kernels, hops_only=hops_only, library_only=library_only)

    def bt(self, n: int | None = None, hit: int = 0, width: int | None = None,
           wrap: bool = False) -> None:
        """Print the backtrace of a hit like lldb's ``bt n`` (``n`` frames, innermost first).

        ``width`` shortens (or, with ``wrap``, wraps) argument lists so that every line fits
        in that many characters, e.g. ``width=88`` for a page's text column.
        """
        print(self.bt_text(n, hit, width, wrap))

    def bt_text(self, n: int | None = None, hit: int = 0, width: int | None = None,
                wrap: bool = False) -> str:
        """The text :meth:`bt` prints."""
        if not self.hits:
            return "(no hits)"
        return self.hits[hit].bt(self.depth if n is None else n, width, wrap)

    def diagram(self, **kw):
        """The path of the first hit as an SVG flowchart (see :func:`path_diagram`)."""
        return path_diagram(self, **kw)

    def _bp(self, key: int | str) -> Breakpoint:
        for bp in self.breakpoints:
            if bp.id == key or bp.pattern == key:
                return bp
        raise KeyError(f"no breakpoint {key!r}")

    def __str__(self) -> str:
        lines = [bp.resolution() for bp in self.breakpoints]
        shown: set[int] = set()
        for hit in self.hits:
            if hit.breakpoint in shown:
                continue
            shown.add(hit.breakpoint)
            lines += ["", hit.bt(self.depth)]
        lines.append("")
        lines += [bp.outcome() for bp in self.breakpoints]
        return "\n".join(lines)

    def __repr__(self) -> str:
        return f"<Trace: {len(self.breakpoints)} breakpoints, {len(self.hits)} hits>"

    def _repr_html_(self) -> str:
        return f'<pre class="minidl-trace">{escape(str(self))}</pre>'


class _Recorder:
    """The profile callback of one :func:`trace` run."""

    def __init__(self, breakpoints: list[Breakpoint], depth: int):
        self.breakpoints = breakpoints
        self.depth = depth
        self.hits: list[Hit] = []
        self.active: list[tuple[types.FrameType, list[Hit]]] = []
        self.matches: dict[str, list[Breakpoint]] = {}
        self.runner: types.CodeType | None = None

    def _match(self, name: str) -> list[Breakpoint]:
        found = self.matches.get(name)
        if found is None:
            found = [bp for bp in self.breakpoints if bp.regex.search(name)]
            self.matches[name] = found
        return found

    def __call__(self, frame: types.FrameType, event: str, arg) -> None:
        if event == "call":
            info = code_info(frame.f_code, frame)
            if info.kind == "skip":
                return
            name, cls = frame_name(frame, info)
            head: list = []
            start: types.FrameType | None = frame
        elif event == "kernel_call":
            info = kernel_info(frame.f_code, frame)
            name, cls = kernel_name(info.func), None
            for _, hits in self.active:
                for hit in hits:
                    if name not in hit.kernels:
                        hit.kernels.append(name)
            # the synthesized frame is not on the stack; the frame that called the kernel is
            head, start = [(frame, info, name, cls)], sys._getframe(1)
        else:
            if event == "return" and self.active and frame is self.active[-1][0]:
                self.active.pop()
            return
        bps = self._match(name)
        if not bps:
            return
        frames = self._backtrace(head, start)
        new = []
        for bp in bps:
            bp.hits += 1
            if name not in bp.hit_names:
                bp.hit_names.append(name)
            if bp.hits <= MAX_HITS:
                where = bp.locations.index(name) + 1 if name in bp.locations else 1
                new.append(Hit(bp.id, frames, location=where))
        self.hits.extend(new)
        if new and event == "call":
            self.active.append((frame, new))

    def _backtrace(self, head: list, start: types.FrameType | None) -> list[Frame]:
        rows: list[tuple[types.FrameType, CodeInfo, str, object]] = list(head)
        f = start
        while f is not None and len(rows) < self.depth:
            if f.f_code is self.runner:
                break
            info = code_info(f.f_code, f)
            if info.kind != "skip":
                name, cls = frame_name(f, info)
                rows.append((f, info, name, cls))
            f = f.f_back
        out = []
        for i, (f, info, name, cls) in enumerate(rows):
            line = info.line if i == 0 and not head or info.kind == "kernel" else f.f_lineno
            note = f"{info.owner} default" if info.is_default else ""
            if info.kind == "generic":
                note = "generic default"
            layer = layer_of(name, info, cls)
            hop = info.kind in ("generic", "kernel") or (info.kind == "cls" and _is_backend(cls)) \
                or (info.in_package and layer in ("nn", "tensor") and not info.func.startswith("_"))
            out.append(Frame(i, name, info.path, line, frame_args(f, info, cls), layer,
                             note, info.in_package or info.kind == "kernel", hop))
        return out


def _is_backend(cls) -> bool:
    return isinstance(cls, type) and issubclass(cls, BackendBase)


def _run(recorder: _Recorder, fn, args, kwargs):
    recorder.runner = sys._getframe().f_code
    _hooks.add(recorder)
    try:
        return fn(*args, **kwargs)
    finally:
        _hooks.remove(recorder)


def resolve(patterns: list[str]) -> list[Breakpoint]:
    """Resolve each regex against the names that exist now (see :mod:`minidl.debug.catalog`)."""
    names = list(known_locations())
    out = []
    for i, pattern in enumerate(patterns, start=1):
        regex = re.compile(pattern)
        out.append(Breakpoint(i, pattern, [n for n in names if regex.search(n)]))
    return out


def trace(fn, *args, breakpoints: str | list[str] | tuple[str, ...] = (), depth: int = 12,
          echo: bool = True, **kwargs) -> Trace:
    """Run ``fn(*args, **kwargs)`` once and record a backtrace at every breakpoint hit.

    Args:
        fn: the callable to run (a lambda around a forward pass, say).
        breakpoints: regexes searched in qualified names (``r"Flex\\.float_matmul"``,
            ``r"Autodiff.*\\.linear$"``), as lldb's ``breakpoint set -r``.
        depth: frames printed per backtrace, innermost first (lldb's ``bt 12``); up to
            ``max(depth, 64)`` are recorded, so :meth:`Trace.chain` sees the whole path.
        echo: print the resolution lines before running and the outcome lines after, the way
            an lldb session shows them.

    Returns:
        a :class:`Trace` (``hits``, ``bt()``, ``chain()``, ``diagram()``); ``trace.result`` is
        what ``fn`` returned. Exceptions from ``fn`` propagate.
    """
    bps = resolve([breakpoints] if isinstance(breakpoints, str) else list(breakpoints))
    if echo:
        for bp in bps:
            print(bp.resolution())
            if not bp.resolved:
                print("WARNING:  Unable to resolve breakpoint to any actual locations.")
    recorder = _Recorder(bps, max(depth, MAX_FRAMES))
    result = _run(recorder, fn, args, kwargs)
    if echo:
        for bp in bps:
            print(bp.outcome())
    return Trace(bps, recorder.hits, result, depth)


__all__ = ["Breakpoint", "Frame", "Hit", "Trace", "describe", "resolve", "split_args", "trace"]

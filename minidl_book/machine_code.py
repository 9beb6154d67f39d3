"""The instructions numba emitted for a kernel: the performance chapter's look at the gemm
ladder's machine code (``perf_lab.fma_census``).

numba compiles a function through LLVM; ``dispatcher.inspect_asm(signature)`` returns the
x86-64 assembly (AT&T syntax: destination last). :func:`hot_loop` finds the innermost loops
(a label and a later jump back to it), keeps those that hold multiply-adds (an FMA, or a
multiply when fast-math contraction is off), and returns the one that does the most
multiply-adds per pass *among the loops that run for the given arguments*.

That last clause matters: LLVM's loop vectorizer often emits two copies of a loop, a vector
one and a scalar one, and a run-time test picks between them. When the loop walks an array
along a dimension whose step it only knows at run time, LLVM guesses that step is one
element and guards the vector copy with a test that the dimension's extent is 1 (an
``ident.check`` in the IR, ``icmp eq i64 %arg.b.5.1, 1``: ``b.shape[1] == 1``). For the
arguments given, :func:`hot_loop` evaluates those tests; when one fails, the function's
vector loops are taken as not running (the versioned loop is the only vectorized one in the
kernels the chapter reads). Nothing here mirrors burn.
"""

from __future__ import annotations

import inspect
import re
from dataclasses import dataclass, field

import numba

__all__ = ["Loop", "fma_census", "hot_loop", "inner_loops", "stride_guards"]

_LABEL = re.compile(r"^(\.?L\w+):")
_JUMP = re.compile(r"^\s+j\w+\s+(\.?L\w+)\s*$")
_INSTR = re.compile(r"^\s+([a-z][\w.]*)\s*(.*?)\s*(?:#.*)?$")
_MULADD = re.compile(r"^v(?:fn?m(?:add|sub)\d*|mul)([ps])([sd])$")
_MEM = re.compile(r"\(")
_SPLIT = re.compile(r",\s*(?![^()]*\))")  # commas between operands, not inside (…)
_WIDTH = {"x": 16, "y": 32, "z": 64}  # bytes of an xmm, ymm, zmm register
_GUARD = re.compile(r"%ident\.check[\w.]* = icmp (?:eq|ne) i64 %arg\.(\w+)\.5\.(\d+), 1\b")


@dataclass
class Loop:
    """One innermost loop of a kernel's machine code, counted per pass."""

    label: str
    lines: list[str]
    ops: dict[str, int] = field(default_factory=dict)  # e.g. {"vfmadd213ps zmm": 4}
    macs: int = 0  # float32 multiply-adds per pass (lanes of each FMA / multiply)
    lanes: int = 1  # widest vector used by a multiply-add (1: scalar only)
    loads: int = 0  # instructions reading memory (not the stack)
    stores: int = 0  # instructions writing memory (not the stack)
    stack: int = 0  # spills and reloads: operands on the stack (%rsp)
    runs: bool = True  # False: a vector copy behind a run-time test these args fail

    @property
    def register(self) -> str:
        """The register width its multiply-adds use: ``"zmm"``, ``"ymm"``, ``"xmm"`` or
        ``"scalar"``."""
        return {16: "zmm", 8: "ymm", 4: "xmm"}.get(self.lanes, "scalar")

    @property
    def text(self) -> str:
        """The loop's instructions, as numba's assembly lists them."""
        return "\n".join(ln.rstrip() for ln in self.lines)


def _count(loop: Loop) -> Loop:
    for ln in loop.lines:
        m = _INSTR.match(ln)
        if not m or m.group(1).startswith("."):
            continue
        name, operands = m.group(1), m.group(2)
        ops = _SPLIT.split(operands) if operands else []
        mem = [i for i, op in enumerate(ops) if _MEM.search(op)]
        if mem and not name.startswith("prefetch"):  # a prefetch is a hint, not a load
            on_stack = any("%rsp" in ops[i] for i in mem)
            store = mem[-1] == len(ops) - 1 and len(ops) > 1 and name.startswith(("vmov", "mov"))
            if on_stack:
                loop.stack += 1
            elif store:
                loop.stores += 1
            else:
                loop.loads += 1
        k = _MULADD.match(name)
        if k is None or k.group(2) != "s":  # float32 only
            continue
        regs = re.findall(r"%([xyz])mm\d+", operands)
        lanes = _WIDTH[regs[-1]] // 4 if k.group(1) == "p" and regs else 1
        key = f"{name} {regs[-1]}mm" if lanes > 1 else name
        loop.ops[key] = loop.ops.get(key, 0) + 1
        loop.macs += lanes
        loop.lanes = max(loop.lanes, lanes)
    return loop


def inner_loops(asm: str) -> list[Loop]:
    """The innermost loops of ``asm`` (a label, then a later jump back to it, with no other
    such loop inside), counted; only those holding a float32 multiply or FMA."""
    lines = asm.splitlines()
    seen: dict[str, int] = {}
    spans = []
    for i, ln in enumerate(lines):
        if m := _LABEL.match(ln):
            seen[m.group(1)] = i
        elif (m := _JUMP.match(ln)) and m.group(1) in seen:
            spans.append((seen[m.group(1)], i))
    inner = [(a, b) for a, b in spans
             if not any(a <= c and d <= b and (c, d) != (a, b) for c, d in spans)]
    loops = [_count(Loop(lines[a].rstrip(":"), lines[a:b + 1])) for a, b in inner]
    return [lp for lp in loops if lp.macs]


def _inspectable(kernel):
    """``kernel`` as a numba dispatcher whose code can be inspected: a plain function is
    compiled as the chapter's checkers do; a ``cache=True`` dispatcher (numba refuses to
    inspect code loaded from its cache) is compiled again without the cache."""
    from numba.core.caching import NullCache
    from numba.core.registry import CPUDispatcher

    if not isinstance(kernel, CPUDispatcher):
        return numba.njit(error_model="numpy", fastmath=True)(kernel)
    if isinstance(kernel._cache, NullCache):
        return kernel
    opts = {k: v for k, v in kernel.targetoptions.items() if k != "nopython"}
    return numba.njit(**opts)(kernel.py_func)


def stride_guards(kernel, *args) -> list[tuple[str, int, bool]]:
    """The run-time tests LLVM put before a vector copy of a loop, guessing an extent is 1:
    ``[(argument, dimension, holds for args)]`` (``("b", 1, False)``: the copy runs only if
    ``b.shape[1] == 1``, and these ``args`` fail it)."""
    kernel = _inspectable(kernel)
    sig = tuple(numba.typeof(a) for a in args)
    kernel.compile(sig)
    ir = kernel.inspect_llvm(sig)
    names = list(inspect.signature(kernel.py_func).parameters)
    out = []
    for name, dim in sorted(set(_GUARD.findall(ir))):
        if name in names:
            arg = args[names.index(name)]
            out.append((name, int(dim), arg.shape[int(dim)] == 1))
    return out


def hot_loop(kernel, *args) -> Loop:
    """The innermost loop of ``kernel``'s machine code (compiled for ``args``' types) that
    does the most multiply-adds per pass among those that run for ``args``: a vector loop
    counts as not running when one of :func:`stride_guards` fails for ``args``."""
    kernel = _inspectable(kernel)
    sig = tuple(numba.typeof(a) for a in args)
    kernel.compile(sig)
    loops = inner_loops(kernel.inspect_asm(sig))
    if not loops:
        raise ValueError("no loop with a float32 multiply-add in this kernel's code")
    if not all(holds for _, _, holds in stride_guards(kernel, *args)):
        for lp in loops:
            lp.runs = lp.lanes == 1
    running = [lp for lp in loops if lp.runs] or loops
    return max(running, key=lambda lp: lp.macs)


def fma_census(kernels: dict, *args):
    """A table, one row per kernel: the multiply-add instructions of its :func:`hot_loop`
    on ``args``, the multiply-adds they do per pass, and the loop's other memory traffic.
    Returns ``(table, {name: Loop})``."""
    from minidl.debug import Table

    hot = {name: hot_loop(k, *args) for name, k in kernels.items()}
    rows = [[name, " + ".join(f"{n} × {op}" for op, n in lp.ops.items()), str(lp.macs),
             str(lp.loads), str(lp.stores), str(lp.stack)] for name, lp in hot.items()]
    table = Table(["the loop that runs", "multiply-add instructions", "multiply-adds",
                   "loads", "stores", "stack"], rows)
    return table, hot

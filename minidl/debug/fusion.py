"""Looking inside ``Fusion[B]``: the plan of an execution and the stream's events.

- :func:`fusion_plan` — what the last drain of the stream did: the recorded ops, the blocks
  the search chose (which fuser took which ops), each generated kernel's name and source, the
  bytes read and written with and without fusion, and whether the plan came from the store.
- ``MINIDL_DEBUG>=1`` (or :func:`~minidl.debug.debug_level`) prints stream events: a sync and
  why, the plan searched or reused, a block fused, a kernel generated or loaded from the
  cache folder, a kernel launched, an op run on ``B``; level 2 adds every recorded op.
"""

from __future__ import annotations

import textwrap
from dataclasses import dataclass

# trace tools skip frames of this module
__trace_hide__ = True


def _eager_bytes(ops) -> int:
    return sum(sum(t.nbytes for t in op.inputs) + op.out.nbytes for op in ops)


@dataclass
class BlockView:
    """One block of a plan: its ops, the fuser that took them (``None``: run on ``B``), its kernel."""

    fuser: str | None
    kinds: list[str]
    kernel: str | None
    source: str | None
    bytes_read: int
    bytes_written: int


class FusionPlan:
    """The plan of one execution of a fusion stream (see :func:`fusion_plan`)."""

    def __init__(self, record):
        self.record = record
        self.ops = [repr(op) for op in record.ops]
        self.searched = record.searched
        self.reason = record.reason
        self.index = record.index
        self.blocks: list[BlockView] = []
        for block in record.plan.blocks:
            ops = record.ops[block.start:block.end]
            if block.fused:
                k = block.kernel
                self.blocks.append(BlockView(block.fuser, [o.kind for o in ops], k.name, k.source,
                                             k.bytes_read, k.bytes_written))
            else:
                op = ops[0]
                self.blocks.append(BlockView(None, [op.kind], None, None, sum(t.nbytes for t in op.inputs),
                                             op.out.nbytes))

    @property
    def kernels(self) -> list[str]:
        """Names of the generated kernels the plan launched, in order."""
        return [b.kernel for b in self.blocks if b.kernel]

    @property
    def bytes_fused(self) -> int:
        """Bytes the plan reads and writes (each tensor once per block)."""
        return sum(b.bytes_read + b.bytes_written for b in self.blocks)

    @property
    def bytes_eager(self) -> int:
        """Bytes the same ops read and write run one by one (every intermediate written and read)."""
        return _eager_bytes(self.record.ops)

    def source(self, index: int = 0) -> str:
        """The source of the ``index``-th generated kernel."""
        return [b.source for b in self.blocks if b.source][index]

    def __str__(self) -> str:
        """Lines of at most 88 characters: the ops, then each block and its kernel."""
        wrap = textwrap.TextWrapper(86, initial_indent="    ", subsequent_indent="    ")
        lines = [f"{len(self.ops)} ops recorded, synced by {self.reason}",
                 f"plan {'searched' if self.searched else 'reused from the store'}"]
        lines += [f"  {op}" for op in self.ops]
        for i, b in enumerate(self.blocks):
            who = f"{b.fuser} fuser, kernel {b.kernel}" if b.fuser else "no fuser: runs on B"
            lines.append(f"block {i}: {who}")
            lines += wrap.wrap(" ".join(b.kinds))
        lines.append(f"bytes: {self.bytes_eager} eager, {self.bytes_fused} fused")
        return "\n".join(lines)

    __repr__ = __str__


def _backend(backend):
    """The Fusion class whose stream to read (``Autodiff[Fusion[B]]`` is looked through)."""
    if backend is None:
        from minidl.backends.flex.fusion import FusionFlex

        return FusionFlex
    while not hasattr(backend, "stream"):
        backend = backend.inner_backend()
    return backend


def fusion_plan(index: int = -1, backend: type | None = None) -> FusionPlan:
    """The plan of the ``index``-th most recent execution (``-1``: the last) of ``backend``'s
    stream (default ``Fusion[Flex]``). Pending ops are not executed by asking."""
    cls = _backend(backend)
    if not cls.stream.history:
        raise LookupError(f"{cls.__name__}: the stream has not executed anything yet")
    return FusionPlan(cls.stream.history[index])


def fusion_history(since: int | None = None, backend: type | None = None) -> list[FusionPlan]:
    """The plans of the last executions (up to ``minidl.fusion.stream.HISTORY``), oldest
    first; with ``since``, only those from execution number ``since`` on (take
    ``stream.executions`` before running something)."""
    records = _backend(backend).stream.history
    return [FusionPlan(r) for r in records if since is None or r.index >= since]


# ----- MINIDL_DEBUG stream events ------------------------------------------------------------
def stream_line(event: str, d: dict) -> str | None:
    """The debug line of one stream event (``None``: not shown)."""
    if event == "recorded":
        return f"fusion: recorded {d['operation']!r}"
    if event == "drain":
        return f"fusion: sync ({d['reason']}): {d['ops']} ops to run"
    if event == "plan":
        how = "searched" if d["searched"] else "reused from the store (no search)"
        return f"fusion: plan {how}: {d['ops']} ops in {d['blocks']} blocks"
    if event == "fused":
        return f"fusion: {d['fuser']} fuser took {d['ops']} ops -> {d['kernel']}"
    if event == "kernel":
        how = "generated and written to" if d["created"] else "loaded from"
        return f"fusion: kernel {d['name']} {how} the cache folder"
    if event == "launch":
        return f"fusion: launch {d['name']}{' (parallel)' if d['parallel'] else ''}"
    if event == "operation":
        return f"fusion: {d['operation'].op} runs on {d['backend']} (no fuser took it)"
    if event == "eager":
        return f"fusion: {d['op']} runs on {d['backend']} (not recorded for fusion)"
    return None

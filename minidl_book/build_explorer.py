"""Build exercise of the fusion chapter: burn's scored search,
``explore(ops, alive, fusers, score)``.

minidl's :class:`~minidl.fusion.search.BurnExplorer` (burn-fusion's ``Explorer`` and
``find_best_optimization_index``, ``search/block.rs``) splits a drained stream into blocks:
from the first op not yet placed it offers the ops, one after another, to every fuser until
the fuser refuses one (the fusers handed to the reader apply burn's view rule themselves);
of the ``ready`` fusers (able to build a kernel), the one whose block has the highest
``score(start, end)`` (burn's ``calculate_score``), strictly above 0 and above every fuser
offered before it, gets the block; with none, the op runs alone on ``B``. Then it searches again from the op after
the block, until the stream ends. A block writes the results someone still holds
(``alive``) and those an op after the block reads; the rest stay in registers.

The reader writes that search. The checker installs it in ``Fusion[Flex]`` (a fresh plan
store), drains one stream (an element-wise head whose sum ``u`` is read again four ops later,
a matmul with its epilogue, a ``swap_dims`` no fuser takes, a tail the reduce fuser takes
more of than the element-wise one), then a second (an [n, d] pair, then an op of ``x`` flat:
the reduce fuser, with no reduction yet, takes all three but is not ``ready``), then a third
(``p = exp(x) * x`` held and its row sum: a tie, which the element-wise fuser, offered
first, keeps; the greedy search gives it to the reduce fuser, which took more) and reads the reader's blocks before any runs: they must
cover the stream in order (an op refused is the next block's first, never dropped; the search
restarts after every block), each fused block must be taken whole by its fuser, and each block
must write what is held or read later, and nothing else. Then the blocks must be the search's
(live from ``BurnExplorer``'s own plan), and the values must match eager Flex and PyTorch.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch
from hypothesis import strategies as st

from minidl.fusion.ir import OperationIr
from minidl.fusion.search import VIEWS, BurnExplorer
from minidl_book.build_check import BuildExercise, Reference, Rules
from minidl_book.strategies import float32_arrays

__all__ = ["PLANTED", "Offered", "Score", "beside", "exercise", "explore", "segmentation"]


def explore(ops, alive, fusers, score):
    """The blocks of ``ops``: ``(start, end, fuser or None, ids written)``, in order."""
    blocks, i = [], 0
    while i < len(ops):
        best, best_len, best_score = None, 1, 0  # no fuser: one op runs on B
        for fuser in fusers:
            fuser.reset()
            for op in ops[i:]:
                if not fuser.fuse(op):
                    break
            taken = len(fuser.ops)
            points = score(i, i + taken)
            if fuser.ready and points > best_score:  # a tie: the first stays
                best, best_len, best_score = fuser, taken, points
        end = i + best_len
        later = {t.id for op in ops[end:] for t in op.inputs}
        writes = tuple(op.out.id for op in ops[i:end]
                       if op.out.id in alive or op.out.id in later)
        blocks.append((i, end, best, writes))
        i = end
    return blocks


# ----- planted slips -------------------------------------------------------------------------
def greedy(ops, alive, fusers, score):
    """minidl's shipped ``Explorer``: the fuser that took the most ops wins, score unread."""
    return _search(ops, alive, fusers)


def tie_to_the_last(ops, alive, fusers, score):
    """``>=`` for ``>``: on a tie the fuser offered last wins."""
    blocks, i = [], 0
    while i < len(ops):
        best, best_len, best_score = None, 1, 0
        for fuser in fusers:
            fuser.reset()
            for op in ops[i:]:
                if not fuser.fuse(op):
                    break
            points = score(i, i + len(fuser.ops))
            if fuser.ready and points > 0 and points >= best_score:
                best, best_len, best_score = fuser, len(fuser.ops), points
        end = i + best_len
        later = {t.id for op in ops[end:] for t in op.inputs}
        blocks.append((i, end, best, tuple(op.out.id for op in ops[i:end]
                                           if op.out.id in alive or op.out.id in later)))
        i = end
    return blocks


def _search(ops, alive, fusers, *, drop=False, once=False, first=False, inside=False,
            held_only=False, no_break=False, every=False, no_tail=False, lone=False):
    blocks, i, searched = [], 0, False
    while i < len(ops):
        best, best_len = None, 0 if lone else 1  # lone: best_len 0, one op may win
        for fuser in fusers if not (once and searched) else ():
            fuser.reset()
            for op in ops[i:]:
                if not fuser.fuse(op) and not no_break:
                    break
            if fuser.ready and len(fuser.ops) > best_len and not (first and best):
                best, best_len = fuser, len(fuser.ops)
        searched = searched or best is not None
        end = i + max(best_len, 1)
        readers = ops[end:] if not inside else ops[i + 1:]
        later = {t.id for op in readers for t in op.inputs}
        writes = tuple(op.out.id for op in ops[i:end] if every or op.out.id in alive
                       or (op.out.id in later and not held_only))
        if no_tail and end == len(ops):
            break  # the last block, ended by the stream and not by a refusal, is lost
        blocks.append((i, end, best, writes))
        i = end + (1 if drop and best is not None and end < len(ops) else 0)
    return blocks


def drops_the_refused_op(ops, alive, fusers, score=None):
    """Ends a block at the first op its fuser refuses, and skips that op."""
    return _search(ops, alive, fusers, drop=True)


def searches_once(ops, alive, fusers, score=None):
    """After the first fused block, runs the rest op by op on B: no new search."""
    return _search(ops, alive, fusers, once=True)


def first_fuser_wins(ops, alive, fusers, score=None):
    """Gives the block to the first fuser that takes two ops, not to the one that took most."""
    return _search(ops, alive, fusers, first=True)


def writes_held_only(ops, alive, fusers, score=None):
    """Writes only the held results: ``u``, read by a later block, is never written."""
    return _search(ops, alive, fusers, held_only=True)


def later_includes_the_block(ops, alive, fusers, score=None):
    """Counts reads inside the block as later reads: writes intermediates nobody needs."""
    return _search(ops, alive, fusers, inside=True)


def no_ready_test(ops, alive, fusers, score=None):
    """Gives the block to the fuser that took the most, ready or not: the reduce fuser, which
    took the pair and the flat op but no reduction, cannot build their kernel."""
    blocks, i = [], 0
    while i < len(ops):
        best, best_len = None, 1
        for fuser in fusers:
            fuser.reset()
            for op in ops[i:]:
                if not fuser.fuse(op):
                    break
            if len(fuser.ops) > best_len:
                best, best_len = fuser, len(fuser.ops)
        end = i + best_len
        later = {t.id for op in ops[end:] for t in op.inputs}
        blocks.append((i, end, best, tuple(op.out.id for op in ops[i:end]
                                           if op.out.id in alive or op.out.id in later)))
        i = end
    return blocks


def one_op_block_to_a_fuser(ops, alive, fusers, score=None):
    """Gives a fuser that took one op (the flat ``x * 2`` after the pair) a block of its
    own: a block of one op runs alone on B."""
    return _search(ops, alive, fusers, lone=True)


def writes_everything(ops, alive, fusers, score=None):
    """Writes every result of every block."""
    return _search(ops, alive, fusers, every=True)


def keeps_offering(ops, alive, fusers, score=None):
    """Offers the ops after a refusal too: the block then holds ops its fuser refused."""
    return _search(ops, alive, fusers, no_break=True)


def loses_the_last_block(ops, alive, fusers, score=None):
    """Keeps a block only when a refusal ends it: the block the stream's end closes is lost."""
    return _search(ops, alive, fusers, no_tail=True)


#: name → (wrong search, the verdict kind it must get)
PLANTED = {
    "greedy: the most ops wins": (greedy, "check"),
    "a tie goes to the fuser offered last": (tie_to_the_last, "check"),
    "drops the refused op": (drops_the_refused_op, "check"),
    "searches only once": (searches_once, "check"),
    "the first fuser wins": (first_fuser_wins, "check"),
    "ignores a later reader of an intermediate": (writes_held_only, "check"),
    "counts reads inside the block": (later_includes_the_block, "check"),
    "writes every result": (writes_everything, "check"),
    "no ready test": (no_ready_test, "check"),
    "a one-op block for a fuser": (one_op_block_to_a_fuser, "check"),
    "keeps offering after a refusal": (keeps_offering, "check"),
    "loses the block the stream's end closes": (loses_the_last_block, "check"),
}


# ----- reading the reader's blocks ----------------------------------------------------------
def _name(fuser) -> str | None:
    return fuser if fuser is None or isinstance(fuser, str) else getattr(fuser, "name", fuser)


def _label(ops: list[OperationIr], start: int, end: int) -> str:
    return " ".join(op.kind for op in ops[start:end])


def segmentation(blocks, ops, width: int = 84) -> list[str]:
    """A wrapped line per block: ``"matmul: matmul add tanh → writes t8 (tanh)"``."""
    import textwrap

    kind = {op.out.id: op.kind for op in ops}
    lines = []
    for start, end, fuser, writes in blocks:
        wrote = ", ".join(f"t{w} ({kind.get(w, '?')})" for w in writes) or "nothing"
        text = f"{_name(fuser) or 'on B'}: {_label(ops, start, end)} → writes {wrote}"
        lines.append(textwrap.fill(text, width, subsequent_indent="    "))
    return lines


def _problem(got, ops, alive, fusers) -> str | None:
    """Why the reader's blocks cannot run as a plan, or ``None``."""
    if not isinstance(got, list | tuple) or not all(
            isinstance(b, tuple | list) and len(b) == 4 for b in got):
        return ("return a list of blocks, each a tuple (start, end, fuser, writes); "
                f"got {type(got).__name__}")
    by_name = {f.name: f for f in fusers}
    at = 0
    for k, (start, end, fuser, writes) in enumerate(got):
        if not (type(start) is int and type(end) is int):
            return f"block {k}'s start and end must be ints (op positions), not {start!r}, {end!r}"
        if not isinstance(writes, tuple | list | set | frozenset):
            return f"block {k}'s writes must be a tuple of ids (op.out.id), not {writes!r}"
        if start > at:
            return (f"op {at} ({ops[at].kind}) is in no block: the op a fuser refuses is "
                    "not dropped, it is the first op of the next search")
        if start < at or end <= start:
            return f"block {k} ({start}:{end}) overlaps the block before it or is empty"
        if end > len(ops):
            return f"block {k} ends at {end}, after the stream's {len(ops)} ops"
        if fuser is not None:
            real = by_name.get(_name(fuser))
            if real is None:
                return f"block {k}'s fuser {fuser!r} is none of the fusers given"
            if end - start < 2:
                return (f"block {k} ({_label(ops, start, end)}) is one op given to the "
                        f"{real.name} fuser: a block of one op runs alone on B (fuser "
                        "None); a fuser wins a block only with at least two ops")
            real.reset()
            for j in range(start, end):
                if not real.fuse(ops[j]):
                    return (f"block {k} ({_label(ops, start, end)}) holds op {j} "
                            f"({ops[j].kind}), which the {real.name} fuser refuses: a block "
                            "ends at its fuser's first refusal")
            if not real.ready:
                return (f"the {real.name} fuser is not ready for block {k} "
                        f"({_label(ops, start, end)}): it can build no kernel of it; only a "
                        "ready fuser may win a block")
        at = end
    if at < len(ops):
        return (f"ops {at}..{len(ops) - 1} ({_label(ops, at, len(ops))}) are in no block: "
                "search again from the op after each block, until the stream ends")
    for k, (start, end, _, writes) in enumerate(got):
        ids = {op.out.id for op in ops[start:end]}
        later = {t.id: j for j in range(len(ops) - 1, end - 1, -1) for t in ops[j].inputs}
        for op in ops[start:end]:
            t = op.out.id
            if t in later and t not in writes:
                j = later[t]
                return (f"op {j} ({ops[j].kind}) reads t{t}, which block {k} computes "
                        f"({op.kind}) but does not write: a later block reads it from memory")
            if t in alive and t not in writes:
                return f"t{t} ({op.kind}) is held, yet block {k} does not write it"
        for t in writes:
            if t not in ids:
                return (f"block {k} writes t{t}, which none of its ops computes (writes "
                        "holds ids, op.out.id, not positions)")
            if t not in alive and t not in later:
                inside = " (only an op of the same block reads it)" if any(
                    t in (i.id for i in op.inputs) for op in ops[start:end]) else ""
                return (f"block {k} writes t{t}, which nobody holds and no op after the "
                        f"block reads{inside}: it stays in registers")
    return None


def _differs(got, want, ops) -> str | None:
    """Where the reader's valid blocks part from the search's, in words."""
    for (start, end, fuser, _), (_, w_end, w_fuser, _) in zip(got, want, strict=False):
        if (end, _name(fuser)) == (w_end, _name(w_fuser)):
            continue
        yours = f"{_name(fuser) or 'on B'}: {_label(ops, start, end)}"
        search = f"{_name(w_fuser) or 'on B'}: {_label(ops, start, w_end)}"
        why = ""
        if w_fuser is not None and (fuser is None or end - start < w_end - start):
            why = (f"\n  the {_name(w_fuser)} fuser takes {w_end - start} ops from op "
                   f"{start}: offer the ops to every fuser at every block, and give the "
                   "block to the ready one with the highest score")
        elif fuser is not None and w_fuser is not None:
            why = ("\n  more ops is not a better block: give it to the highest "
                   "score(start, end), and on a tie keep the fuser offered first")
        return (f"From op {start} your block is\n    {yours}\n  and the search's is\n"
                f"    {search}{why}")
    return None


# ----- the checker ---------------------------------------------------------------------------
def _stream(dev, case: dict) -> dict:
    """``u = x*s + b`` (read again after the matmul), ``h = tanh(exp(u) @ w + b)``,
    ``r = (hᵀ - u) * s``, ``y = sqrt(sum(r*r, 1))``; only ``y`` is held at the read."""
    from minidl import Tensor

    x, w, b = (Tensor.from_numpy(case[k], dev) for k in ("x", "w", "b"))
    s = case["s"]
    u = x * s + b
    h = (u.exp().matmul(w) + b).tanh()
    r = (h.swap_dims(0, 1) - u) * s
    y = (r * r).sum_dim(1).sqrt()
    del u, h, r
    out = {"y": y.to_numpy()}
    k = (x * s).exp()  # a second drain: an [n, d] pair, then an op of x flat, [n * d],
    flat = Tensor.from_numpy(case["x"].reshape(-1), dev) * 2.0  # a shape the pair's
    out = {**out, "k": k.to_numpy(), "flat": flat.to_numpy()}  # block cannot hold
    p = x.exp() * x  # a third: p held, then its row sum, a tie of scores
    return {**out, "q": p.sum_dim(1).to_numpy(), "p": p.to_numpy()}


def _torch(case: dict) -> dict:
    x, w, b = (torch.from_numpy(case[k]) for k in ("x", "w", "b"))
    u = x * case["s"] + b
    r = (torch.tanh(u.exp() @ w + b).T - u) * case["s"]
    p = x.exp() * x
    return {"y": (r * r).sum(1, keepdim=True).sqrt(), "k": (x * case["s"]).exp(),
            "flat": x.reshape(-1) * 2.0, "q": p.sum(1, keepdim=True), "p": p}


def _eager_flex(case: dict) -> dict:
    from minidl import Device

    return _stream(Device.flex(), case)


class Offered:
    """A fuser as the reader's search is handed it: ``reset``, ``fuse``, ``ops`` and
    ``name`` are the fuser's own; ``ready`` says only whether it could build a kernel of
    what it took (one op is enough). That a block needs two ops is the search's rule, as in
    minidl's ``Explorer.explore``, whose fusers fold it into their ``ready``."""

    def __init__(self, fuser) -> None:
        self.fuser, self.name = fuser, fuser.name
        self._read: set[int] = set()
        self._made: set[int] = set()

    def reset(self) -> None:
        self.fuser.reset()
        self._read, self._made = set(), set()

    def fuse(self, op: OperationIr) -> bool:
        """The fuser's answer, after burn's view rule (as ``BurnExplorer`` applies it): a
        view is taken only of a tensor the block already reads, never lowering the rank."""
        if op.kind in VIEWS and (op.inputs[0].id not in self._read
                                 or len(op.out.shape) < len(op.inputs[0].shape)):
            return False
        if not self.fuser.fuse(op):
            return False
        self._read.update(t.id for t in op.inputs if t.id not in self._made)
        self._made.add(op.out.id)
        return True

    @property
    def ops(self) -> list[OperationIr]:
        return self.fuser.ops

    @property
    def ready(self) -> bool:
        if len(self.fuser.ops) != 1:
            return self.fuser.ready
        return getattr(self.fuser, "full", True) is not None  # a reduction took its dim


class Score:
    """``score(start, end)``: burn's score of ``ops[start:end]`` as one block
    (``BurnExplorer.score``, burn-cubecl-fusion ``calculate_score``), as the reader's search
    is handed it."""

    def __init__(self, ops: list[OperationIr], alive: set[int]) -> None:
        self.ops, self.alive = list(ops), set(alive)
        self.last_read = {t.id: j for j, op in enumerate(ops) for t in op.inputs}

    def __call__(self, start: int, end: int) -> int:
        return BurnExplorer.score(self.ops, start, end, self.alive, self.last_read)


def installed(solution, explorer, seen: list, held=None):
    """An ``explore(ops, alive)`` for ``explorer`` that asks ``solution`` for the blocks,
    notes ``(ops, alive, its blocks, the search's, problem)`` in ``seen``, and builds the
    reader's blocks (the search's when the reader's cannot run). ``held(ops)``, when given,
    replaces ``alive`` (the checker's trace keeps every tensor of a run alive)."""
    from minidl.fusion.plan import Block

    def explore_with(ops: list[OperationIr], alive: set[int]) -> list[Block]:
        alive = set(alive) if held is None else held(ops)
        want = [(b.start, b.end, b.fuser, b.writes)  # live: BurnExplorer's own plan
                for b in BurnExplorer(explorer.generator).explore(list(ops), set(alive))]
        score = Score(ops, alive)
        got = solution(list(ops), set(alive), [Offered(f) for f in explorer.fusers], score)
        problem = _problem(got, ops, alive, explorer.fusers)
        seen.append((ops, alive, got, want, problem))
        blocks = []
        for start, end, fuser, writes in (want if problem else got):
            if fuser is None:
                blocks.append(Block(start, end, writes=tuple(writes)))
                continue
            real = next(f for f in explorer.fusers if f.name == _name(fuser))
            real.reset()
            for op in ops[start:end]:
                real.fuse(op)
            rel = [j for j, op in enumerate(ops[start:end]) if op.out.id in writes]
            kernel = real.finish(ops[start:end], rel, explorer.generator)
            blocks.append(Block(start, end, real.name, kernel, tuple(writes)))
        return blocks

    return explore_with


def run_with(solution, fn, held=None):
    """``fn()`` on ``Fusion[Flex]`` with ``solution`` as the explorer's search, every op
    recorded, a fresh plan store (all put back after); returns ``(fn's result, seen)``."""
    from minidl.backends.flex.fusion import FusionFlex
    from minidl.fusion.plan import ExecutionPlanStore

    stream = FusionFlex.stream
    FusionFlex.sync()
    processor = stream.processor
    explorer, store = processor.explorer, processor.store
    seen: list = []
    explorer.explore = installed(solution, explorer, seen, held)
    processor.store = ExecutionPlanStore()
    try:
        with stream.recording_every_op():
            out = fn()
    finally:
        del explorer.explore
        processor.store = store
    return out, seen


def _sinks(ops: list[OperationIr]) -> set[int]:
    """What :func:`_stream` holds at each read: the results no op of the drain reads, and
    ``p`` in the third drain (``exp``, ``mul``, ``sum_dim``)."""
    sinks = {op.out.id for op in ops} - {t.id for op in ops for t in op.inputs}
    if [op.kind for op in ops] == ["exp", "mul", "sum_dim"]:
        sinks.add(ops[1].out.id)
    return sinks


def _run(solution, case: dict) -> dict:
    from minidl import Device

    out, seen = run_with(solution, lambda: _stream(Device.fusion(), case),
                         held=_sinks)
    return {**out, "_seen": seen}


def _blocks_run(solution, case, outputs, trace) -> str | None:
    for ops, alive, got, want, problem in outputs["_seen"]:
        if problem is None:
            problem = _differs(got, want, ops)
        if problem:
            # the reader's own blocks, never the search's: those would hand over the answer
            try:
                yours = "\n".join(f"    {line}" for line in segmentation(got, ops))
            except (TypeError, ValueError, KeyError, IndexError, AttributeError):
                yours = ""  # blocks that cannot be listed: the problem says why
            text = (f"Rule broken: {problem}.\n  The stream: "
                    f"{' '.join(f'{j}:{op.kind}' for j, op in enumerate(ops))}\n"
                    f"  held at the read: "
                    f"{', '.join(f't{t}' for t in sorted(alive)) or 'nothing'}")
            return text + (f"\n  Your blocks:\n{yours}" if yours else "")
    return None


def _fixed_case() -> dict:
    rng = np.random.default_rng(0)
    x, w, b = (rng.normal(size=s).astype(np.float32) for s in ((3, 3), (3, 3), (1, 3)))
    return {"x": x, "w": w, "b": b, "s": 0.5}


def _cases() -> st.SearchStrategy:
    arrays = float32_arrays(1)

    def case(d, s):
        return st.fixed_dictionaries({"x": arrays(d, d), "w": arrays(d, d),
                                      "b": arrays(1, d), "s": st.just(s)})

    dims = st.tuples(st.integers(2, 5), st.sampled_from([0.5, -1.5]))
    return dims.flatmap(lambda d: case(*d))


def exercise(max_examples: int = 4) -> BuildExercise:
    """The checker for the reader's ``explore(ops, alive, fusers)``."""
    return BuildExercise(
        "burn's scored search",
        cases=_cases(),
        run=_run,
        rules=Rules(helpers=(Offered.reset, Offered.fuse, Offered.ops.fget,
                             Offered.ready.fget, Score.__call__)),  # what the search is handed
        references=[Reference("eager Flex", _eager_flex, rtol=1e-4, atol=1e-5),
                    Reference("PyTorch", _torch, rtol=1e-4, atol=1e-5)],
        checks=[_blocks_run],
        hints=[
            "Three loops: blocks until the stream ends; fusers at each block; ops until "
            "the fuser refuses one (fuser.reset(), fuser.fuse(op), fuser.ready, fuser.ops).",
            ("check", "The op a fuser refuses ends the block before it and opens the next "
             "search; none is skipped, and the search starts again after every block."),
            ("check", "Every fuser is offered the same ops; of the ready ones, the highest "
             "score(start, end) above 0 gets the block, and a tie stays with the first."),
            ("check", "A block writes a result that is in alive or that an op after the "
             "block's end reads; a read inside the block stays in registers."),
        ],
        reference_solution=explore,
        examples=[_fixed_case()],
        max_examples=max_examples,
        order=("x", "w", "b", "s"),
    )


def beside(solution) -> str:
    """The greedy example of the chapter, ``(t.exp() * t).sum_dim(1)`` after the bytes
    chain, segmented by ``solution`` (the book's search until it passes) and by
    ``BurnExplorer``, one line per block."""
    from minidl import Device, Tensor
    from minidl_book import fusion_sweep

    if solution is Ellipsis or exercise(2).find_failure(solution) is not None:
        solution, whose = explore, "the book's search (yours does not pass yet)"
    else:
        whose = "your search"
    big = np.random.default_rng(1).standard_normal(1 << 12).astype(np.float32)

    def chain():
        t = fusion_sweep.chain(Tensor.from_numpy(big, Device.fusion())).reshape((64, 64))
        return (t.exp() * t).sum_dim(1).to_numpy()

    mine, seen = run_with(solution, chain)
    ops, alive, got, want, _ = seen[-1]
    theirs = [(b.start, b.end, b.fuser, b.writes) for b in _minidl_blocks(ops, alive)]
    assert np.allclose(mine, chain())
    beside.last = "\n".join([f"{whose}:", *segmentation(got, ops),
                             "BurnExplorer.explore:", *segmentation(theirs, ops)])
    return beside.last


def _minidl_blocks(ops, alive) -> Any:
    from minidl.backends.flex.fusion import FusionFlex

    return BurnExplorer(FusionFlex.stream.processor.explorer.generator).explore(ops, alive)

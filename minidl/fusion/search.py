"""The search: split a recorded segment into blocks (burn-fusion's ``search`` module and
``stream/execution/explorer.rs``).

From the first op not yet placed, every fuser is offered the ops one after another until it
refuses; the fuser that took the most ops (and can build a kernel from them) gets the block.
An op that no fuser takes, or that would be a block of one, runs alone on ``B`` (burn's
``ExecutionStrategy::Operations``). Blocks are consecutive ops of the stream: an op no fuser
takes closes the block before it. A block none of whose results is needed (nobody holds
them, no later op reads them) is kept in the plan but not run.
"""

from __future__ import annotations

from minidl.fusion.events import STREAM_LISTENERS, emit
from minidl.fusion.fusers import OperationFuser, default_fusers
from minidl.fusion.ir import REDUCE, OperationIr
from minidl.fusion.kernel import BlockValues, KernelGenerator
from minidl.fusion.plan import Block


class Explorer:
    """Builds the blocks of a plan with a set of fusers (burn's ``Explorer`` + ``StreamOptimizer``);
    ``generator`` (the inner backend's) writes the kernel of each fused block."""

    def __init__(self, generator: KernelGenerator):
        self.generator = generator
        self.fusers = default_fusers(generator.fusers, generator.reduces_across_rows,
                                     generator.max_loop)

    def explore(self, ops: list[OperationIr], alive: set[int]) -> list[Block]:
        """The blocks of ``ops``; ``alive`` holds the ids of the results someone still holds."""
        blocks: list[Block] = []
        i = 0
        while i < len(ops):
            best, best_len = None, 1
            for fuser in self.fusers:
                fuser.reset()
                for op in ops[i:]:
                    if not fuser.fuse(op):
                        break
                if fuser.ready and len(fuser.ops) > best_len:
                    best, best_len = fuser, len(fuser.ops)
            if best is not None and self.generator.max_operands is not None:
                best_len = self._within_operands(best, ops, i, best_len, alive)
                best = best if best_len >= 2 else None
            if best is None:
                later = {t.id for op in ops[i + 1:] for t in op.inputs}
                out = ops[i].out.id
                blocks.append(Block(i, i + 1, writes=(out,) if out in alive or out in later else ()))
                i += 1
                continue
            end = i + best_len
            later = {t.id for op in ops[end:] for t in op.inputs}
            writes = [j for j, op in enumerate(ops[i:end]) if op.out.id in alive or op.out.id in later]
            kernel = best.finish(ops[i:end], writes, self.generator)
            blocks.append(Block(i, end, best.name, kernel, tuple(ops[i + j].out.id for j in writes)))
            if STREAM_LISTENERS:
                emit("fused", fuser=best.name, ops=best_len, kernel=kernel.name)
            i = end
        return blocks

    def _operands(self, ops: list[OperationIr], start: int, end: int, alive: set[int]) -> int:
        """The buffers the kernel of ``ops[start:end]`` binds: its inputs and the results it writes."""
        later = {t.id for op in ops[end:] for t in op.inputs}
        block = ops[start:end]
        writes = sum(op.out.id in alive or op.out.id in later for op in block)
        return len(BlockValues(block).ext) + writes

    def _within_operands(self, fuser, ops: list[OperationIr], start: int, length: int, alive: set[int]) -> int:
        """The longest block from ``start`` (at most ``length`` ops) that ``fuser`` takes and whose
        kernel binds no more buffers than the generator's ``max_operands`` (a GPU shader stage
        has a limit: 32 storage buffers on lavapipe); 1 when none does."""
        limit = self.generator.max_operands
        if self._operands(ops, start, start + length, alive) <= limit:
            return length
        for shorter in range(length - 1, 1, -1):
            fuser.reset()
            taken = all(fuser.fuse(op) for op in ops[start:start + shorter])
            if taken and fuser.ready and self._operands(ops, start, start + shorter, alive) <= limit:
                return shorter
        return 1


class ScoringExplorer(Explorer):
    """Another policy: the plan that moves the fewest bytes, found by scoring every candidate
    block (each fuser, cut after each op it can end on) by the memory traffic of the whole
    plan it starts. ``Explorer`` keeps the fuser that took the most ops from each start;
    burn ranks the fusers of a block by a score of the reads and writes they save
    (``find_best_optimization_index``, burn-fusion ``search/block.rs``) but does not try cuts.

    The search is dynamic programming from the end of the segment (quadratic in its length,
    so a lab policy, not the shipped one): ``best[i]`` is the cheapest plan of ``ops[i:]``.
    """

    def explore(self, ops: list[OperationIr], alive: set[int]) -> list[Block]:
        n = len(ops)
        last_read: dict[int, int] = {}
        for j, op in enumerate(ops):
            for t in op.inputs:
                last_read[t.id] = j

        def written(start: int, end: int) -> list[int]:
            return [j for j, op in enumerate(ops[start:end])
                    if op.out.id in alive or last_read.get(op.out.id, -1) >= end]

        def traffic(start: int, end: int) -> int:
            block = ops[start:end]
            reads = sum(t.nbytes for t in BlockValues(block).ext)
            return reads + sum(block[j].out.nbytes for j in written(start, end))

        # best[i] = (bytes, blocks, the first block's fuser or None, its end)
        best: list[tuple[int, int, OperationFuser | None, int]] = [(0, 0, None, n)] * (n + 1)
        for i in range(n - 1, -1, -1):
            rest = best[i + 1]
            choice = (traffic(i, i + 1) + rest[0], rest[1] + 1, None, i + 1)
            for fuser in self.fusers:
                fuser.reset()
                for end in range(i + 1, n + 1):
                    if not fuser.fuse(ops[end - 1]):
                        break
                    limit = self.generator.max_operands
                    if not fuser.ready or (limit is not None and self._operands(ops, i, end, alive) > limit):
                        continue
                    cost, count = traffic(i, end) + best[end][0], best[end][1] + 1
                    if (cost, count) < choice[:2]:
                        choice = (cost, count, fuser, end)
            best[i] = choice
        blocks: list[Block] = []
        i = 0
        while i < n:
            _, _, fuser, end = best[i]
            writes = written(i, end)
            if fuser is None:
                blocks.append(Block(i, end, writes=tuple(ops[i + j].out.id for j in writes)))
            else:
                fuser.reset()
                for op in ops[i:end]:
                    fuser.fuse(op)
                kernel = fuser.finish(ops[i:end], writes, self.generator)
                blocks.append(Block(i, end, fuser.name, kernel, tuple(ops[i + j].out.id for j in writes)))
            i = end
        return blocks


#: burn's weights (burn-cubecl-fusion ``engine/scoring.rs``, ``calculate_score``, v0.22.0-pre.2)
FACTOR_IO, FACTOR_LAUNCH, FACTOR_PENALTY = 100, 10, 50
#: the ops a fuser builds its kernel around; burn does not register them with its ``Scoring``
#: (``MatmulFuser``: "Matmul operation isn't registered"; ``ReduceFuser::on_reduce``)
ANCHORS = {"matmul", *REDUCE}
VIEWS = {"reshape", "swap_dims"}


def burn_score(reads: int, writes: int, ops: int, reads_fused: int, writes_fused: int,
               views: int) -> int:
    """burn's ``calculate_score``: 100 per tensor read or write the fused kernel saves over
    its ``ops`` run one by one (``reads`` + ``writes`` of them), + 10 per launch saved, - 50
    per view it reads through (a view read counts in ``reads_fused`` too); never below 0."""
    io = max(reads + writes - reads_fused - writes_fused, 0) * FACTOR_IO
    launch = max(ops - 1, 0) * FACTOR_LAUNCH
    return max(io + launch - views * FACTOR_PENALTY, 0)


class BurnExplorer(Explorer):
    """burn's choice among fusers, on minidl's fusers: from each start every fuser is offered
    the ops until it refuses, and the ready fuser with the highest :func:`burn_score` wins
    (``find_best_optimization_index``, burn-fusion ``search/block.rs``: strictly higher, so a
    score of 0 never wins and a tie goes to the first). burn's view rule is added to every
    fuser: a view is fused only of a tensor the block already reads from memory (never of
    a result the block computes: ``input_reshaped``'s "already fused" refusal), and a
    reshape only if it keeps or raises the rank (``engine/fuser.rs``, ``trace/block.rs``
    ``input_reshaped``). Blocks stay consecutive ops, as in :class:`Explorer`; burn may also
    gather ops that are not neighbours. ``choices`` keeps, per block start, each fuser's
    (ops taken, ready, score)."""

    def explore(self, ops: list[OperationIr], alive: set[int]) -> list[Block]:
        last_read: dict[int, int] = {}
        for j, op in enumerate(ops):
            for t in op.inputs:
                last_read[t.id] = j
        self.choices: list[tuple[int, dict[str, tuple[int, bool, int]]]] = []
        blocks: list[Block] = []
        i = 0
        while i < len(ops):
            best, best_len, best_score, seen = None, 1, 0, {}
            for fuser in self.fusers:
                fuser.reset()
                read: set[int] = set()  # the block's inputs read from memory
                made: set[int] = set()  # the block's own results: never viewed
                for op in ops[i:]:
                    if op.kind in VIEWS and (op.inputs[0].id not in read or
                                             len(op.out.shape) < len(op.inputs[0].shape)):
                        break
                    if not fuser.fuse(op):
                        break
                    read.update(t.id for t in op.inputs if t.id not in made)
                    made.add(op.out.id)
                taken = len(fuser.ops)
                score = self.score(ops, i, i + taken, alive, last_read)
                seen[fuser.name] = (taken, fuser.ready, score)
                if fuser.ready and score > best_score:
                    best, best_len, best_score = fuser, taken, score
            self.choices.append((i, seen))
            end = i + best_len
            writes = [j for j, op in enumerate(ops[i:end])
                      if op.out.id in alive or last_read.get(op.out.id, -1) >= end]
            if best is None:
                blocks.append(Block(i, end, writes=tuple(ops[i + j].out.id for j in writes)))
            else:
                best.reset()
                for op in ops[i:end]:
                    best.fuse(op)
                kernel = best.finish(ops[i:end], writes, self.generator)
                blocks.append(Block(i, end, best.name, kernel,
                                    tuple(ops[i + j].out.id for j in writes)))
            i = end
        return blocks

    @staticmethod
    def score(ops: list[OperationIr], start: int, end: int, alive: set[int],
              last_read: dict[int, int]) -> int:
        """:func:`burn_score` of the block ``ops[start:end]``, counted in tensors as burn's
        ``Scoring`` counts them: its ops but the anchor (matmul, reduction), each op's inputs
        and output run alone; fused, the tensors read from memory (a view: one more read and a
        penalty) and the results held or read after the block."""
        block = [op for op in ops[start:end] if op.kind not in ANCHORS]
        produced = {op.out.id for op in ops[start:end]}
        external = {t.id for op in block for t in op.inputs if t.id not in produced}
        views = sum(op.kind in VIEWS for op in block)
        written = sum(op.out.id in alive or last_read.get(op.out.id, -1) >= end for op in block)
        return burn_score(sum(len(op.inputs) for op in block), len(block), len(block),
                          len(external) + views, written, views)

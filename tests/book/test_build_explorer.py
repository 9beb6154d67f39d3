"""The fusion chapter's build exercise (burn's scored search run through
Fusion[Flex]): the reference search passes, each planted slip gets its verdict and a message
that names it, the real explorer is put back after, and a solution typed into a notebook
cell (a function of ``__main__``) is checked like any other."""

from __future__ import annotations

import numpy as np
import pytest

from minidl.backends.flex.fusion import FusionFlex
from minidl_book import build_explorer

SAYS = {
    "drops the refused op": "is not dropped, it is the first op of the next search",
    "searches only once": "offer the ops to every fuser at every block",
    "the first fuser wins": "give the block to the ready one with the highest score",
    "greedy: the most ops wins": "more ops is not a better block",
    "a tie goes to the fuser offered last": "on a tie keep the fuser offered first",
    "ignores a later reader of an intermediate": "but does not write: a later block reads",
    "counts reads inside the block": "(only an op of the same block reads it)",
    "writes every result": "which nobody holds and no op after the block reads",
    "no ready test": "the reduce fuser is not ready for block",
    "a one-op block for a fuser": "a block of one op runs alone on B (fuser None)",
    "keeps offering after a refusal": "a block ends at its fuser's first refusal",
    "loses the block the stream's end closes": "are in no block: search again from the op "
    "after each block, until the stream ends",
}


def test_reference_search_passes_and_the_explorer_is_restored():
    processor = FusionFlex.stream.processor
    explorer, store = processor.explorer, processor.store
    assert build_explorer.exercise(max_examples=3).find_failure(build_explorer.explore) is None
    assert processor.explorer is explorer and processor.store is store
    assert "explore" not in vars(explorer)


@pytest.mark.parametrize("planted", sorted(build_explorer.PLANTED))
def test_planted_slip_gets_its_verdict(planted):
    wrong, kind = build_explorer.PLANTED[planted]
    verdict = build_explorer.exercise(max_examples=2).find_failure(wrong)
    assert verdict is not None and verdict.kind == kind, verdict
    assert "Traceback" not in verdict.render()
    assert SAYS[planted] in verdict.text, verdict.text


def test_a_solution_typed_into_a_notebook_cell():
    source = '''
def my_explore(ops, alive, fusers, score):
    blocks, start = [], 0
    while start < len(ops):
        candidates = []
        for rank, fuser in enumerate(fusers):
            fuser.reset()
            for op in ops[start:]:
                if not fuser.fuse(op):
                    break
            n = len(fuser.ops)
            if fuser.ready and score(start, start + n) > 0:
                candidates.append((-score(start, start + n), rank, n, fuser))
        winner, taken = None, 1
        if candidates:
            _, _, taken, winner = min(candidates, key=lambda c: c[:2])
        end = start + taken
        read_after = {t.id for op in ops[end:] for t in op.inputs}
        writes = tuple(op.out.id for op in ops[start:end]
                       if op.out.id in alive or op.out.id in read_after)
        blocks.append((start, end, winner and winner.name, writes))
        start = end
    return blocks
'''
    namespace = {"__name__": "__main__"}
    exec(compile(source, "<ipython-input-7-explore>", "exec"), namespace)
    verdict = build_explorer.exercise(max_examples=2).find_failure(namespace["my_explore"])
    assert verdict is None, verdict.render()


def test_beside_shows_both_segmentations():
    text = build_explorer.beside(build_explorer.explore)
    assert text.startswith("your search:") and "BurnExplorer.explore:" in text
    ours, theirs = text.split("BurnExplorer.explore:")
    assert ours.split("\n", 1)[1].strip() == theirs.strip()


def test_a_refusal_lists_the_readers_blocks_not_the_answer():
    """A verdict that printed the search's own blocks under "The search's blocks:" handed
    the reader the answer (a reader took it for their output): it lists theirs."""
    wrong, _ = build_explorer.PLANTED["ignores a later reader of an intermediate"]
    verdict = build_explorer.exercise(max_examples=2).find_failure(wrong)
    assert verdict is not None and "Your blocks:" in verdict.text, verdict.text
    assert "search's blocks" not in verdict.text


def test_a_one_op_block_given_to_a_fuser_is_refused():
    """A reader's search that starts its best at 0 ops gives a fuser that took only the
    last op a block: the checker passed it, though the question says one op runs on B."""
    wrong, _ = build_explorer.PLANTED["a one-op block for a fuser"]
    verdict = build_explorer.exercise(max_examples=2).find_failure(wrong)
    assert verdict is not None and "at least two ops" in verdict.text, verdict.text


def test_the_truth_is_burns_plan_not_the_books_reference():
    """The verdict compares with BurnExplorer's live plan: the tie drain (p held, then its
    sum) is element-wise 2 | B 1 there, which the greedy search (reduce 3) is not."""
    from minidl import Device, Tensor

    x = Tensor.from_numpy(np.ones((3, 3), np.float32), Device.fusion())

    def tie():
        p = x.exp() * x
        return p.sum_dim(1).to_numpy(), p

    _, seen = build_explorer.run_with(build_explorer.explore, tie,
                                      held=build_explorer._sinks)
    ops, _, got, want, problem = seen[-1]
    assert problem is None and [(s, e, f) for s, e, f, _ in want] == [
        (0, 2, "elementwise"), (2, 3, None)]
    assert [(s, e, getattr(f, "name", f)) for s, e, f, _ in got] == [
        (0, 2, "elementwise"), (2, 3, None)]

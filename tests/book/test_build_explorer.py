"""The fusion chapter's build exercise (the explorer's greedy search run through
Fusion[Flex]): the reference search passes, each planted slip gets its verdict and a message
that names it, the real explorer is put back after, and a solution typed into a notebook
cell (a function of ``__main__``) is checked like any other."""

from __future__ import annotations

import pytest

from minidl.backends.flex.fusion import FusionFlex
from minidl_book import build_explorer

SAYS = {
    "drops the refused op": "is not dropped, it is the first op of the next search",
    "searches only once": "offer the ops to every fuser at every block",
    "the first fuser wins": "give the block to the one that took the most",
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
def my_explore(ops, alive, fusers):
    blocks, start = [], 0
    while start < len(ops):
        winner, taken = None, 1
        for fuser in fusers:
            fuser.reset()
            for op in ops[start:]:
                if not fuser.fuse(op):
                    break
            if fuser.ready and len(fuser.ops) > taken:
                winner, taken = fuser, len(fuser.ops)
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
    assert build_explorer.exercise(max_examples=2).find_failure(namespace["my_explore"]) is None


def test_beside_shows_both_segmentations():
    text = build_explorer.beside(build_explorer.explore)
    assert text.startswith("your search:") and "minidl's Explorer.explore:" in text
    ours, theirs = text.split("minidl's Explorer.explore:")
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

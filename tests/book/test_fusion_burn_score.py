"""``burn_score`` (burn-cubecl-fusion ``engine/scoring.rs``'s ``calculate_score`` at
v0.22.0-pre.2) on hand-computed cases, burn's own unit tests among them, and
``BurnExplorer`` (burn's choice: the ready fuser with the highest score) on the fusion
chapter's greedy example: it ends the element-wise block at the reshape, runs the reshape
alone (a view) and gives ``exp``, ``*`` and the sum to the reduce fuser, 410 against 310."""

from __future__ import annotations

import numpy as np

from minidl import Device, Tensor, debug
from minidl.fusion.search import BurnExplorer, Explorer, burn_score
from minidl_book import fusion_lab, fusion_sweep


def test_burn_score_matches_burns_unit_tests():
    # scoring.rs tests: 2 reads, 2 writes, 2 ops unfused
    assert burn_score(2, 2, 2, 1, 1, 0) == 210  # test_scoring_io_savings
    assert burn_score(2, 2, 2, 1, 1, 1) == 160  # test_scoring_with_penalties
    assert burn_score(1, 1, 2, 1, 1, 1) == 0  # test_penalty_outweighs_benefit
    assert burn_score(0, 0, 0, 0, 0, 0) == 0  # test_scoring_no_ops


def test_burn_score_by_hand():
    # (x * 2).exp(), only the result kept: 2 reads + 2 writes alone; fused 1 read, 1 write
    assert burn_score(2, 2, 2, 1, 1, 0) == 2 * 100 + 10
    # one op alone saves nothing: a score of 0, which never wins
    assert burn_score(1, 1, 1, 1, 1, 0) == 0
    # fused moving more than unfused: no IO credit, launches still count
    assert burn_score(2, 2, 3, 3, 2, 0) == 20


def _tensor(shape) -> Tensor:
    data = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    return Tensor.from_numpy(data, Device.fusion())


def test_burn_explorer_on_the_greedy_example():
    x = _tensor(1 << 16)

    def example():
        t = fusion_sweep.chain(x).reshape((256, 256))
        return (t.exp() * t).sum_dim(1).to_numpy()

    with fusion_lab.explorer(Explorer):
        want = example()
    with fusion_lab.explorer(BurnExplorer) as stream:
        got = example()
        plan = debug.fusion_plan()
        choices = dict(stream.processor.explorer.choices)
    assert fusion_lab.split(plan) == "elementwise 9 | B 1 | reduce 3"
    # 9 ops: 11 tensor reads + 9 writes alone; fused: x read, the chain's result written
    assert choices[0]["elementwise"] == (9, True, 18 * 100 + 8 * 10)
    assert choices[0]["reduce"][1] is False  # no reduction before the reshape
    assert choices[9]["elementwise"][0] == 0  # a reshape of a value not yet read
    # exp, mul: 3 reads + 2 writes alone; element-wise writes the product (the sum reads
    # it), the reduce fuser keeps it in registers; the sum itself is not scored
    assert choices[10]["elementwise"] == (2, True, 3 * 100 + 10)
    assert choices[10]["reduce"] == (3, True, 4 * 100 + 10)
    assert fusion_lab.written_bytes(plan) == x.numel() * 4 + 256 * 4  # the reshape: a view
    np.testing.assert_allclose(got, want, rtol=1e-5)


def test_burn_explorer_never_views_a_result_of_its_own_block():
    # burn's input_reshaped refuses a view of a tensor the block computes ("Can't fuse an
    # already fused input"), even one an earlier op of the block has read
    x = _tensor(1 << 16)

    def example():
        t = x * 2.0
        u = t + 1.0  # reads t inside the block
        v = t.reshape((256, 256)).exp()  # a view of t: the block must end before it
        return v.sum_dim(1).to_numpy(), u.to_numpy()

    with fusion_lab.explorer(Explorer):
        want = example()
    with fusion_lab.explorer(BurnExplorer) as stream:
        got = example()
        choices = dict(stream.processor.explorer.choices)
    assert choices[0]["elementwise"][0] == 2  # t and u; not the reshape of t
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-5)

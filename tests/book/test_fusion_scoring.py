"""The fusion chapter's second search, ``ScoringExplorer`` (the plan that moves the fewest
bytes), and the lab helpers that run it: on the chapter's greedy example it ends the
element-wise block at the reshape and gives ``exp``, ``*`` and the sum to the reduce fuser,
writing 4 MiB less with the same values; where the greedy plan is already the cheapest it
finds the same blocks; the processor's explorer and plan store come back afterwards."""

from __future__ import annotations

import numpy as np

from minidl import Device, Tensor, debug
from minidl.backends.flex.fusion import FusionFlex
from minidl.fusion.search import Explorer, ScoringExplorer
from minidl_book import fusion_lab, fusion_sweep


def _tensor(shape) -> Tensor:
    data = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    return Tensor.from_numpy(data, Device.fusion())


def _greedy_example(x: Tensor):
    t = fusion_sweep.chain(x).reshape((256, 256))
    return (t.exp() * t).sum_dim(1).to_numpy()


def _plan_of(cls, fn):
    with fusion_lab.explorer(cls):
        out = fn()
        return out, debug.fusion_plan()


def test_scored_plan_moves_the_product_out_of_memory():
    x = _tensor(1 << 16)
    greedy_out, greedy = _plan_of(Explorer, lambda: _greedy_example(x))
    scored_out, scored = _plan_of(ScoringExplorer, lambda: _greedy_example(x))
    assert fusion_lab.split(greedy) == "elementwise 12 | B 1"
    assert fusion_lab.split(scored) == "elementwise 10 | reduce 3"
    assert scored.blocks[1].kinds == ["exp", "mul", "sum_dim"]
    written = [sum(b.bytes_written for b in p.blocks) for p in (greedy, scored)]
    assert written[0] - written[1] == x.numel() * 4  # the product, written no more
    np.testing.assert_allclose(scored_out, greedy_out, rtol=1e-5)


def test_scored_plan_equals_greedy_where_greedy_is_cheapest():
    x = _tensor((64, 64))

    def chain():
        return ((x * 2.0 + 1.0).exp() - x).to_numpy()

    _, greedy = _plan_of(Explorer, chain)
    _, scored = _plan_of(ScoringExplorer, chain)
    assert fusion_lab.split(scored) == fusion_lab.split(greedy) == "elementwise 4"


def test_explorer_and_store_are_put_back():
    processor = FusionFlex.stream.processor
    explorer, store = processor.explorer, processor.store
    with fusion_lab.explorer(ScoringExplorer):
        assert type(processor.explorer) is ScoringExplorer and processor.store is not store
    assert processor.explorer is explorer and processor.store is store


def test_scored_search_trains_the_cnn_step_alike():
    from minidl_book.workloads import minidl_cnn_step

    losses = {}
    for cls in (Explorer, ScoringExplorer):
        with fusion_lab.explorer(cls):
            step = minidl_cnn_step(Device.fusion().autodiff())
            losses[cls] = [step() for _ in range(2)]
    np.testing.assert_allclose(losses[ScoringExplorer], losses[Explorer], rtol=1e-5)

"""The fusion chapter's drawn search (:mod:`minidl_book.search_figure`): burn's choice
(``BurnExplorer``) on the chapter's stream (the bytes chain, a reshape to rows, ``exp``,
``*`` and a row sum): element-wise takes the nine chain ops and refuses the reshape of the
value it computed, reduce is not ready there; every fuser refuses the reshape (a first
view of a tensor read from memory), which runs alone; from ``exp`` reduce (410) beats
element-wise (310), which would write the product. The greedy plan beside it runs twelve
ops element-wise and writes the product. The explorer and store come back afterwards."""

from __future__ import annotations

import matplotlib
import numpy as np

from minidl import Device, Tensor
from minidl.backends.flex.fusion import FusionFlex
from minidl_book import fusion_sweep
from minidl_book.search_figure import draw_search, trace_search

matplotlib.use("Agg")


def _example():
    x = Tensor.from_numpy(np.random.default_rng(0).standard_normal(1 << 12)
                          .astype(np.float32), Device.fusion())

    def run():
        t = fusion_sweep.chain(x).reshape((64, 64))
        return (t.exp() * t).sum_dim(1).to_numpy()

    return run


def test_the_log_holds_burns_offers_and_both_plans():
    search, value = trace_search(_example())
    assert value.shape == (64, 1)
    runs = {(r.start, r.fuser): (r.taken, r.refused, r.ready) for r in search.runs}
    assert len(search.runs) == 9  # three fusers from each of three block starts
    assert runs[0, "elementwise"] == (9, True, True)
    assert runs[0, "reduce"] == (9, True, False)
    assert runs[0, "matmul"] == (0, True, False)
    assert all(runs[9, f][:2] == (0, True) for f in ("elementwise", "reduce", "matmul"))
    assert runs[10, "elementwise"] == (2, True, True)
    assert runs[10, "reduce"] == (3, False, True)  # the stream ends: nothing refused
    scores = {(r.start, r.fuser): r.score for r in search.runs}
    assert scores[10, "reduce"] == 410 > scores[10, "elementwise"] == 310
    assert [(b.start, b.end, b.fuser) for b in search.blocks] == [
        (0, 9, "elementwise"), (9, 10, None), (10, 13, "reduce")]
    assert [search.written(b) for b in search.blocks] == [["abs"], ["reshape"],
                                                          ["sum_dim"]]
    greedy = search.greedy.record.plan.blocks
    assert [(b.start, b.end, b.fuser) for b in greedy] == [
        (0, 12, "elementwise"), (12, 13, None)]
    assert [search.written(b, search.greedy) for b in greedy] == [["reshape", "mul"],
                                                                  ["sum_dim"]]


def test_the_explorer_and_store_are_put_back():
    processor = FusionFlex.stream.processor
    explorer, store = processor.explorer, processor.store
    trace_search(_example())
    assert processor.explorer is explorer and processor.store is store


def test_draw_names_what_each_block_writes():
    search, _ = trace_search(_example())
    fig = draw_search(search, {"sum_dim": "the sum"})
    texts = [t.get_text() for t in fig.axes[0].texts]
    assert texts.count("writes the sum") == 2 and "writes reshape, mul" in texts
    assert texts.count("✗") == 8
    assert "wins, score 1880" in texts and "wins, score 410" in texts
    assert "score 310" in texts and texts.count("not ready") == 1
    assert "burn's plan" in texts and "greedy plan" in texts
    matplotlib.pyplot.close(fig)

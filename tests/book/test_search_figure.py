"""The fusion chapter's drawn search (:mod:`minidl_book.search_figure`): the log of the
shipped ``Explorer``'s offers on the chapter's stream (the bytes chain, a reshape to rows,
``exp``, ``*`` and a row sum): element-wise takes twelve ops and refuses the sum, reduce
takes the chain and refuses the reshape (no reduction yet: not ready), matmul refuses the
first op; the sum then runs alone. The explorer and store come back afterwards."""

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


def test_the_log_holds_every_offer_and_the_plan():
    search, value = trace_search(_example())
    assert value.shape == (64, 1)
    runs = {(r.start, r.fuser): (r.taken, r.refused, r.ready) for r in search.runs}
    assert len(search.runs) == 6  # three fusers from each of two block starts
    assert runs[0, "elementwise"] == (12, True, True)
    assert runs[0, "reduce"] == (9, True, False)
    assert runs[0, "matmul"] == (0, True, False)
    assert runs[12, "reduce"] == (1, False, False)  # the stream ends: nothing refused
    assert [(b.start, b.end, b.fuser) for b in search.blocks] == [
        (0, 12, "elementwise"), (12, 13, None)]
    assert [search.written(b) for b in search.blocks] == [["reshape", "mul"], ["sum_dim"]]


def test_the_fusers_are_unwatched_and_the_explorer_put_back():
    processor = FusionFlex.stream.processor
    explorer, store = processor.explorer, processor.store
    trace_search(_example())
    assert processor.explorer is explorer and processor.store is store
    assert all("fuse" not in vars(f) for f in processor.explorer.fusers)


def test_draw_names_what_each_block_writes():
    search, _ = trace_search(_example())
    fig = draw_search(search, {"sum_dim": "the sum"})
    texts = [t.get_text() for t in fig.axes[0].texts]
    assert "writes the sum" in texts and "writes reshape, mul" in texts
    assert texts.count("✗") == 5 and texts.count("wins") == 1
    assert texts.count("not ready") == 2
    matplotlib.pyplot.close(fig)

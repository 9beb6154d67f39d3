"""The storing-and-loading chapter's pipeline figure (``store_models.draw_load_pipeline``):
its boxes run in the order a PyTorch import runs, with no note before remapping is explained."""

from __future__ import annotations

from minidl.store import PytorchStore
from minidl_book.store_models import PIPELINE, draw_load_pipeline


def test_the_boxes_run_in_the_imports_order():
    assert [title for title, _ in PIPELINE] == [
        "file", "top key", "remap", "adapter", "plan", "check", "build"]


def test_the_figure_is_the_boxes_alone():
    """burn's renumbering of index gaps is said in the remap section, not on the figure
    (a reader met it there before positions were explained)."""
    fig = draw_load_pipeline()
    texts = [t.get_text() for t in fig.axes[0].texts]
    assert not any("renumber" in t for t in texts)
    assert sum(t.startswith(("file", "plan", "build")) for t in texts) == 3  # titles


def test_minidls_default_is_off():
    assert PytorchStore.from_file("any.pt").contiguous_indices is False

"""The storing-and-loading chapter's pipeline figure (``store_models.draw_load_pipeline``):
its boxes run in the order a PyTorch import runs, and its burn-only note carries the source
lines and minidl's default it is given."""

from __future__ import annotations

from minidl.store import PytorchStore
from minidl_book.store_models import PIPELINE, draw_load_pipeline


def test_the_boxes_run_in_the_imports_order():
    assert [title for title, _ in PIPELINE] == [
        "file", "top key", "remap", "adapter", "plan", "check", "build"]


def test_the_burn_note_shows_what_it_is_given(tmp_path):
    fig = draw_load_pipeline("pytorch/store.rs 109, 423-430", "off by default")
    texts = [t.get_text() for t in fig.axes[0].texts]
    note = next(t for t in texts if t.startswith("burn, on by default"))
    assert "pytorch/store.rs 109, 423-430" in note and "minidl: off by default" in note
    assert sum(t.startswith(("file", "plan", "build")) for t in texts) == 3  # titles


def test_minidls_default_is_off():
    assert PytorchStore.from_file("any.pt").contiguous_indices is False

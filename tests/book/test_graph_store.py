"""minidl_book.graph_store: every burn line the chapter cites holds what it says, and the
live count of steps a loop of forwards without backward leaves behind."""

from __future__ import annotations

import subprocess

import matplotlib
import pytest

from minidl import Device, Tensor
from minidl_book import graph_store
from minidl_book.puzzle_burn import MIRROR

matplotlib.use("Agg")


def _lines(path: str) -> list[str]:
    out = subprocess.run(["git", "-C", str(MIRROR), "show",
                          f"{graph_store.TAG}:crates/burn-autodiff/src/{path}"],
                         capture_output=True, text=True, check=True)
    return out.stdout.split("\n")


@pytest.mark.skipif(not MIRROR.exists(), reason="no burn mirror")
@pytest.mark.parametrize("cite", graph_store.BURN_LINES, ids=lambda c: f"{c[0]}:{c[1]}")
def test_each_cited_range_holds_its_text(cite):
    path, first, last, text = cite
    assert text in "\n".join(_lines(path)[first - 1:last])


@pytest.mark.skipif(not MIRROR.exists(), reason="no burn mirror")
def test_a_range_one_off_is_refused():
    lines = _lines("runtime/server.rs")
    assert "steps: HashMap<NodeId, StepBoxed>" not in "\n".join(lines[32:35])


def test_only_the_last_forward_keeps_its_steps():
    ad = Device.flex().autodiff()
    x = Tensor.from_data([1.0, 2.0], ad).require_grad()
    w = Tensor.from_data([0.5, 3.0], ad).require_grad()
    assert graph_store.steps_alive(lambda: (x * w).exp().sum(), 10) == (3, 30)
    kept = []

    def forward_kept():
        kept.append((x * w).sum())  # a list holding every loss keeps every graph
        return kept[-1]

    assert graph_store.steps_alive(forward_kept, 4) == (8, 8)


def test_the_figure_has_two_panels():
    ad = Device.flex().autodiff()
    x = Tensor.from_data([1.0], ad).require_grad()
    root = (x.exp() * x).sum().primitive.backend_tensor.node
    fig = graph_store.figure(root, {})
    assert len(fig.axes) == 2
    text = " ".join(t.get_text() for t in fig.axes[1].texts)
    assert "AutodiffServer" in text and "= Exp" in text

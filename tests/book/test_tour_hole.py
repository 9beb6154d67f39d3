"""The tour's linear hole: the calls the default body makes back into Dispatch, read from a
trace (and nothing else the forward calls on Dispatch), drawn, and its source listed."""

from __future__ import annotations

import pytest

from minidl import Device, debug
from minidl.backend.modules import linear as linear_default
from minidl.nn import LinearConfig
from minidl_book import build_linear, tour_hole
from minidl_book.tour_path import data


@pytest.fixture(scope="module")
def device():
    dev = Device.flex().autodiff()
    dev.seed(0)
    return dev


def calls_of(layer, x):
    run = debug.trace(lambda: layer(x), breakpoints=tour_hole.BREAKPOINTS, echo=False)
    return tour_hole.body_calls(run)


def test_a_2d_input_calls_matmul_reshape_add_one_step_each(device):
    layer = LinearConfig(4, 2).init(device)  # lazy params: their init calls Dispatch too
    calls = calls_of(layer, data((3, 4), device, seed=1))
    assert [c.op for c in calls] == ["float_matmul", "float_reshape", "float_add"]
    assert [c.step for c in calls] == ["Matmul", "Reshape", "Add"]
    assert calls[1].shape == (1, 2) and calls[1].caller.startswith("linear._unsqueeze")
    assert calls[0].kernels[0].startswith("gemm") and calls[1].kernels == []
    assert calls[2].kernels == ["binary_row"]  # binary_same_shape only compared shapes


def test_rank_3_keeps_and_reshapes_the_weight_merge_batches_reshapes_x(device):
    x3 = data((2, 3, 4), device, seed=6)
    keep = calls_of(LinearConfig(4, 2).init(device), x3)
    assert [(c.op, c.shape) for c in keep if c.op == "float_reshape"] == [
        ("float_reshape", (1, 4, 2)), ("float_reshape", (1, 1, 2))]
    merge = calls_of(LinearConfig(4, 8).init(device), x3)
    assert [c.shape for c in merge if c.op == "float_reshape"] == [(6, 4), (1, 8), (2, 3, 8)]


def test_no_bias_is_a_single_call(device):
    calls = calls_of(LinearConfig(4, 2, bias=False).init(device), data((3, 4), device, 1))
    assert [c.op for c in calls] == ["float_matmul"]


def test_the_chart_fans_out_one_column_per_call(device):
    calls = calls_of(LinearConfig(4, 2).init(device), data((3, 4), device, seed=1))
    chart = tour_hole.hole_chart(calls, title="t")
    assert [e[:2] for e in chart.edges if e[0] == "body"] == [
        ("body", "d0"), ("body", "d1"), ("body", "d2")]
    assert "records Step Reshape" in chart.nodes["a1"] and "no kernel" in chart.nodes["k1"]
    assert chart.svg().startswith("<svg")


def test_sources_beside_lists_both_without_docstrings():
    text = tour_hole.sources_beside(build_linear.linear, linear_default.linear,
                                    linear_default._unsqueeze_leading)
    assert '"""' not in text and "def my_linear(input" in text
    assert text.index("my_linear") < text.index("def linear(B") < text.index(
        "def _unsqueeze_leading(B")
    assert "out = input @ weight" in text and "B.float_add(out" in text
    assert max(map(len, text.splitlines())) <= 80


def test_a_folded_branch_is_one_line_and_the_rest_is_kept():
    full = tour_hole.sources_beside(build_linear.linear, linear_default.linear)
    text = tour_hole.sources_beside(build_linear.linear, linear_default.linear,
                                    fold="MergeBatches")
    assert "action.rows" in full and "action.rows" not in text
    assert "    if isinstance(action, MergeBatches):\n        ...  (not taken" in text
    assert "out = B.float_matmul(x, _unsqueeze_leading(B, weight, ndims))" in text
    assert text.count("\n") == full.count("\n") - 4  # 5 lines become 1
    assert tour_hole.sources_beside(build_linear.linear, linear_default.linear,
                                    fold="NoSuchName") == full

"""The intro's fourth exercise: PyTorch's recorded graph for the same Linear, read live
from grad_fn.next_functions (AccumulateGrad left out), the checker taking the nodes in
record order or from the loss back and refusing minidl's steps and one Linear node, and
the two graphs drawn side by side with no kernel names or ids."""

import numpy as np
import pytest

from minidl import Device, Tensor
from minidl.nn import LinearConfig
from minidl_book.intro_torch_graph import both_graphs, same_torch_graph, torch_graph

TRUTH = ("SumBackward0", "AddmmBackward0", "TBackward0")


@pytest.fixture(scope="module")
def layer_and_x():
    device = Device.flex().autodiff()
    layer = LinearConfig(4, 2).init(device)
    x = Tensor.from_numpy(np.arange(12, dtype=np.float32).reshape(3, 4) / 10, device)
    layer(x)  # the params drawn
    return layer, x


def test_the_nodes_are_read_from_autograds_graph(layer_and_x):
    assert torch_graph(*layer_and_x) == TRUTH


@pytest.mark.parametrize("answer", [
    list(TRUTH), "SumBackward0, AddmmBackward0, TBackward0", "t, addmm, sum",
    "addmm", "AddmmBackward0", "TBackward0 -> AddmmBackward0 -> SumBackward0",
    "sum, addmm, t", "transpose, addmm, sum", "T, Addmm, Sum (not one Linear)",
])
def test_the_nodes_written_in_plausible_ways_pass(answer):
    if answer in ("addmm", "AddmmBackward0"):  # a spelling, read as the addmm node
        assert same_torch_graph(f"t, {answer}, sum", TRUTH)
    else:
        assert same_torch_graph(answer, TRUTH)


@pytest.mark.parametrize("answer", [
    "matmul, reshape, add, sum", "Matmul, Reshape, Add, Sum", "one Linear node",
    "LinearBackward0, SumBackward0", "addmm, sum", "t, mm, add, sum", "t, addmm",
    "addmm, t, sum", "t, addmm, sum, backward", None, 3,
])
def test_a_wrong_graph_is_refused(answer):
    assert not same_torch_graph(answer, TRUTH)


def test_both_graphs_are_drawn_without_kernels_or_ids(layer_and_x):
    mine, theirs = both_graphs(*layer_and_x).charts
    assert sorted(mine.nodes.values())[:4] == ["Add", "Matmul", "Reshape", "Sum"]
    assert set(TRUTH) <= set(theirs.nodes.values())
    html = both_graphs(*layer_and_x)._repr_html_()
    assert "#" not in "".join([*mine.nodes.values(), *theirs.nodes.values()])
    assert "kernel" not in html and "gemm" not in html and "display:flex" in html

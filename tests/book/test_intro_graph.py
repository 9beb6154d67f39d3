"""The intro's recorded graph: the steps Autodiff[Flex] records for layer(x).sum(), read
live, one LinearWithBias once linear is forwarded, the checker reading the steps written
in several ways and refusing one Linear node, a missing Reshape and wrong orders, and the
backward walk drawn with the weight's gradient xᵀ·g."""

import numpy as np
import pytest

from minidl import Device, Tensor
from minidl.dispatch import Dispatch
from minidl.nn import LinearConfig
from minidl_book.intro_graph import (
    backward_figure,
    forwarded_steps,
    recorded_steps,
    same_steps,
    steps_read,
    steps_unclear,
)
from minidl_book.intro_route import RouteExercise

TRUTH = ("Matmul", "Reshape", "Add", "Sum")


@pytest.fixture(scope="module")
def layer_and_x():
    device = Device.flex().autodiff()
    layer = LinearConfig(4, 2).init(device)
    x = Tensor.from_numpy(np.arange(12, dtype=np.float32).reshape(3, 4) / 10, device)
    layer(x)  # the params drawn
    return layer, x


def test_the_steps_are_read_from_the_recorded_graph(layer_and_x):
    assert recorded_steps(*layer_and_x) == TRUTH
    assert forwarded_steps(*layer_and_x) == ("LinearWithBias", "Sum")
    assert "linear" not in vars(Dispatch)  # the forwarder removed after the block
    assert recorded_steps(*layer_and_x) == TRUTH


@pytest.mark.parametrize("answer", [
    "Matmul, Reshape, Add, Sum", list(TRUTH), TRUTH, "matmul reshape add sum",
    "Matmul → Reshape(shape=(1, 2)) → Add → Sum", "Matmul -> Reshape -> Add -> Sum",
    "float_matmul, float_reshape, float_add, sum",
    "MatmulBackward0, ReshapeBackward0, AddBackward0, SumBackward0",
    "first the matmul, then reshape the bias, then add, then the sum",
    "matrix multiply, reshape, add, sum", "Matmul\nReshape\nAdd\nSum",
    "Matmul, Reshape, Add, Sum (not one Linear)",
    "x, weight, bias: Matmul, Reshape, Add, Sum",
    "matmul, view, add, sum",  # PyTorch's name for the reshape
    "matmul, reshape, add, sum_all",
    "Matmul, Reshape, Add, Sum; backward walks them back",  # an explanation, no item
])
def test_the_steps_written_in_plausible_ways_pass(answer):
    assert same_steps(answer, TRUTH) and not steps_unclear(answer)


@pytest.mark.parametrize("answer", [
    "one Linear node", "Linear", "Linear, Sum", "LinearWithBias, Sum",  # no hole
    "Matmul, Add, Sum", "Matmul, Reshape, Add",  # the reshape, the sum missing
    "Reshape, Matmul, Add, Sum", "Sum, Add, Reshape, Matmul",  # orders
    "t, addmm, sum", "Matmul, Reshape, Expand, Add, Sum", "matmul, add", None, 4,
    ["Matmul", 3],
    "Matmul, Reshape, Add, Sum, backward", "Matmul → Reshape → Add → Sum → ones",
    ["Matmul", "Reshape", "Add", "Sum", "backward"],  # backward is no recorded step
])
def test_a_wrong_graph_is_refused(answer):
    assert not same_steps(answer, TRUTH)


def test_an_answer_naming_no_op_is_asked_again(capsys):
    runs = []
    ex = RouteExercise("Which steps?", truth=lambda: runs.append(1) or TRUTH,
                       compare=same_steps, unclear=steps_unclear,
                       ask="Write the steps' names.", hint="the hint")
    assert steps_read("it records the layer") is None and steps_read("backward") is None
    assert not ex.check("it records the layer")
    out = capsys.readouterr().out
    assert "Write the steps' names." in out and "the hint" not in out and not runs
    assert not ex.check("one Linear node")
    assert "the hint" in capsys.readouterr().out
    assert ex.check(["Matmul", "Reshape", "Add", "Sum"])


def test_the_figure_walks_back_to_the_weights_gradient(layer_and_x):
    layer, x = layer_and_x
    chart, walked = backward_figure(layer, x)
    assert [s["op"] for s in walked] == list(TRUTH[::-1])
    edges = {(s["op"], e[0]): e for s in walked for e in s["edges"]}
    label, shape, tracked = edges["Matmul", "weight"][1:]
    assert label.startswith("xᵀ·g") and shape == (4, 2) and tracked
    assert not edges["Matmul", "x"][3]  # x is not tracked: no gradient for it
    svg = chart.svg()
    assert "xᵀ·g" in svg and "weight [4, 2]" in svg and "#" not in "".join(chart.nodes.values())
    assert "gemm" not in svg and "kernel" not in svg

"""The intro's call sequence: every step read from a trace of one layer(x), in call order."""

import numpy as np
import pytest

from minidl import Device, Tensor, debug
from minidl.nn import LinearConfig
from minidl_book.intro_route import call_sequence, detour_calls


def traced(device: Device):
    layer = LinearConfig(4, 2).init(device)
    x = Tensor.from_numpy(np.ones((3, 4), np.float32), device)
    layer(x)  # draw the params first
    return debug.trace(lambda: layer(x), breakpoints=[r"^Flex\.", r"^kernel "], echo=False)


@pytest.fixture(scope="module")
def run():
    return traced(Device.flex().autodiff())


def test_the_default_body_calls_three_ops_each_down_to_flex(run):
    calls = detour_calls(run)
    assert [frames[0] for frames, _ in calls] == [
        "Dispatch.float_matmul", "Dispatch.float_reshape", "Dispatch.float_add"]
    for frames, _ in calls:
        op = frames[0].removeprefix("Dispatch.")
        assert frames == [f"Dispatch.{op}", f"Autodiff[Flex].{op}", f"Flex.{op}"]
    # the computing kernels only: the reshape is a view, the add's probe is left out
    assert [kernels for _, kernels in calls] == [["gemm_small"], [], ["binary_row"]]


def test_the_steps_are_numbered_in_call_order_as_the_map_numbers_them(run):
    labels = list(call_sequence(run).nodes.values())
    numbered = [label.split("\n")[0] for label in labels if label[0] in "①②③④⑤⑥⑦"]
    assert numbered == ["① module.linear", "② Dispatch.linear",
                        "③ linear.linear[Dispatch]", "④ Dispatch.float_matmul",
                        "⑤ Dispatch.float_reshape", "⑥ Dispatch.float_add"]
    assert labels[0].startswith("Linear.forward")  # the map's first box, no arrow number
    assert not any("kernel" in label for label in labels)  # the intro's last exercise


def test_with_kernels_each_column_ends_in_its_kernel_or_a_view(run):
    chart = call_sequence(run, kernels=True)
    ends = [chart.nodes[f"c{c}_k"] for c in range(3)]
    assert ends == ["kernel gemm_small", "no kernel: a view", "kernel binary_row"]
    # the three calls leave the default body, each then goes straight down
    assert [b for a, b, _ in chart.edges if a == "t3"] == ["c0_0", "c1_0", "c2_0"]


def test_on_the_plain_device_no_autodiff_step():
    labels = "\n".join(call_sequence(traced(Device.flex())).nodes.values())
    assert "Autodiff[" not in labels and "Flex.float_matmul" in labels

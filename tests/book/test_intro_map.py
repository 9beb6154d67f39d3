"""The intro's map: the route of a traced layer(x), linear's detour included, with its PyTorch
column read from PyTorch (the profiler kept quiet)."""

import re

import torch

from minidl_book.intro_map import (
    BOXES,
    DETOUR,
    draw_layouts,
    package_map,
    route_steps,
    torch_column,
    torch_op_tree,
    trace_layer,
)


def test_torch_op_tree_writes_nothing_to_stderr(capfd):
    tree = torch_op_tree(lambda: torch.ones(2) + 1)
    assert "aten::add" in tree[""]
    assert capfd.readouterr().err == ""  # no profiler_start / profiler_stop lines


def test_torch_column_names_every_box_and_reads_addmm():
    linear = torch.nn.Linear(4, 2)
    column = torch_column(linear, torch.zeros(3, 4))
    assert set(column) == {key for key, *_ in BOXES}
    assert column["backend"].endswith("linear = t + addmm")
    assert "copy_ bias" in column["flex"] and "AutogradCPU" in column["dispatch"]
    chart = package_map(pytorch=column)
    assert len(chart.nodes) == 7
    assert all("torch: " in label for label in chart.nodes.values())


def test_package_map_reads_pytorch_itself_and_draws_the_route_of_linear():
    chart = package_map(pytorch=True)  # the column read from a fresh nn.Linear(4, 2)
    assert chart.nodes["backend"].endswith("linear = t + addmm")
    assert len(chart.nodes) == 7  # the site's test counts seven boxes in the first chart
    svg = chart.svg()
    # linear's detour is on the map: into the default body and back up, solid, in orange
    assert svg.count(f'stroke="{DETOUR}"') == 2 and "stroke-dasharray" not in svg
    route = [(a, b) for a, b, label in chart.edges if b != "module"]
    assert route == [("nn", "tensor"), ("tensor", "dispatch"), ("dispatch", "backend"),
                     ("backend", "dispatch"), ("dispatch", "autodiff"), ("autodiff", "flex")]
    assert float(re.search(r'width="(\d+)"', svg).group(1)) <= 752


def test_no_label_on_a_box_or_on_another_label():
    chart = package_map(pytorch=True)
    place = chart.place()
    boxes = [place[key] for key in chart.nodes]
    labels = [rect for key, rect in place.items() if key.startswith("label:")]
    assert len(labels) == len([label for *_, label in chart.edges if label])

    def overlap(p, q):
        return p[0] < q[0] + q[2] and q[0] < p[0] + p[2] and p[1] < q[1] + q[3] and q[1] < p[1] + p[3]

    assert not any(overlap(label, box) for label in labels for box in boxes)
    assert not any(overlap(p, q) for i, p in enumerate(labels) for q in labels[i + 1:])


def test_the_route_is_numbered_in_call_order_and_names_no_kernel():
    labels = [label for _, _, label, _ in route_steps(trace_layer())]
    assert labels[1:4] == ["① module.linear", "② Dispatch.linear",
                           "③ no forwarder:\nthe default body"]
    assert labels[4] == "④ float_matmul\n⑤ float_reshape\n⑥ float_add"
    assert labels[5:] == ["④ ⑤ ⑥ by device", "④ ⑤ ⑥ to Flex"]  # no "recorded": asked
    assert "kernel" not in "".join(labels), "which kernels compute is the tour's question"


def test_on_the_plain_device_the_route_skips_autodiff():
    from minidl import Device

    steps = route_steps(trace_layer(Device.flex()))
    assert [(a, b) for a, b, *_ in steps][-1] == ("dispatch", "flex")
    assert "autodiff" not in {box for a, b, *_ in steps for box in (a, b)}
    assert steps[-1][2] == "④ ⑤ ⑥ by device"


def test_computing_counts_the_kernels_that_computed_the_forward():
    import numpy as np

    from minidl import Device, Tensor, debug
    from minidl.nn import LinearConfig
    from minidl_book.intro_map import computing

    device = Device.flex().autodiff()
    layer = LinearConfig(4, 2).init(device)
    x = Tensor.from_numpy(np.zeros((3, 4), np.float32), device)
    layer(x)
    hits = debug.trace(lambda: layer(x), breakpoints=r"^kernel ", echo=False).hits
    assert sum(computing(hits)) == 2 and computing(hits)[0] and computing(hits)[-1]


def test_the_layouts_draw_the_bias_so_y_can_be_checked_by_hand():
    import numpy as np

    weight = np.arange(8, dtype=np.float32).reshape(4, 2) / 10
    fig = draw_layouts(weight, bias=np.array([0.5, -0.25], np.float32))
    texts = [t.get_text() for t in fig.axes[0].texts]
    assert texts.count("b [2]") == 2 and texts.count("-0.25") == 2  # both panels
    fig_plain = draw_layouts(weight)
    assert "b [2]" not in [t.get_text() for t in fig_plain.axes[0].texts]


def test_the_default_body_calls_three_ops_each_down_to_flex_and_its_kernels():
    import numpy as np

    from minidl import Device, Tensor, debug
    from minidl.nn import LinearConfig
    from minidl_book.intro_map import detour_calls

    device = Device.flex().autodiff()
    layer = LinearConfig(4, 2).init(device)
    x = Tensor.from_numpy(np.ones((3, 4), np.float32), device)
    layer(x)  # draw the params first
    run = debug.trace(lambda: layer(x), breakpoints=[r"^Flex\.", r"^kernel "], echo=False)
    calls = detour_calls(run)
    for frames, _ in calls:
        op = frames[0].removeprefix("Dispatch.")
        assert frames == [f"Dispatch.{op}", f"Autodiff[Flex].{op}", f"Flex.{op}"]
    # the computing kernels only: the reshape is a view, the add's probe is left out
    assert [kernels for _, kernels in calls] == [["gemm_small"], [], ["binary_row"]]


def test_a_call_with_a_forwarder_is_drawn_straight_down():
    """A Conv2d's forward (Dispatch forwards conv2d): one arrow into each box, numbered in
    call order, no detour, the title naming the call."""
    import numpy as np

    from minidl import Device, Tensor
    from minidl.nn import Conv2dConfig

    device = Device.flex().autodiff()
    conv = Conv2dConfig((1, 2), (3, 3)).init(device)
    image = Tensor.from_numpy(np.ones((1, 1, 5, 5), np.float32), device)
    conv(image)
    chart = package_map(lambda: conv(image), call="conv(image)")
    assert chart.edges == [
        ("nn", "module", "weight.val()"), ("nn", "tensor", "① module.conv2d"),
        ("tensor", "dispatch", "② Dispatch.conv2d"),
        ("dispatch", "autodiff", "③ Autodiff[Flex].conv2d"),
        ("autodiff", "flex", "④ Flex.conv2d")]
    assert "conv(image)" in chart.title and f'stroke="{DETOUR}"' not in chart.svg()
    plain = Tensor.from_numpy(np.ones((1, 1, 5, 5), np.float32), Device.flex())
    conv_plain = Conv2dConfig((1, 2), (3, 3)).init(Device.flex())
    conv_plain(plain)
    edges = package_map(lambda: conv_plain(plain)).edges
    assert [(a, b) for a, b, _ in edges][-1] == ("dispatch", "flex")

"""The intro's PyTorch column: read from PyTorch, and the profiler kept quiet."""

import re

import torch

from minidl_book.intro_map import BOXES, DETOUR, package_map, torch_column, torch_op_tree


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


def test_package_map_reads_pytorch_itself_and_draws_the_detour_apart():
    chart = package_map(pytorch=True)  # the column read from a fresh nn.Linear(4, 2)
    assert chart.nodes["backend"].endswith("linear = t + addmm")
    svg = chart.svg()
    assert svg.count(f'stroke="{DETOUR}"') == 2  # the arrows of steps 4 and 5
    boxes = {
        m["label"][0]: (float(m["x"]), float(m["y"]), float(m["w"]))
        for m in re.finditer(
            r'<g class="edge-label"><rect x="(?P<x>[\d.]+)" y="(?P<y>[\d.]+)" '
            r'width="(?P<w>[\d.]+)".*?<tspan[^>]*>(?P<label>[^<]+)<',
            svg,
        )
    }
    (x4, y4, w4), (x6, y6, w6) = boxes["4"], boxes["6"]
    assert abs(y4 - y6) < 5, "step 4's label and step 6's on one level"
    assert x6 + w6 <= x4 or x4 + w4 <= x6, "step 4's label and step 6's overlap"

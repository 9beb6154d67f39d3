"""The intro's PyTorch column: read from PyTorch, and the profiler kept quiet."""

import re

import torch

from minidl_book.intro_map import (
    BOXES,
    DETOUR,
    measured_ops,
    package_map,
    path_steps,
    torch_column,
    torch_op_tree,
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


def test_package_map_reads_pytorch_itself_and_draws_the_detour_apart():
    chart = package_map(pytorch=True)  # the column read from a fresh nn.Linear(4, 2)
    assert chart.nodes["backend"].endswith("linear = t + addmm")
    svg = chart.svg()
    detour = re.findall(
        rf'data-from="(\w+)" data-to="(\w+)" d="([^"]+)" fill="none" stroke="{DETOUR}"', svg
    )
    assert [(a, b) for a, b, _ in detour] == [("dispatch", "backend"), ("backend", "dispatch")]
    lanes = [float(re.search(r"H([\d.]+) V", d).group(1)) for *_, d in detour]
    left, _, width, _ = chart.place()["dispatch"]
    assert lanes[0] < left < left + width < lanes[1], "step 4 down the left, 5 up the right"


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
    heights = [place[f"label:{label}"][1] for a, b, label in chart.edges if "dispatch" in (a, b)
               and "backend" in (a, b)]
    assert abs(heights[0] - heights[1]) > 20, "the two detour labels at two heights"


def test_the_arrows_carry_the_ops_a_traced_forward_sends_back_up():
    ops = measured_ops()
    assert ops == ["float_matmul", "float_add"]  # the bias add is a call of its own
    steps = {(a, b): label for a, b, label, _ in path_steps(ops)}
    assert steps["autodiff", "flex"].split() == ["7", "float_matmul", "10", "float_add"]
    assert steps["backend", "dispatch"].split() == ["5", "↑", "float_matmul", "8", "↑", "float_add"]
    assert steps["dispatch", "autodiff"] == "6, 9 by device"

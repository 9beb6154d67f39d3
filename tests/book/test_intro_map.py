"""The intro's PyTorch column: read from PyTorch, and the profiler kept quiet."""

import torch

from minidl_book.intro_map import BOXES, package_map, torch_column, torch_op_tree


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

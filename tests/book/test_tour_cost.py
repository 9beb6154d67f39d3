"""The tour's cost of the linear hole: the split path against one linear step, counted."""

from __future__ import annotations

import pytest

from minidl import Device
from minidl.dispatch import Dispatch
from minidl.nn import LinearConfig
from minidl_book import tour_cost
from minidl_book.tour_path import data


@pytest.fixture(scope="module")
def device():
    dev = Device.flex().autodiff()
    dev.seed(0)
    return dev


def test_a_2d_input_costs_two_steps_and_three_routings_not_bytes_or_kernels(device):
    layer = LinearConfig(4, 2).init(device)
    x = data((3, 4), device, seed=1)
    costs = tour_cost.hole_cost(layer, x)
    split, one = costs["split"], costs["one step"]
    assert split.steps == ("Matmul", "Reshape", "Add")
    assert one.steps == ("LinearWithBias",)
    assert split.bytes_kept == one.bytes_kept == 48  # x alone, for the weight's grad
    assert (split.routed, one.routed) == (4, 1)
    assert split.forward_kernels == one.forward_kernels == ("gemm_small", "binary_row")
    assert sorted(split.backward_kernels) == sorted(one.backward_kernels)
    assert "linear" not in vars(Dispatch)  # the forwarder was taken out again


def test_lazy_init_is_not_counted_and_a_tracked_x_keeps_the_weight(device):
    layer = LinearConfig(4, 2).init(device)  # params not made yet
    x = data((3, 4), device, seed=1).require_grad()
    costs = tour_cost.hole_cost(layer, x)
    assert all("fill_serial" not in c.forward_kernels for c in costs.values())
    assert costs["split"].bytes_kept == costs["one step"].bytes_kept == 48 + 32


def test_rank_3_the_split_path_runs_more_backward_kernels(device):
    layer = LinearConfig(4, 2).init(device)
    costs = tour_cost.hole_cost(layer, data((2, 3, 4), device, seed=6))
    assert costs["split"].steps == ("Reshape", "Matmul", "Reshape", "Add")
    assert len(costs["split"].backward_kernels) > len(costs["one step"].backward_kernels)


def test_the_table_has_one_row_per_measure_and_a_column_per_path(device):
    layer = LinearConfig(4, 2).init(device)
    table = tour_cost.cost_table(tour_cost.hole_cost(layer, data((3, 4), device, seed=1)))
    lines = table.splitlines()
    assert lines[0].split() == ["split", "one", "step"]
    assert lines[1].split()[-1] == "LinearWithBias" and "Matmul, Reshape, Add" in lines[1]
    assert lines[3].split()[-2:] == ["4", "1"]
    assert max(map(len, lines)) <= 74

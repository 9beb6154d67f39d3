"""The intro's design, read live: each device's chain of backends, the picture drawn from
them beside PyTorch's keys, and the two "does the weight get a gradient?" runs."""

import numpy as np
import pytest

from minidl import Device
from minidl_book.intro_design import (
    addmm_route,
    backend_chain,
    design_figure,
    device_of,
    inference_step,
    mixed_step,
    outcome_of,
    torch_keys,
)

ROWS = np.arange(12, dtype=np.float32).reshape(3, 4) / 10


# the device as a user gets it: Fusion[Flex] runs a small op eagerly, so the trace of the
# product reaches Flex under Dispatch (the chapter's layer is as small)
@pytest.mark.fusion_eager_policy
def test_each_device_picks_its_chain():
    assert backend_chain(Device.flex()) == ("Flex",)
    assert backend_chain(Device.flex().autodiff()) == ("Autodiff[Flex]", "Flex")
    assert backend_chain(Device.fusion()) == ("Fusion[Flex]", "Flex")
    assert backend_chain(device_of("Device.fusion().autodiff()")) == (
        "Autodiff[Fusion[Flex]]", "Fusion[Flex]", "Flex")


def test_the_picture_draws_three_labelled_columns():
    chart = design_figure()
    labels = list(chart.nodes.values())
    heads = [label.split("\n")[0] for label in labels if "\n" in label
             and label.split("\n")[0] in ("burn 0.21", "burn 0.22", "PyTorch: addmm")]
    assert heads == ["burn 0.21", "burn 0.22", "PyTorch: addmm"]
    assert "Tensor<B, D, K>" in labels[0] and "Tensor<D, K>" in labels[4]
    assert "Dispatch: opt-in" in labels[1]  # 0.21 had it, behind a feature
    # a plain x beside an autodiff weight is the chapter's exercise: not drawn above it
    assert not any(w in label for label in labels for w in ("lift", "plain", "panic"))
    assert not any("Device." in label or "Fusion[Flex]" in label for label in labels)
    assert labels[-4:] == ["AutocastCPU\noff", "AutogradCPU\nautograd's kernel records",
                           "ADInplaceOrView\nfalls through", "CPU\nkernel computes"]
    assert len(chart.edges) == len(labels) - 3  # three columns, each a chain


def test_the_columns_come_out_left_to_right_021_022_pytorch():
    import re

    # the before/after pair side by side: each column's head box, by its drawn x
    svg = design_figure().svg()
    left = {m[1]: float(m[2]) for m in re.finditer(r'data-id="(\w)0"><rect x="([\d.]+)"',
                                                  svg)}
    assert sorted(left, key=left.get) == ["a", "b", "t"]


def test_a_plain_x_gets_the_weight_a_gradient_in_minidl_and_an_error_in_pytorch():
    assert outcome_of(mixed_step(ROWS)) == ("grad", "")
    said, why = outcome_of(mixed_step(ROWS, on=Device.flex()))  # nothing on autodiff
    assert said == "error" and why.startswith("RuntimeError: Requires autodiff tensor")
    said, why = outcome_of(inference_step(ROWS))
    assert said == "error" and why.startswith("RuntimeError: Inference tensors cannot")
    assert outcome_of(inference_step(ROWS, inference=False)) == ("grad", "")
    assert outcome_of(lambda: None) == ("no grad", "")


def test_addmm_runs_two_kernels_for_a_weight_autocast_off():
    import torch

    route = dict(addmm_route(torch.nn.Linear(4, 2).weight))
    assert [k for k, job in route.items() if "kernel" in job] == ["AutogradCPU", "CPU"]
    assert route["ADInplaceOrView"] == "falls through" and route["AutocastCPU"] == "off"
    has = torch._C._dispatch_has_kernel_for_dispatch_key
    assert not has("aten::addmm", "AutogradCPU") and has("aten::addmm", "Autograd")
    with torch.autocast("cpu"):
        assert dict(addmm_route(torch.ones(2)))["AutocastCPU"] != "off"  # enabled: it runs


def test_torch_keys_are_printed_without_the_set():
    import torch

    assert "AutogradCPU" in torch_keys(torch.nn.Linear(4, 2).weight).split(", ")
    with torch.inference_mode():
        assert torch_keys(torch.ones(2)) == "CPU, AutocastCPU"

"""``minidl_book.conv_batch_weight`` and ``conv_weight_answer``: the batch example's figure
sums are PyTorch's ``w.grad``, the swapped conv with the stride as its dilation gives the
whole gradient, and the entry's checker accepts the number however written and refuses
each plausible slip with its own hint."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import numpy as np  # noqa: E402
import pytest  # noqa: E402
import torch  # noqa: E402
import torch.nn.functional as tf  # noqa: E402

from minidl_book import conv_batch_weight as cbw  # noqa: E402
from minidl_book import conv_weight_answer as cwa  # noqa: E402

TAP = (1, 0, 1, 0)  # the chapter's exercise entry


def _torch_grad(case: cbw.BatchConv) -> np.ndarray:
    w = torch.zeros(case.weight_shape, requires_grad=True)
    y = tf.conv2d(torch.tensor(case.x, dtype=torch.float32), w, stride=case.stride)
    (y * torch.tensor(case.g, dtype=torch.float32)).sum().backward()
    return w.grad.numpy()


def test_the_case_is_batch_two_with_two_channels_each_way():
    case = cbw.batch_case()
    assert case.x.shape == (2, 2, 4, 4) and case.g.shape == (2, 2, 2, 2)
    assert case.weight_shape == (2, 2, 2, 2) and case.stride == 2


def test_tap_products_sum_to_torchs_weight_grad_for_every_entry():
    case = cbw.batch_case()
    truth = _torch_grad(case)
    for tap in np.ndindex(*case.weight_shape):
        per_image = cbw.tap_products(case, tap)
        assert len(per_image) == 2
        assert sum(x * g for t in per_image for _, _, x, g in t) == truth[tap]


def test_the_swapped_conv_with_stride_as_dilation_is_the_weight_grad():
    case = cbw.batch_case()
    xs = torch.tensor(case.x, dtype=torch.float32).transpose(0, 1)
    gs = torch.tensor(case.g, dtype=torch.float32).transpose(0, 1)
    swapped = tf.conv2d(xs, gs, dilation=case.stride).transpose(0, 1)
    assert np.array_equal(swapped.numpy(), _torch_grad(case))
    wrong = tf.conv2d(xs, gs, stride=case.stride).transpose(0, 1)  # stride kept
    assert not np.array_equal(wrong.numpy(), _torch_grad(case))


def test_the_figure_draws_each_images_sum(monkeypatch):
    monkeypatch.setattr(cbw.plt, "show", lambda: None)
    case = cbw.batch_case()
    truth = _torch_grad(case)
    sums = cbw.draw_batch_tap(case, (0, 1, 0, 1), truth[0, 1, 0, 1])
    assert len(sums) == 2 and sum(sums) == truth[0, 1, 0, 1]


def test_the_live_truth_is_torchs_entry():
    case = cbw.batch_case()
    assert cwa.weight_entry(case, TAP) == _torch_grad(case)[TAP]


@pytest.fixture(scope="module")
def checked():
    case = cbw.batch_case()
    return cwa.exercise(case, TAP), int(_torch_grad(case)[TAP]), cwa.slips(case, TAP)


def test_the_number_is_accepted_however_written(checked):
    ex, truth, _ = checked
    for ok in (truth, float(truth), str(truth), f" {truth} ", f"{truth}.0",
               np.int64(truth), np.float32(truth)):
        assert ex.accepts(ok, truth), ok


def test_each_slip_is_refused_with_its_own_hint(checked):
    ex, truth, table = checked
    assert {"image 0 only", "image 1 only", "adjacent pixels", "stride as stride",
            "other input channel", "other output channel", "tap transposed"} <= set(table)
    values = [v for v, _ in table.values()]
    assert truth not in values and len(set(values)) == len(values)
    for name, (value, text) in table.items():
        assert not ex.accepts(value, truth), name
        assert ex.hint_for(value, truth) == text != ex.hint, name
        assert ex.hint_for(str(value), truth) == text, name
    assert "dilation" in table["stride as stride"][1]
    assert "add every image" in table["image 0 only"][1]


def test_a_near_miss_and_odd_answers_are_refused_with_the_ordinary_hint(checked):
    ex, truth, _ = checked
    for wrong in (truth + 0.5, truth - 1, -truth, "a lot", [truth, truth], None):
        assert not ex.accepts(wrong, truth), wrong
    assert ex.hint_for(truth + 0.5, truth) == ex.hint


def test_check_prints_the_slip_hint(checked, capsys):
    ex, _, table = checked
    assert not ex.check(table["image 0 only"][0])
    assert "add every image" in capsys.readouterr().out

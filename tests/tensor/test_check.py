"""TensorCheck (burn's collector of failed checks) and assert_shape (burn's assert_shape!)."""

from __future__ import annotations

import pytest

from minidl import Tensor, TensorCheckError, TensorKindError, assert_shape
from minidl.tensor import TensorCheck


def test_tensor_check_renders_like_burn():
    check = TensorCheck("conv2d").register("First problem.", "Some detail.").register("Second problem.")
    assert check.failed
    assert check.format() == (
        "=== Tensor Operation Error ===\n  Operation: 'conv2d'\n  Reason:"
        "\n    1. First problem. Some detail.\n    2. Second problem.\n"
    )
    with pytest.raises(TensorCheckError) as err:
        check.check()
    assert str(err.value) == check.format()
    TensorCheck("ok").check()  # nothing registered: no error


def test_kind_problems_are_also_type_errors():
    with pytest.raises(TypeError):
        TensorCheck("x").register("Wrong kind.", kind=True).check()
    assert issubclass(TensorKindError, ValueError)


def test_conv_check_channels_vs_groups():
    check = TensorCheck.conv("conv2d", [2, 6, 8, 8], [4, 2, 3, 3], groups=2)
    text = check.format()
    assert check.failed and "weight.shape[1] * groups = 2 * 2 = 4" in text and "found 6" in text
    assert not TensorCheck.conv("conv2d", [2, 6, 8, 8], [4, 3, 3, 3], groups=2).failed
    assert "Output channels must be divisible" in TensorCheck.conv("c", [1, 6, 4, 4], [4, 2, 1, 1], 3).format()
    assert "must have 4 dims" in TensorCheck.conv("c", [1, 6, 4], [3, 2, 1, 1], 1).format()


def test_assert_shape_with_wildcards(plain):
    x = Tensor.zeros([2, 5], plain)
    assert_shape(x, [2, 5])
    assert_shape(x, [..., 5])
    assert_shape(x, [None, 5])
    assert_shape(x, [2, ...])
    assert_shape(x, [2, 5, ...])
    assert_shape(x, [...])
    with pytest.raises(TensorCheckError) as err:
        assert_shape(x, [..., 4], name="input")
    assert str(err.value) == 'assert_shape!: tensor "input" has shape [2, 5], expected [.., 4]'
    with pytest.raises(TensorCheckError, match=r"expected \[_, 5, 1\]"):
        assert_shape(x, [None, 5, 1])
    with pytest.raises(TensorCheckError, match=r"expected \[3, .., 5\]"):
        assert_shape(x, [3, ..., 5])

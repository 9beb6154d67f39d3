"""Sizes are checked before work starts: a tensor that cannot fit is refused at once, with the
op, the shape and the size in the message (``minidl.backend.limits``), and ``repeat_dim`` is one
copy, not a ``cat`` of ``times`` copies."""

from __future__ import annotations

import time

import numpy as np
import pytest
import torch

from minidl.backend import Distribution, DType
from minidl.backend.limits import (
    ENV,
    SMALL_BYTES,
    TensorTooLargeError,
    check_size,
    max_tensor_bytes,
)

from .support import as_layout, assert_close, randn, tt

HUGE = 10**12  # elements: terabytes in any dtype


def _refused_fast(call, op: str) -> TensorTooLargeError:
    start = time.perf_counter()
    with pytest.raises(TensorTooLargeError) as err:
        call()
    assert time.perf_counter() - start < 1.0, f"{op}: refused only after {time.perf_counter() - start:.1f} s"
    message = str(err.value)
    assert op in message and "limit" in message, message
    return err.value


def test_huge_creations_are_refused_before_any_work(B, device):
    calls = {
        "float_zeros": lambda: B.float_zeros((HUGE, 4), DType.F32, device),
        "float_ones": lambda: B.float_ones((4, HUGE), DType.F32, device),
        "float_full": lambda: B.float_full((HUGE,), 2.0, DType.F64, device),
        "float_random": lambda: B.float_random((HUGE,), Distribution.uniform(0.0, 1.0), DType.F32, device),
        "int_zeros": lambda: B.int_zeros((HUGE,), DType.I64, device),
        "int_random": lambda: B.int_random((HUGE,), 0, 5, DType.I64, device),
        "int_arange": lambda: B.int_arange(0, HUGE, 1, DType.I64, device),
    }
    for op, call in calls.items():
        _refused_fast(call, op)


def test_huge_repeat_and_expand_are_refused_before_any_work(B):
    x = np.ones((1, 1), np.float32)
    err = _refused_fast(lambda: B.float_repeat_dim(x, 0, HUGE), "float_repeat_dim")
    assert str((HUGE, 1)) in str(err)
    _refused_fast(lambda: B.int_repeat_dim(x.astype(np.int64), 1, HUGE), "int_repeat_dim")
    _refused_fast(lambda: B.float_expand(x, (HUGE, 60000)), "float_expand")
    _refused_fast(lambda: B.int_expand(x.astype(np.int64), (HUGE, 1)), "int_expand")
    _refused_fast(lambda: B.bool_expand(x > 0, (HUGE, 1)), "bool_expand")


def test_the_refusal_is_both_a_memory_error_and_a_value_error(B, device):
    with pytest.raises(MemoryError):
        B.float_zeros((HUGE,), DType.F32, device)
    with pytest.raises(ValueError):
        B.float_zeros((HUGE,), DType.F32, device)


def test_the_limit_follows_the_environment_variable(B, device, monkeypatch):
    monkeypatch.setenv(ENV, str(1 << 20))  # 1 MiB
    assert max_tensor_bytes() == 1 << 20
    B.float_zeros((256, 1024), DType.F32, device)  # exactly 1 MiB: allowed
    _refused_fast(lambda: B.float_zeros((257, 1024), DType.F32, device), "float_zeros")
    half = np.zeros((200, 1024), np.float32)
    _refused_fast(lambda: B.float_cat([half, half], 0), "float_cat")
    _refused_fast(lambda: B.int_cat([half.astype(np.int32)] * 2, 0), "int_cat")
    monkeypatch.setenv(ENV, "lots")
    with pytest.raises(ValueError, match=ENV):
        max_tensor_bytes()


def test_tensors_of_a_page_or_less_skip_the_limit(B, device, monkeypatch):
    # the check reads the environment only above SMALL_BYTES (a step makes many tiny tensors)
    monkeypatch.setenv(ENV, "1")
    assert B.float_zeros((SMALL_BYTES // 4,), DType.F32, device).shape == (SMALL_BYTES // 4,)
    _refused_fast(lambda: B.float_zeros((SMALL_BYTES // 4 + 1,), DType.F32, device), "float_zeros")


def test_negative_sizes_and_counts_are_refused_by_name():
    with pytest.raises(ValueError, match="float_zeros: expected sizes >= 0"):
        check_size("float_zeros", (2, -1), np.float32)


def test_repeat_dim_of_a_small_tensor_many_times_is_one_copy_not_a_cat(B, monkeypatch):
    # It used to be a cat of 100,000 copies (seconds of work); now it must be one copy. Checked
    # by structure, not by the clock (the machines are shared): cat must not be reached.
    def no_cat(cls, *args, **kwargs):
        raise AssertionError("repeat_dim went through float_cat")

    monkeypatch.setattr(B, "float_cat", classmethod(no_cat))
    x = np.array([[3.0]], np.float32)
    out = B.float_repeat_dim(x, 0, 100_000)
    assert out.shape == (100_000, 1) and np.all(np.asarray(out) == 3.0)


@pytest.mark.parametrize("layout", ["contiguous", "transposed", "strided", "flipped"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16])
def test_repeat_dim_matches_torch_repeat_for_every_dim_and_layout(B, layout, dtype):
    values = randn(7, (2, 3, 4), dtype)
    x = as_layout(values, layout)
    for dim in range(3):
        for times in (0, 1, 2, 5):
            reps = [1, 1, 1]
            reps[dim] = times
            assert_close(B.float_repeat_dim(x, dim, times), tt(values).repeat(*reps), rtol=0, atol=0)
    ints = values.astype(np.int64)
    assert_close(B.int_repeat_dim(as_layout(ints, layout), 2, 3), tt(ints).repeat(1, 1, 3))


def test_repeat_dim_refuses_a_negative_count(B):
    with pytest.raises(ValueError, match=r"float_repeat_dim: expected times to be an int >= 0, found -2"):
        B.float_repeat_dim(np.ones((2, 2), np.float32), 0, -2)
    assert torch.ones(2).repeat(0).shape == (0,)  # torch's 0 is allowed, as here

"""Flex's fused Adam step (``minidl/optim/fused.py``, a speed trick) against the rule's tensor ops."""

from __future__ import annotations

import numpy as np
import pytest

from minidl import Device, Tensor
from minidl.optim.adam import Adam, AdamState, adaptive_update
from minidl.optim.fused import fused_adam_step


def _plain(lr, tensor, grad, state, b1, b2, eps):
    update, state = adaptive_update(b1, b2, eps, grad, state)
    return tensor - update * lr, state


def _assert_same_step(fused, plain, dtype, time: int) -> None:
    """The fused step's (tensor, state) equals the tensor ops' at step ``time``: float32 within
    1e-6, float64 within 1e-12 (rtol and atol)."""
    assert fused[1].time == plain[1].time == time
    tol = 1e-6 if dtype == np.float32 else 1e-12
    for a, b in ((fused[0], plain[0]), (fused[1].moment_1, plain[1].moment_1),
                 (fused[1].moment_2, plain[1].moment_2)):
        assert a.to_numpy().dtype == dtype and a.shape == b.shape
        np.testing.assert_allclose(a.to_numpy(), b.to_numpy(), rtol=tol, atol=tol)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape", [(5,), (3, 4), (2, 3, 2, 2)])
def test_fused_adam_matches_the_tensor_ops_over_three_steps(dtype, shape):
    rng = np.random.default_rng(0)
    device = Device.flex()
    p = Tensor.from_numpy(rng.standard_normal(shape).astype(dtype), device)
    fused = plain = (p, None)
    for step in range(3):
        g = Tensor.from_numpy(rng.standard_normal(shape).astype(dtype), device)
        new, time, m1, m2 = fused_adam_step(3e-3, fused[0], g, fused[1], 0.9, 0.999, 1e-5)
        fused = (new, AdamState(time, m1, m2))
        plain = _plain(3e-3, plain[0], g, plain[1], 0.9, 0.999, 1e-5)
        _assert_same_step(fused, plain, dtype, step + 1)


def test_a_transposed_grad_is_read_as_its_values():
    device = Device.flex()
    p = Tensor.from_numpy(np.ones((3, 2), np.float32), device)
    g = Tensor.from_numpy(np.arange(6, dtype=np.float32).reshape(2, 3), device).transpose()
    fused = fused_adam_step(0.1, p, g, None, 0.9, 0.999, 1e-5)
    plain = _plain(0.1, p, g, None, 0.9, 0.999, 1e-5)
    np.testing.assert_allclose(fused[0].to_numpy(), plain[0].to_numpy(), rtol=1e-6)


def test_a_backend_without_adam_step_runs_the_tensor_ops():
    p = Tensor.from_numpy(np.ones(4, np.float32), Device.ndarray())
    g = Tensor.from_numpy(np.full(4, 0.5, np.float32), Device.ndarray())
    assert fused_adam_step(0.1, p, g, None, 0.9, 0.999, 1e-5) is None
    new, state = Adam(0.9, 0.999, 1e-5, None).step(0.1, p, g, None)
    assert state.time == 1 and new.device == Device.ndarray()


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("size", [37, 2 * 256 + 37])  # within one chunk of the kernel, across three
def test_adam_step_may_write_into_its_own_inputs(dtype, size):
    # a captured step passes the parameter and the moments as the outputs (``outs``)
    from minidl.backends.flex.kernels.optim import CHUNK, adam_step

    assert CHUNK == 256
    rng = np.random.default_rng(1)
    p, g, m1, m2 = (rng.standard_normal(size).astype(dtype) for _ in range(4))
    m2 = np.abs(m2)
    args = (3e-3, 0.9, 0.999, 1e-5, 1 - 0.9**3, 1 - 0.999**3)
    fresh = adam_step(p, g, m1, m2, *args)
    bufs = (p.copy(), m1.copy(), m2.copy())
    same = adam_step(bufs[0], g, bufs[1], bufs[2], *args, outs=bufs)
    assert all(a is b for a, b in zip(same, bufs))
    for a, b in zip(same, fresh):
        np.testing.assert_array_equal(a, b)
    with pytest.raises(ValueError, match="C-contiguous"):
        adam_step(p, g, m1, m2, *args, outs=(np.empty(size - 1, dtype), None, None))
    first = adam_step(p, g, None, None, *args)  # the first step: no moments read
    np.testing.assert_array_equal(first[1], g * dtype(1 - 0.9))


# ----- Fusion[Flex]'s adam_step (minidl/fusion/eager.py, the same speed trick on handles) -----

def _fusion_stream():
    from minidl.backends.flex.fusion import FusionFlex

    return FusionFlex.stream


@pytest.mark.fusion_eager_policy  # the device as shipped: small ops on ready tensors run eagerly
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("pending", [False, True], ids=["ready", "pending"])
def test_fusion_adam_step_matches_the_tensor_ops_on_ready_and_pending_inputs(dtype, pending):
    """Three steps on Device.fusion() against adaptive_update's tensor ops on Flex: equal to
    float32 rounding (rtol = atol = 1e-6; 1e-12 in float64), every result a ready handle."""
    from minidl.fusion.tensor import FusionTensor

    stream = _fusion_stream()
    stream.drain()
    rng = np.random.default_rng(2)
    shape = (3, 4)
    start = rng.standard_normal(shape).astype(dtype)
    fusion, flex = Device.fusion(), Device.flex()
    fused = (Tensor.from_numpy(start, fusion), None)
    plain = (Tensor.from_numpy(start, flex), None)
    for step in range(3):
        g_data = rng.standard_normal(shape).astype(dtype)
        g = Tensor.from_numpy(g_data, fusion)
        param = fused[0]
        if pending:  # the gradient and the parameter still waiting in the stream
            with stream.recording_every_op():
                g, param = g * 1.0, param * 1.0
            assert g.primitive.backend_tensor.pending and param.primitive.backend_tensor.pending
        before = stream.counts()
        new, time, m1, m2 = fused_adam_step(3e-3, param, g, fused[1], 0.9, 0.999, 1e-5)
        after = stream.counts()
        assert after["eager"] - before["eager"] == 1 and after["drains"] - before["drains"] == int(pending)
        for t in (new, m1, m2):
            handle = t.primitive.backend_tensor
            assert type(handle) is FusionTensor and not handle.pending and t.device == fusion
        fused = (new, AdamState(time, m1, m2))
        plain = _plain(3e-3, plain[0], Tensor.from_numpy(g_data, flex), plain[1], 0.9, 0.999, 1e-5)
        _assert_same_step(fused, plain, dtype, step + 1)


@pytest.mark.fusion_eager_policy
def test_fusion_declines_while_its_stream_records_every_op():
    # burn's policy (and a capture's recorded run): Adam's tensor ops are recorded and fused
    stream = _fusion_stream()
    p = Tensor.from_numpy(np.ones(4, np.float32), Device.fusion())
    g = Tensor.from_numpy(np.full(4, 0.5, np.float32), Device.fusion())
    with stream.recording_every_op():
        assert fused_adam_step(0.1, p, g, None, 0.9, 0.999, 1e-5) is None
        before = stream.counts()["recorded"]
        new, state = Adam(0.9, 0.999, 1e-5, None).step(0.1, p, g, None)
        assert stream.counts()["recorded"] - before >= 5 and new.primitive.backend_tensor.pending
    want = _plain(0.1, Tensor.from_numpy(np.ones(4, np.float32), Device.flex()),
                  Tensor.from_numpy(np.full(4, 0.5, np.float32), Device.flex()), None, 0.9, 0.999, 1e-5)[0]
    np.testing.assert_allclose(new.to_numpy(), want.to_numpy(), rtol=1e-6, atol=1e-6)


@pytest.mark.fusion_eager_policy
def test_fusion_adam_step_in_place_runs_the_recorded_readers_of_its_buffers_first():
    # outs: the parameter and moments updated in their own buffers (Flex's aliasable contract);
    # an op recorded earlier that reads the parameter must see its old value
    from minidl.backends.flex import Flex
    from minidl.backends.flex.fusion import FusionFlex

    stream = _fusion_stream()
    stream.drain()
    rng = np.random.default_rng(3)
    p, g, m1, m2 = (rng.standard_normal(6).astype(np.float32) for _ in range(4))
    m2 = np.abs(m2)
    args = (3e-3, 0.9, 0.999, 1e-5, 1 - 0.9**2, 1 - 0.999**2)
    want = Flex.adam_step(p, g, m1, m2, *args)
    hp, hg, hm1, hm2 = (stream.ready(a.copy()) for a in (p, g, m1, m2))
    with stream.recording_every_op():
        doubled = FusionFlex.float_mul_scalar(hp, 2.0)  # pending, reads hp's buffer
    assert doubled.pending
    out = FusionFlex.adam_step(hp, hg, hm1, hm2, *args, outs=(hp, hm1, hm2))
    assert out[0] is hp and out[1] is hm1 and out[2] is hm2  # written where asked
    np.testing.assert_array_equal(doubled.value, p * 2)  # ran before the buffer was overwritten
    for handle, w in zip(out, want):
        np.testing.assert_array_equal(handle.value, w)
    assert FusionFlex.adam_step.aliasable == Flex.adam_step.aliasable

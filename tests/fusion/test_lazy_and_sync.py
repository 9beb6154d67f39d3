"""Nothing runs until a sync point: a value is read (``to_numpy``, ``into_scalar``, printing),
or an op no fuser takes needs its inputs. Results nobody holds stay inside the kernel."""

from __future__ import annotations

import numpy as np

from minidl.backends.flex.fusion import FusionFlex

from .helpers import last_plan, on, pending_ops, randn


def test_ops_are_recorded_and_run_only_when_a_value_is_read():
    FusionFlex.sync()
    x = on(randn(0, 3, 4))
    y = (x * 2.0 + 1.0).abs()
    assert y.primitive.backend_tensor.pending and pending_ops() == 3
    out = y.to_numpy()
    assert pending_ops() == 0 and not y.primitive.backend_tensor.pending
    np.testing.assert_allclose(out, np.abs(randn(0, 3, 4) * 2 + 1), rtol=1e-6)
    assert "read of" in last_plan().reason


def test_into_scalar_and_printing_are_sync_points():
    FusionFlex.sync()
    x = on([1.0, 2.0, 3.0])
    s = (x * x).sum()
    assert pending_ops() == 2 and s.primitive.backend_tensor.pending
    assert abs(s.into_scalar() - 14.0) < 1e-6 and pending_ops() == 0
    assert last_plan().blocks[0].fuser == "reduce"
    mask = x.greater_elem(1.5)
    assert pending_ops() == 1
    text = str(mask)
    assert "False" in text and "True" in text and pending_ops() == 0


def test_an_op_no_fuser_takes_syncs_its_pending_inputs_and_runs_on_the_inner_backend():
    FusionFlex.sync()
    x = on(randn(1, 2, 6))
    y = (x * 3.0).exp()
    z = y.argmax(1)  # no fuser takes argmax: the stream drains, with the op as the reason
    assert pending_ops() == 0 and not z.primitive.backend_tensor.pending
    assert FusionFlex.stream.history[-1].reason == "float_argmax needs its inputs"
    np.testing.assert_array_equal(z.to_numpy().ravel(), np.exp(randn(1, 2, 6) * 3).argmax(1))


def test_views_of_pending_tensors_are_recorded_not_synced():
    FusionFlex.sync()
    x = on(randn(3, 2, 6))
    y = (x * 3.0).reshape((3, 4)).swap_dims(0, 1)
    z = (x.sum_dim(1) + 1.0).expand((2, 6))
    assert pending_ops() == 6 and y.primitive.backend_tensor.pending
    want_y = (randn(3, 2, 6) * 3).reshape(3, 4).T
    np.testing.assert_allclose(y.to_numpy(), want_y, rtol=1e-6)
    want_z = np.broadcast_to(randn(3, 2, 6).sum(1, keepdims=True) + 1, (2, 6))
    np.testing.assert_allclose(z.to_numpy(), want_z, rtol=1e-5, atol=1e-6)


def test_dropped_intermediates_are_not_written_but_held_ones_are():
    FusionFlex.sync()
    x = on(randn(2, 5, 5))
    kept = x * 2.0
    out = ((kept + 1.0) * 3.0).tanh()
    out.to_numpy()
    plan = last_plan()
    assert len(plan.kernels) == 1
    # x * 2 is held by `kept`, so it was written; (kept + 1) and (* 3) were dropped
    assert plan.record.written == {kept.primitive.backend_tensor.id, out.primitive.backend_tensor.id}
    np.testing.assert_allclose(kept.to_numpy(), randn(2, 5, 5) * 2, rtol=1e-6)

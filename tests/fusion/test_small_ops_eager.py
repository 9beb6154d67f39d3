"""The fusion device's policy for small ops: an op whose inputs all exist and whose result has
fewer than ``Stream.eager_below`` elements runs eagerly on Flex (recording it costs more than
fusing it saves); a pending input, or a large result, is recorded as before. Protocol defaults
Flex implements itself (``relu``, ``softmax``, ...) run Flex's kernel when small; module ops
(``layer_norm``, ``linear``) stay the protocol's defaults, as burn's Fusion leaves them."""

from __future__ import annotations

import numpy as np
import pytest

from minidl import Device, Tensor
from minidl.backend import ModuleOps, defines, defining_class
from minidl.backends.flex.fusion import FusionFlex
from minidl.fusion import STREAM_LISTENERS
from minidl.fusion.stream import EAGER_BELOW, Stream
from minidl_book.fusion_sweep import chain

pytestmark = pytest.mark.fusion_eager_policy


def T(shape, seed=0) -> Tensor:
    data = np.random.default_rng(seed).standard_normal(shape).astype(np.float32)
    return Tensor.from_numpy(data, Device.fusion())


def handle(t: Tensor):
    return t.primitive.backend_tensor


@pytest.fixture
def events():
    seen: list[tuple[str, dict]] = []

    def listen(kind, **details):
        seen.append((kind, details))

    STREAM_LISTENERS.append(listen)
    yield seen
    STREAM_LISTENERS.remove(listen)


def test_the_threshold_is_a_class_default_a_stream_reads():
    assert Stream.eager_below == EAGER_BELOW == FusionFlex.stream.eager_below > 0


def test_a_small_op_on_ready_tensors_runs_eagerly_and_records_nothing():
    FusionFlex.sync()
    x = T((4, 8))
    before = FusionFlex.stream.counts()
    y = (x * 2.0 + x).exp()
    after = FusionFlex.stream.counts()
    assert not handle(y).pending and not FusionFlex.stream.ops
    assert after["eager"] - before["eager"] == 3 and after["recorded"] == before["recorded"]
    np.testing.assert_allclose(y.to_numpy(), np.exp(x.to_numpy() * 3), rtol=1e-6)


def test_a_large_result_is_recorded_and_its_small_reduction_waits_for_it():
    FusionFlex.sync()
    x = T((EAGER_BELOW,))
    y = x * 2.0 + 1.0
    assert handle(y).pending and len(FusionFlex.stream.ops) == 2
    total = y.sum()  # small, but its input is pending: recorded, not a drain
    assert handle(total).pending and len(FusionFlex.stream.ops) == 3
    np.testing.assert_allclose(total.to_numpy(), [(x.to_numpy() * 2 + 1).sum()], rtol=1e-4)


def test_relu_runs_flexs_kernel_when_small_and_the_recorded_default_when_large(events):
    FusionFlex.sync()
    small = T((16,)).relu()
    assert ("eager", {"op": "relu", "backend": "Flex"}) in events
    events.clear()
    large = T((EAGER_BELOW * 2,), seed=1)
    out = large.relu()
    assert handle(out).pending
    kinds = [d["operation"].kind for kind, d in events if kind == "recorded"]
    assert kinds and "relu" not in kinds  # the protocol default's primitive ops, recorded
    np.testing.assert_array_equal(out.to_numpy(), np.maximum(large.to_numpy(), 0))
    np.testing.assert_array_equal(small.to_numpy(), np.maximum(T((16,)).to_numpy(), 0))


def test_module_ops_stay_the_protocols_defaults():
    for op in ("linear", "layer_norm", "batch_norm"):
        assert not defines(FusionFlex, op) and defining_class(FusionFlex, op) is ModuleOps


@pytest.mark.parametrize("size", [16, 4096, EAGER_BELOW - 1, EAGER_BELOW, 3 * EAGER_BELOW + 5])
def test_the_chain_gives_the_same_values_eagerly_and_recorded(size, monkeypatch):
    data = np.random.default_rng(size).standard_normal(size).astype(np.float32)
    flex = chain(Tensor.from_numpy(data, Device.flex())).to_numpy()
    shipped = chain(Tensor.from_numpy(data, Device.fusion())).to_numpy()
    monkeypatch.setattr(Stream, "eager_below", 0)
    recorded = chain(Tensor.from_numpy(data, Device.fusion())).to_numpy()
    if size < EAGER_BELOW:  # every op ran Flex's own kernel: the very same values
        np.testing.assert_array_equal(shipped, flex)
    np.testing.assert_allclose(recorded, flex, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(shipped, flex, rtol=1e-6, atol=1e-6)


def test_zero_records_every_op(monkeypatch):
    monkeypatch.setattr(Stream, "eager_below", 0)
    FusionFlex.sync()
    y = T((4, 8)) * 2.0
    assert handle(y).pending and FusionFlex.stream.ops[-1].kind == "mul_scalar"
    FusionFlex.sync()


def test_the_policy_comparison_times_three_contenders_and_leaves_the_policy_as_shipped():
    from minidl_book.fusion_sweep import policies

    before = FusionFlex.stream.eager_below
    result = policies(sizes=[16, 4096], rounds=2, budget=0.002)
    assert list(result.seconds) == ["Flex (eager)", "Fusion", "Fusion, every op"]
    assert all(len(v) == 2 and min(v) > 0 for v in result.seconds.values())
    assert FusionFlex.stream.eager_below == before
    assert "Fusion, every op" in result.table()

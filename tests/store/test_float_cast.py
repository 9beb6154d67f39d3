"""``FloatCastAdapter`` (burn's ``FloatCastAdapter``) and ``chain`` (burn's ``ChainAdapter``):
a half-precision PyTorch checkpoint is refused by the plain import (every float tensor a
dtype mismatch, ``validate(False)`` applies nothing) and loads through
``PyTorchToMinidlAdapter().chain(FloatCastAdapter("float32"))``, equal to the float32 twin
to float16 tolerance and bit-exact to the twin's own float16 values widened back."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from minidl.store import (
    ApplyFailed,
    ChainAdapter,
    FloatCastAdapter,
    PytorchStore,
    PyTorchToMinidlAdapter,
    SafetensorsStore,
    TensorSlot,
    plan_apply,
)
from minidl.tensor import Tensor

from .support import Cnn, TorchCnn, scramble_torch

CAST = PyTorchToMinidlAdapter().chain(FloatCastAdapter("float32"))


@pytest.fixture(scope="module")
def twins(tmp_path_factory):
    torch.manual_seed(0)
    torch_model = scramble_torch(TorchCnn()).eval()
    path = tmp_path_factory.mktemp("half") / "half.pt"
    half = TorchCnn()
    half.load_state_dict(torch_model.state_dict())
    torch.save(half.half().state_dict(), path)  # floats to float16, the counter stays int64
    return torch_model, path


def test_plain_import_refuses_every_float_tensor(twins, plain):
    _, path = twins
    with pytest.raises(ApplyFailed) as err:
        PytorchStore.from_file(path).load_into(Cnn(plain))
    assert "DType mismatch for 'conv1.weight': expected float32, found float16" in str(err.value)
    _, result = PytorchStore.from_file(path).validate(False).apply_to(Cnn(plain))
    assert result.applied == [] and len(result.errors) == 12  # 8 params + 4 of bn
    assert result.ignored == ["bn.num_batches_tracked"]


def test_cast_import_equals_the_float32_twin_to_float16_tolerance(twins, plain):
    torch_model, path = twins
    model = PytorchStore.from_file(path).with_from_adapter(CAST).load_into(Cnn(plain))
    x = np.random.default_rng(0).standard_normal((2, 3, 8, 8)).astype(np.float32)
    with torch.no_grad():
        want32 = torch_model(torch.from_numpy(x)).numpy()
        widened = TorchCnn()
        widened.load_state_dict(torch_model.state_dict())
        want16 = widened.half().float().eval()(torch.from_numpy(x)).numpy()
    got = model.valid()(Tensor.from_numpy(x, plain)).to_numpy()
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, want16, rtol=1e-5, atol=1e-5)  # the cast is exact
    np.testing.assert_allclose(got, want32, rtol=1e-2, atol=1e-2)  # float16 rounding only
    for path_, param in model.parameters().items():
        assert param.val().to_numpy().dtype == np.float32, path_


def test_float_cast_passes_ints_and_the_target_through_and_refuses_a_non_float_target():
    adapter = FloatCastAdapter("float32")
    slot = TensorSlot("fc.weight", ("Net", "Linear"), (2,), "float32")
    ints = np.arange(2)
    same = np.ones(2, np.float32)
    assert adapter.adapt(ints, slot) is ints and adapter.adapt(same, slot) is same
    assert adapter.adapt(np.ones(2, np.float64), slot).dtype == np.float32
    with pytest.raises(ValueError, match="must be a float dtype"):
        FloatCastAdapter("int32")


def test_chain_runs_both_adapters_in_order_and_keeps_the_alternative_name():
    rng = np.random.default_rng(0)
    w = rng.standard_normal((4, 2)).astype(np.float16)
    gamma = rng.standard_normal(4).astype(np.float16)
    source = {"fc.weight": w, "ln.weight": gamma, "ln.bias": np.zeros(4, np.float16)}
    slots = [TensorSlot("fc.weight", ("Net", "Linear"), (2, 4), "float32"),
             TensorSlot("ln.gamma", ("Net", "LayerNorm"), (4,), "float32"),
             TensorSlot("ln.beta", ("Net", "LayerNorm"), (4,), "float32")]
    result = plan_apply(slots, source, CAST)
    assert result.is_success() and result.applied == ["fc.weight", "ln.gamma", "ln.beta"]
    assert np.array_equal(result.values["fc.weight"], w.T.astype(np.float32))
    assert result.values["ln.gamma"].dtype == np.float32
    assert isinstance(CAST, ChainAdapter) and CAST.ignores("bn.num_batches_tracked")


def test_cast_on_save_writes_float16(tmp_path, plain):
    model = Cnn(plain)
    path = tmp_path / "half.safetensors"
    SafetensorsStore.from_file(path).with_to_adapter(FloatCastAdapter("float16")).collect_from(model)
    back = SafetensorsStore.from_file(path)
    assert {str(a.dtype) for a in back.tensors().values()} == {"float16"}
    reloaded = back.with_from_adapter(FloatCastAdapter("float32")).load_into(Cnn(plain))
    w = model.fc.weight.val().to_numpy()
    np.testing.assert_allclose(reloaded.fc.weight.val().to_numpy(), w, rtol=1e-3, atol=1e-4)

"""A PyTorch model exported with ``torch.save(model.state_dict(), path)`` and loaded into its
minidl twin gives the same outputs (1e-5), in inference and in training mode."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from minidl.store import PytorchStore
from minidl.tensor import Tensor

from .support import TOKENS, VOCAB, Cnn, Mlp, TorchCnn, TorchMlp, scramble_torch

CASES = {
    "mlp": (TorchMlp, Mlp, lambda rng: rng.integers(0, VOCAB, (6, TOKENS))),
    "cnn": (TorchCnn, Cnn, lambda rng: rng.standard_normal((5, 3, 8, 8)).astype(np.float32)),
}


def _exported(case: str, tmp_path, seed: int = 0):
    torch_cls, _, make_input = CASES[case]
    torch.manual_seed(seed)
    torch_model = scramble_torch(torch_cls(), seed)
    path = tmp_path / f"{case}.pt"
    torch.save(torch_model.state_dict(), path)
    return torch_model, path, make_input(np.random.default_rng(seed + 1))


def _close(got: np.ndarray, want: np.ndarray) -> None:
    assert got.shape == want.shape and got.dtype == want.dtype
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("case", CASES)
def test_torch_file_loaded_into_twin_matches_torch_in_inference_mode(case, device, tmp_path):
    torch_model, path, x = _exported(case, tmp_path)
    model = PytorchStore.from_file(path).load_into(CASES[case][1](device))

    want = torch_model.eval()(torch.from_numpy(x)).detach().numpy()
    got = model.valid()(Tensor.from_numpy(x, device)).to_numpy()
    _close(got, want)
    # the running statistics were loaded: inference uses them (not batch statistics)
    np.testing.assert_array_equal(model.bn.running_mean.value().to_numpy(), torch_model.bn.running_mean.numpy())
    np.testing.assert_array_equal(model.bn.running_var.value().to_numpy(), torch_model.bn.running_var.numpy())


@pytest.mark.parametrize("case", CASES)
def test_torch_file_loaded_into_twin_matches_torch_in_training_mode(case, device, tmp_path):
    torch_model, path, x = _exported(case, tmp_path, seed=3)
    loaded_mean = torch_model.bn.running_mean.clone().numpy()
    model = PytorchStore.from_file(path).load_into(CASES[case][1](device)).train()

    want = torch_model.train()(torch.from_numpy(x)).detach().numpy()  # BatchNorm: batch stats
    got = model(Tensor.from_numpy(x, device.autodiff())).to_numpy()
    _close(got, want)
    # both mixed the same batch mean into the LOADED running mean (momentum 0.1)
    new_mean = model.bn.running_mean.value_sync().to_numpy()
    assert not np.allclose(new_mean, loaded_mean)
    np.testing.assert_allclose(new_mean, torch_model.bn.running_mean.numpy(), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("case", CASES)
def test_state_dict_in_memory_loads_like_the_file(case, plain, tmp_path):
    torch_model, path, x = _exported(case, tmp_path, seed=5)
    from_file = PytorchStore.from_file(path).load_into(CASES[case][1](plain))
    from_memory = PytorchStore.from_state_dict(torch_model.state_dict()).load_into(CASES[case][1](plain))
    for name, param in from_file.parameters().items():
        np.testing.assert_array_equal(param.val().to_numpy(), from_memory.parameters()[name].val().to_numpy())
    got = from_memory.valid()(Tensor.from_numpy(x, plain)).to_numpy()
    _close(got, torch_model.eval()(torch.from_numpy(x)).detach().numpy())


def test_adapter_transposes_linear_renames_norms_and_ignores_num_batches_tracked(plain, tmp_path):
    torch_model, path, _ = _exported("mlp", tmp_path)
    store = PytorchStore.from_file(path)
    model, result = store.apply_to(Mlp(plain))
    sd = torch_model.state_dict()
    np.testing.assert_array_equal(model.fc1.weight.val().to_numpy(), sd["fc1.weight"].numpy().T)
    np.testing.assert_array_equal(model.fc1.bias.val().to_numpy(), sd["fc1.bias"].numpy())
    np.testing.assert_array_equal(model.ln.gamma.val().to_numpy(), sd["ln.weight"].numpy())
    np.testing.assert_array_equal(model.bn.beta.val().to_numpy(), sd["bn.bias"].numpy())
    # Embedding's weight is [n, d] on both sides: not a Linear, not transposed
    np.testing.assert_array_equal(model.emb.weight.val().to_numpy(), sd["emb.weight"].numpy())
    assert result.ignored == ["bn.num_batches_tracked"]
    assert result.missing == [] and result.unused == [] and result.errors == []
    assert set(result.applied) == set(model.parameters()) | set(model.running_states())
    assert "bn.running_mean" in result.applied and "bn.training" not in result.applied


def test_subclass_of_linear_is_still_transposed(plain):
    from minidl.module import Module
    from minidl.nn.linear import Linear, LinearConfig

    class MyLinear(Linear):
        pass

    class Net(Module):
        def __init__(self):
            base = LinearConfig(3, 2).init(plain)
            self.head = MyLinear(base.weight, base.bias)

    torch_linear = torch.nn.Linear(3, 2)
    sd = {f"head.{k}": v for k, v in torch_linear.state_dict().items()}
    model = PytorchStore.from_state_dict(sd).load_into(Net())
    np.testing.assert_array_equal(model.head.weight.val().to_numpy(), torch_linear.weight.detach().numpy().T)

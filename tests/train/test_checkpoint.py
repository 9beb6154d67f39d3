"""minidl.train checkpoints: model record + config + optimizer state, resumed bit-exactly."""

from __future__ import annotations

import numpy as np
import pytest

from minidl import Device, Tensor
from minidl.module import Module, config
from minidl.nn import LinearConfig, MseLoss
from minidl.optim import AdamConfig, MomentumConfig, SgdConfig
from minidl.train import checkpoint_paths, restore_checkpoint, save_checkpoint

AD = Device.flex().autodiff()


@config
class TinyConfig:
    width: int = 3

    def init(self, device: Device) -> Tiny:
        return Tiny(device, self.width)


class Tiny(Module):
    def __init__(self, device: Device, width: int):
        self.fc = LinearConfig(4, width).init(device)

    def forward(self, x: Tensor) -> Tensor:
        return self.fc(x)


def steps(model, optimizer, n: int):
    rng = np.random.default_rng(7)
    losses = []
    for _ in range(n):
        x = Tensor.from_numpy(rng.standard_normal((5, 4)).astype(np.float32), AD)
        y = Tensor.from_numpy(rng.standard_normal((5, 3)).astype(np.float32), AD)
        loss = MseLoss()(model(x), y)
        losses.append(float(loss.into_scalar()))
        model = optimizer.step(0.05, model, loss.backward())
    return model, losses


@pytest.mark.parametrize("make", [lambda: AdamConfig().init(),
                                  lambda: SgdConfig().with_momentum(MomentumConfig()).init()],
                         ids=["adam", "sgd-momentum"])
def test_resume_from_a_checkpoint_continues_bit_exactly(tmp_path, make):
    AD.seed(0)
    optimizer = make()
    model, _ = steps(TinyConfig().init(AD), optimizer, 3)
    paths = save_checkpoint(tmp_path, 3, model, TinyConfig(), optimizer)
    assert paths == checkpoint_paths(tmp_path, 3) and all(p.exists() for p in paths.values())
    assert paths["model"].with_suffix(".json").exists()
    _, uninterrupted = steps(model, optimizer, 3)

    fresh = make()
    resumed_model = restore_checkpoint(tmp_path, 3, TinyConfig, AD, fresh)
    assert resumed_model.fc.weight.id != model.fc.weight.id  # new ids, state re-keyed by path
    assert set(fresh.states) == {p.id for p in resumed_model.parameters().values()}
    _, resumed = steps(resumed_model, fresh, 3)
    assert resumed == uninterrupted

    _, without_state = steps(restore_checkpoint(tmp_path, 3, TinyConfig, AD, make()), make(), 3)
    assert without_state[1:] != uninterrupted[1:]  # the optimizer state matters after step 1


def test_restoring_into_a_model_without_the_recorded_path_is_refused(tmp_path):
    AD.seed(0)
    optimizer = AdamConfig().init()
    model, _ = steps(TinyConfig().init(AD), optimizer, 1)
    save_checkpoint(tmp_path, 1, model, TinyConfig(), optimizer)

    import safetensors

    from minidl.train import load_optimizer_record

    class Other(Module):
        def __init__(self):
            self.head = LinearConfig(4, 3).init(AD)

    with safetensors.safe_open(str(checkpoint_paths(tmp_path, 1)["optim"]), framework="numpy") as f:
        metadata, tensors = f.metadata(), {k: f.get_tensor(k) for k in f.keys()}
    with pytest.raises(ValueError, match=r"states for \['fc.bias', 'fc.weight'\]"):
        load_optimizer_record(AdamConfig().init(), Other(), tensors, metadata, AD)

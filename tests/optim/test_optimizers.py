"""Optimizers: Sgd / Adam / AdamW step for step against torch.optim, gradient clipping, a step
returns a new model and leaves the old one, and small models learn."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from minidl.dispatch import Device, backend_for
from minidl.module import Module
from minidl.nn import (
    AdaptiveAvgPool2dConfig,
    Conv2dConfig,
    CrossEntropyLossConfig,
    LinearConfig,
    Relu,
    Sequential,
)
from minidl.optim import (
    AdamConfig,
    AdamWConfig,
    GradientClippingConfig,
    GradientsParams,
    MomentumConfig,
    SgdConfig,
    WeightDecayConfig,
)
from minidl.tensor import Tensor

AD = Device.ndarray().autodiff()

#: The autodiff devices the optimizer behaviour runs on: every backend must step alike. The GPU
#: device holds float32 and int32 only, and every tensor here is float32 (labels int).
KINDS = ["ndarray", "flex", "wgpu"]


def _device(kind: str) -> Device:
    """The autodiff device of a kind, its backend loaded (a backend that fails to load fails
    the test here)."""
    plain = {"ndarray": Device.ndarray, "flex": Device.flex, "wgpu": Device.wgpu}[kind]()
    backend_for(plain)
    return plain.autodiff()


def _T(a, device=AD) -> Tensor:
    return Tensor.from_numpy(np.ascontiguousarray(a, dtype=np.float32), device=device)


def _twin(model) -> torch.nn.Linear:
    twin = torch.nn.Linear(3, 2)
    with torch.no_grad():
        twin.weight.copy_(torch.from_numpy(model.weight.val().to_numpy().T.copy()))
        twin.bias.copy_(torch.from_numpy(model.bias.val().to_numpy().copy()))
    return twin


def _assert_same(model, twin, what):
    np.testing.assert_allclose(model.weight.val().to_numpy(), twin.weight.detach().numpy().T, rtol=1e-5, atol=1e-6, err_msg=what)
    np.testing.assert_allclose(model.bias.val().to_numpy(), twin.bias.detach().numpy(), rtol=1e-5, atol=1e-6, err_msg=what)


CASES = [
    ("sgd", SgdConfig(), lambda p: torch.optim.SGD(p, lr=0.1)),
    ("sgd+momentum", SgdConfig(momentum=MomentumConfig(0.9, 0.1, False)),
     lambda p: torch.optim.SGD(p, lr=0.1, momentum=0.9, dampening=0.1)),
    ("sgd+nesterov+decay", SgdConfig(weight_decay=WeightDecayConfig(0.05), momentum=MomentumConfig(0.8, 0.0, True)),
     lambda p: torch.optim.SGD(p, lr=0.1, momentum=0.8, nesterov=True, weight_decay=0.05)),
    ("adam", AdamConfig(), lambda p: torch.optim.Adam(p, lr=0.1, eps=1e-5)),
    ("adam+decay", AdamConfig(weight_decay=WeightDecayConfig(0.1)),
     lambda p: torch.optim.Adam(p, lr=0.1, eps=1e-5, weight_decay=0.1)),
    ("adamw", AdamWConfig(weight_decay=0.2), lambda p: torch.optim.AdamW(p, lr=0.1, eps=1e-5, weight_decay=0.2)),
]


@pytest.mark.parametrize("name, cfg, make_torch", CASES, ids=[c[0] for c in CASES])
@pytest.mark.parametrize("kind", KINDS)
def test_steps_match_torch_optim(kind, name, cfg, make_torch):
    device = _device(kind)
    model = LinearConfig(3, 2).init(device)
    twin = _twin(model)
    optimizer, torch_opt = cfg.init(), make_torch(twin.parameters())
    rng = np.random.default_rng(0)
    for step in range(4):
        x = rng.standard_normal((5, 3)).astype(np.float32)
        out = model(_T(x, device))
        grads = (out * out).sum().backward()
        model = optimizer.step(0.1, model, grads)
        torch_opt.zero_grad()
        twin(torch.from_numpy(x)).pow(2).sum().backward()
        torch_opt.step()
        _assert_same(model, twin, f"{name} step {step}")


@pytest.mark.parametrize("kind", KINDS)
def test_step_returns_a_new_model_and_leaves_the_old_one_untouched(kind):
    device = _device(kind)
    model = LinearConfig(3, 2).init(device)
    before = model.weight.val().to_numpy().copy()
    grads = model(_T(np.ones((2, 3)), device)).sum().backward()
    new = AdamConfig().init().step(0.01, model, grads)
    assert new is not model and new.weight is not model.weight
    np.testing.assert_array_equal(model.weight.val().to_numpy(), before)
    assert not np.allclose(new.weight.val().to_numpy(), before)
    assert new.weight.id == model.weight.id
    weight = new.weight.val()
    assert weight.device.is_autodiff() and weight.is_require_grad()
    again = new(_T(np.ones((2, 3)), device)).sum().backward()  # the new params are leaves of a new graph
    assert weight.grad(again) is not None


def test_optimizer_state_is_keyed_by_param_id():
    model = LinearConfig(3, 2).init(AD)
    optimizer = AdamConfig().init()
    grads = model(_T(np.ones((1, 3)))).sum().backward()
    model = optimizer.step(0.01, model, grads)
    assert set(optimizer.states) == {model.weight.id, model.bias.id}
    assert optimizer.states[model.weight.id].time == 1


def test_frozen_params_get_no_gradient_and_stay():
    class Two(Module):
        def __init__(self):
            self.a = LinearConfig(3, 3).init(AD)
            self.b = LinearConfig(3, 1).init(AD)

        def forward(self, x):
            return self.b(self.a(x))

    model = Two()
    model.a = model.a.freeze()
    before = model.a.weight.val().to_numpy().copy()
    grads = model(_T(np.ones((2, 3)))).sum().backward()
    new = SgdConfig().init().step(0.5, model, grads)
    np.testing.assert_array_equal(new.a.weight.val().to_numpy(), before)
    assert new.b.weight is not model.b.weight


def test_gradients_params_takes_grads_out_of_backwards_result():
    model = LinearConfig(3, 2).init(AD)
    grads = model(_T(np.ones((1, 3)))).sum().backward()
    params = GradientsParams.from_grads(grads, model)
    assert len(params) == 2 and model.weight.id in params
    assert model.weight.val().grad(grads) is None  # removed, as burn's grad_remove
    assert len(GradientsParams.from_grads(grads, model)) == 0


@pytest.mark.parametrize("kind", KINDS)
def test_clipping_by_value_matches_torch(kind):
    device = _device(kind)
    model = LinearConfig(3, 2).init(device)
    twin = _twin(model)
    x = np.full((4, 3), 3.0, np.float32)
    grads = (model(_T(x, device)) * 10.0).sum().backward()
    model = SgdConfig(gradient_clipping=GradientClippingConfig.Value(0.5)).init().step(1.0, model, grads)
    (twin(torch.from_numpy(x)) * 10.0).sum().backward()
    torch.nn.utils.clip_grad_value_(twin.parameters(), 0.5)
    torch.optim.SGD(twin.parameters(), lr=1.0).step()
    _assert_same(model, twin, "clip by value")


@pytest.mark.parametrize("kind", KINDS)
def test_clipping_by_norm_rescales_each_gradient_on_its_own(kind):
    device = _device(kind)
    model = LinearConfig(3, 2).init(device)
    x = np.arange(12, dtype=np.float32).reshape(4, 3)
    before_w, before_b = model.weight.val().to_numpy().copy(), model.bias.val().to_numpy().copy()
    grads = model(_T(x, device)).sum().backward()
    grad_w = np.repeat(x.sum(0)[:, None], 2, axis=1)
    grad_b = np.full(2, 4.0, np.float32)
    model = SgdConfig(gradient_clipping=GradientClippingConfig.Norm(1.0)).init().step(1.0, model, grads)
    for new, before, grad in ((model.weight, before_w, grad_w), (model.bias, before_b, grad_b)):
        step = before - new.val().to_numpy()
        np.testing.assert_allclose(np.linalg.norm(step), 1.0, rtol=1e-4)
        np.testing.assert_allclose(step, grad / (np.linalg.norm(grad) + 1e-6), rtol=1e-4)


def test_clipping_threshold_must_be_positive():
    with pytest.raises(ValueError, match="positive"):
        SgdConfig(gradient_clipping=GradientClippingConfig.Norm(0.0)).init()


def test_optimizer_configs_round_trip_through_json():
    for cfg in (SgdConfig(WeightDecayConfig(0.1), MomentumConfig(), GradientClippingConfig.Norm(2.0)),
                AdamConfig(grad_clipping=GradientClippingConfig.Value(1.0)), AdamWConfig()):
        assert type(cfg).from_json(cfg.to_json()) == cfg


# ----- small models learn ------------------------------------------------------------------------
def _blobs(n: int = 64):
    rng = np.random.default_rng(1)
    labels = rng.integers(0, 2, n)
    points = rng.standard_normal((n, 2)) * 0.7 + np.where(labels[:, None] == 1, 1.5, -1.5)
    return points.astype(np.float32), labels.astype(np.int64)


def _bars(n: int = 32):
    rng = np.random.default_rng(2)
    labels = rng.integers(0, 2, n)
    images = rng.standard_normal((n, 1, 8, 8)).astype(np.float32) * 0.3
    for i, label in enumerate(labels):
        col = rng.integers(1, 7)
        if label:
            images[i, 0, :, col] += 2.0  # vertical bar
        else:
            images[i, 0, col, :] += 2.0  # horizontal bar
    return images, labels.astype(np.int64)


class SmallCnn(Module):
    def __init__(self, device):
        self.conv = Conv2dConfig((1, 4), (3, 3)).init(device)
        self.relu = Relu()
        self.pool = AdaptiveAvgPool2dConfig((2, 2)).init()
        self.head = LinearConfig(16, 2).init(device)

    def forward(self, x):
        x = self.pool(self.relu(self.conv(x)))
        return self.head(x.reshape((x.shape[0], 16)))


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("make, data, steps, lr", [
    (lambda d: Sequential(LinearConfig(2, 16).init(d), Relu(), LinearConfig(16, 2).init(d)), _blobs, 40, 0.05),
    (SmallCnn, _bars, 40, 0.05),
], ids=["mlp", "cnn"])
def test_small_model_learns_with_adam(kind, make, data, steps, lr):
    device = _device(kind)
    device.seed(0)
    model = make(device)
    inputs, labels = data()
    x, y = _T(inputs, device), Tensor.from_numpy(labels, device=device)
    loss_fn = CrossEntropyLossConfig().init()
    optimizer = AdamConfig().init()
    losses = []
    first_model = model
    first_weights = {k: p.val().to_numpy().copy() for k, p in model.parameters().items()}
    for _ in range(steps):
        loss = loss_fn(model(x), y)
        losses.append(float(loss.into_scalar()))
        model = optimizer.step(lr, model, loss.backward())
    assert losses[-1] < 0.5 * losses[0], losses
    for path, value in first_weights.items():  # the first model never changed
        np.testing.assert_array_equal(first_model.parameters()[path].val().to_numpy(), value)


def test_step_on_backwards_result_equals_step_on_gradients_params():
    """``step`` takes each gradient out of backward's result while it walks the model; that
    is ``GradientsParams.from_grads`` then a step, to the bit, and a lazy layer never used
    stays uninitialized."""
    class WithUnused(Module):
        def __init__(self):
            self.fc = LinearConfig(3, 3).init(AD)
            self.unused = LinearConfig(3, 5).init(AD)

        def forward(self, x):
            return self.fc(x) * 2.0

    x = _T(np.arange(6.0).reshape(2, 3) / 5.0)
    model = WithUnused()
    grads = model(x).sum().backward()
    direct = SgdConfig().init().step(0.1, model, grads)
    assert model.fc.weight.val().grad(grads) is None  # taken out, as from_grads does
    params = GradientsParams.from_grads(model(x).sum().backward(), model)
    via_params = SgdConfig().init().step(0.1, model, params)
    assert len(params) == 0  # the step took them all
    for new in (direct, via_params):
        assert new.fc.weight.id == model.fc.weight.id
        assert not new.unused.weight.is_initialized()
    for name in ("weight", "bias"):
        np.testing.assert_array_equal(getattr(direct.fc, name).val().to_numpy(),
                                      getattr(via_params.fc, name).val().to_numpy())
    assert not np.array_equal(direct.fc.weight.val().to_numpy(), model.fc.weight.val().to_numpy())

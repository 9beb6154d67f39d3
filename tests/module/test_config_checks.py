"""Every field of every config is checked once, at ``init`` (``step`` for the learning rate), by
the one mechanism in :mod:`minidl.module.config`: a wrong type or an out-of-range value is a
``ConfigError`` naming the config, the field, what was expected and what was found — never a
bool taken as a number, a string taken as True, or an AttributeError later that names nothing."""

from __future__ import annotations

import inspect
import math
import typing

import numpy as np
import pytest

import minidl.nn as nn
import minidl.optim as optim
from minidl import Device, Tensor
from minidl.module import ConfigError, is_config
from minidl.module.codec import field_types

VALID = {
    "LinearConfig": lambda: nn.LinearConfig(3, 2),
    "Conv1dConfig": lambda: nn.Conv1dConfig(2, 4, 3),
    "Conv2dConfig": lambda: nn.Conv2dConfig((2, 4), (3, 3)),
    "ConvTranspose2dConfig": lambda: nn.ConvTranspose2dConfig((2, 4), (3, 3)),
    "BatchNormConfig": lambda: nn.BatchNormConfig(3),
    "LayerNormConfig": lambda: nn.LayerNormConfig(4),
    "EmbeddingConfig": lambda: nn.EmbeddingConfig(5, 3),
    "DropoutConfig": lambda: nn.DropoutConfig(0.5),
    "MaxPool2dConfig": lambda: nn.MaxPool2dConfig((2, 2)),
    "AvgPool2dConfig": lambda: nn.AvgPool2dConfig((2, 2)),
    "AdaptiveAvgPool2dConfig": lambda: nn.AdaptiveAvgPool2dConfig((2, 2)),
    "AdaptiveMaxPool2dConfig": lambda: nn.AdaptiveMaxPool2dConfig((2, 2)),
    "MaxPool1dConfig": lambda: nn.MaxPool1dConfig(2),
    "AvgPool1dConfig": lambda: nn.AvgPool1dConfig(2),
    "AdaptiveAvgPool1dConfig": lambda: nn.AdaptiveAvgPool1dConfig(2),
    "AdaptiveMaxPool1dConfig": lambda: nn.AdaptiveMaxPool1dConfig(2),
    "LeakyReluConfig": lambda: nn.LeakyReluConfig(),
    "SoftplusConfig": lambda: nn.SoftplusConfig(),
    "CrossEntropyLossConfig": lambda: nn.CrossEntropyLossConfig(),
    "AdamConfig": lambda: optim.AdamConfig(weight_decay=optim.WeightDecayConfig(0.1)),
    "AdamWConfig": lambda: optim.AdamWConfig(),
    "SgdConfig": lambda: optim.SgdConfig(optim.WeightDecayConfig(0.1), optim.MomentumConfig()),
}

CONFIGS = sorted({name for name in [*nn.__all__, *optim.__all__] if name.endswith("Config")
                  and is_config(getattr(nn, name, None) or getattr(optim, name))})


def _init(cfg):
    params = inspect.signature(cfg.init).parameters
    return cfg.init(Device.ndarray()) if params else cfg.init()


def _bad_values(tp) -> list:
    """Values of the wrong type for the annotation ``tp`` (None is fine for ``X | None``)."""
    args = typing.get_args(tp)
    if type(None) in args:
        inner = [a for a in args if a is not type(None)]
        return _bad_values(inner[0]) if len(inner) == 1 else ["nonsense"]
    if tp is float:
        return [True, "0.5", math.nan, math.inf]
    if tp is int:
        return [True, 1.5, "3"]
    if tp is bool:
        return ["no", 1, None]
    if tp is str:
        return [3, None]
    if typing.get_origin(tp) is tuple:
        return ["12", (1.5, 2) if args[0] is int else ("a",), 3]
    return ["nonsense", 3]


def test_every_layer_and_optimizer_config_has_a_valid_example():
    assert sorted(set(CONFIGS) - {"WeightDecayConfig", "MomentumConfig", "GradientClippingConfig"}) == sorted(VALID)
    for make in VALID.values():
        _init(make())


@pytest.mark.parametrize("name", sorted(VALID))
def test_every_field_refuses_a_wrong_type_at_init_naming_config_and_field(name):
    cfg = VALID[name]()
    for field, tp in field_types(type(cfg)).items():
        for bad in _bad_values(tp):
            broken = getattr(cfg, f"with_{field}")(bad)  # building is fine: checks run at init
            with pytest.raises(ConfigError) as err:
                _init(broken)
            message = str(err.value)
            assert message.startswith(f"{name}.{field}: "), message
            assert repr(bad) in message, message
            # the standard wording, except where burn words the range itself (Dropout's prob)
            assert "expected" in message or "Dropout probability" in message, message


@pytest.mark.parametrize("cfg, field, found", [
    (lambda: nn.BatchNormConfig(3, epsilon=True), "epsilon", "True (bool)"),
    (lambda: nn.BatchNormConfig(3, momentum=False), "momentum", "False (bool)"),
    (lambda: nn.BatchNormConfig(3, momentum=1.5), "momentum", "1.5"),
    (lambda: nn.BatchNormConfig(3, epsilon=0.0), "epsilon", "0.0"),
    (lambda: nn.LayerNormConfig(4, epsilon=True), "epsilon", "True (bool)"),
    (lambda: nn.LayerNormConfig(4, epsilon=-1e-5), "epsilon", "-1e-05"),
    (lambda: nn.LeakyReluConfig(negative_slope=True), "negative_slope", "True (bool)"),
    (lambda: nn.LinearConfig(3, 2, bias="no"), "bias", "'no' (str)"),
    (lambda: nn.LinearConfig(3, 2, layout="Row"), "layout", "'Row' (str)"),
    (lambda: nn.Conv2dConfig((2, 4), (3, 3), padding="same"), "padding", "'same' (str)"),
    (lambda: nn.SoftplusConfig(beta=0.0), "beta", "0.0"),
    (lambda: nn.CrossEntropyLossConfig(reduction="none"), "reduction", "'none'"),
    (lambda: nn.CrossEntropyLossConfig(weights=(1.0, -1.0)), "weights", "(1.0, -1.0)"),
])
def test_layer_config_nonsense_is_refused_at_init(cfg, field, found):
    config = cfg()
    with pytest.raises(ConfigError) as err:
        _init(config)
    message = str(err.value)
    assert message.startswith(f"{type(config).__name__}.{field}: expected"), message
    assert found in message, message


@pytest.mark.parametrize("cfg, where", [
    (lambda: optim.AdamConfig(beta_1=1.5), "AdamConfig.beta_1"),
    (lambda: optim.AdamConfig(beta_1=-0.1), "AdamConfig.beta_1"),
    (lambda: optim.AdamConfig(beta_2=math.nan), "AdamConfig.beta_2"),
    (lambda: optim.AdamConfig(beta_2=1.0), "AdamConfig.beta_2"),
    (lambda: optim.AdamConfig(epsilon=0.0), "AdamConfig.epsilon"),
    (lambda: optim.AdamConfig(epsilon=-1e-8), "AdamConfig.epsilon"),
    (lambda: optim.AdamConfig(weight_decay=optim.WeightDecayConfig(-0.1)), "AdamConfig.weight_decay.penalty"),
    (lambda: optim.AdamConfig(weight_decay=optim.WeightDecayConfig(math.nan)), "AdamConfig.weight_decay.penalty"),
    (lambda: optim.AdamWConfig(weight_decay=-1.0), "AdamWConfig.weight_decay"),
    (lambda: optim.AdamWConfig(beta_1=True), "AdamWConfig.beta_1"),
    (lambda: optim.SgdConfig(momentum=optim.MomentumConfig(momentum=-0.5)), "SgdConfig.momentum.momentum"),
    (lambda: optim.SgdConfig(momentum=optim.MomentumConfig(dampening=2.0)), "SgdConfig.momentum.dampening"),
    (lambda: optim.SgdConfig(momentum=optim.MomentumConfig(nesterov="yes")), "SgdConfig.momentum.nesterov"),
    (lambda: optim.SgdConfig(weight_decay=0.1), "SgdConfig.weight_decay"),
])
def test_optimizer_configs_validate_every_field_at_init(cfg, where):
    with pytest.raises(ConfigError, match=rf"^{where}: expected "):
        cfg().init()


@pytest.mark.parametrize("lr", [math.nan, -0.1, "0.1", True, math.inf, None])
def test_step_refuses_a_learning_rate_that_is_not_a_finite_number_at_least_zero(lr):
    device = Device.ndarray().autodiff()
    model = nn.LinearConfig(3, 2).init(device)
    x = Tensor.from_data(np.ones((4, 3), np.float32), device)
    grads = model.forward(x).sum().backward()
    for make in (optim.AdamConfig(), optim.SgdConfig(), optim.AdamWConfig()):
        with pytest.raises(ConfigError, match=r"\.step\.lr: expected a finite float"):
            make.init().step(lr, model, grads)
    optim.AdamConfig().init().step(0.0, model, grads)  # zero is a learning rate (no update)


def test_config_errors_are_value_and_type_errors():
    with pytest.raises(ValueError):
        nn.BatchNormConfig(3, momentum=2.0).init(Device.ndarray())
    with pytest.raises(TypeError):
        nn.LinearConfig(3, 2, bias="no").init(Device.ndarray())


def test_the_fields_of_a_config_enum_variant_are_checked_too():
    with pytest.raises(ConfigError, match=r"^LinearConfig\.initializer\.Normal\.mean: expected a finite float, found 'a'"):
        nn.LinearConfig(3, 2, initializer=nn.Initializer.Normal(mean="a", std=1.0)).init(Device.ndarray())
    with pytest.raises(ConfigError, match=r"^Conv2dConfig\.padding\.Explicit\.left: expected an int, found 'x'"):
        nn.Conv2dConfig((2, 4), (3, 3), padding=nn.PaddingConfig2d.Explicit(1, "x", 0, 0)).init(Device.ndarray())

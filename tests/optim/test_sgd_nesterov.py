"""Nesterov momentum needs a momentum and zero dampening: refused at init, as PyTorch does."""

from __future__ import annotations

import pytest
import torch

from minidl.module import ConfigError
from minidl.optim import MomentumConfig, SgdConfig

TORCH_MESSAGE = "Nesterov momentum requires a momentum and zero dampening"


@pytest.mark.parametrize("momentum, dampening", [(0.9, 0.1), (0.0, 0.0), (0.5, 1.0)],
                         ids=["damped", "zero-momentum", "fully-damped"])
def test_nesterov_without_momentum_or_with_dampening_is_refused_like_pytorch(momentum, dampening):
    config = SgdConfig(momentum=MomentumConfig(momentum, dampening, True))
    with pytest.raises(ConfigError, match=f"SgdConfig.momentum: {TORCH_MESSAGE} "
                                          rf"\(found momentum {momentum}, dampening {dampening}\)"):
        config.init()
    with pytest.raises(ValueError, match=TORCH_MESSAGE):  # PyTorch refuses the same settings
        torch.optim.SGD([torch.zeros(1, requires_grad=True)], lr=0.1, momentum=momentum,
                        dampening=dampening, nesterov=True)


def test_burns_default_momentum_with_nesterov_is_refused_and_the_fix_is_accepted():
    with pytest.raises(ConfigError, match=TORCH_MESSAGE):
        SgdConfig(momentum=MomentumConfig(nesterov=True)).init()  # burn's default dampening 0.1
    SgdConfig(momentum=MomentumConfig(0.9, 0.0, True)).init()
    SgdConfig(momentum=MomentumConfig(0.9, 0.1, False)).init()  # damped, not Nesterov: fine

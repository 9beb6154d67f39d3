"""A small MLP training step with dropout, built twice from the same seed: one runs eagerly,
one is captured, and the tests compare them."""

from __future__ import annotations

import numpy as np

from minidl import Device, Tensor
from minidl.nn import CrossEntropyLossConfig, DropoutConfig, LinearConfig, Relu, Sequential
from minidl.optim import AdamConfig, SgdConfig

DEVICE = Device.flex().autodiff()
BATCH, IN, HIDDEN, OUT = 16, 12, 24, 5


def batches(n: int, seed: int = 3, device: Device = DEVICE) -> list[tuple[Tensor, Tensor]]:
    rng = np.random.default_rng(seed)
    return [(Tensor.from_numpy(rng.standard_normal((BATCH, IN)).astype(np.float32), device),
             Tensor.from_numpy(rng.integers(0, OUT, BATCH).astype(np.int64), device)) for _ in range(n)]


def schedule(i: int) -> float:
    return 0.05 * 0.97 ** i


class Trainer:
    """Model + optimizer + the step function (returns the loss tensor; no host read)."""

    def __init__(self, optimizer: str = "sgd", dropout: float = 0.3, seed: int = 7,
                 device: Device = DEVICE):
        device.seed(seed)
        self.model = Sequential(LinearConfig(IN, HIDDEN).init(device), Relu(),
                                DropoutConfig(dropout).init(), LinearConfig(HIDDEN, OUT).init(device))
        for param in self.model.parameters().values():
            param.val()  # draw the lazy weights now, in a fixed order
        self.optim = (AdamConfig() if optimizer == "adam" else SgdConfig()).init()
        self.loss_fn = CrossEntropyLossConfig().init()

    def step(self, x: Tensor, y: Tensor, lr: float) -> Tensor:
        loss = self.loss_fn(self.model(x), y)
        self.model = self.optim.step(lr, self.model, loss.backward())
        return loss

    def params(self) -> list[np.ndarray]:
        return [p.val().to_numpy() for p in self.model.parameters().values()]

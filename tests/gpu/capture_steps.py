"""Training steps written as ``step(x, y, lr) -> loss`` for capture on the GPU: the training
chapter's digits CNN (Adam, dropout 0.2, from the weights ``minidl_book.workloads`` draws)
and its batches; the MLP is ``tests.capture.helpers.Trainer``."""

from __future__ import annotations

import numpy as np

from minidl import Device, Tensor
from minidl.nn import CrossEntropyLossConfig
from minidl.optim import AdamConfig, GradientsParams


class CnnTrainer:
    """The digits CNN, its Adam optimizer and its step (the loss returned, no host read)."""

    def __init__(self, device: Device):
        import torch

        from minidl.store import PytorchStore
        from minidl_book.workloads import SEED, DigitsCnnConfig, torch_cnn

        cfg = DigitsCnnConfig()
        torch.manual_seed(SEED)
        weights = torch_cnn(cfg).state_dict()
        self.model = PytorchStore.from_state_dict(weights).load_into(cfg.init(device))
        device.seed(SEED)  # the dropout masks
        self.optim, self.loss_fn = AdamConfig().init(), CrossEntropyLossConfig().init()

    def step(self, x: Tensor, y: Tensor, lr: float) -> Tensor:
        loss = self.loss_fn(self.model(x), y)
        grads = GradientsParams.from_grads(loss.backward(), self.model)
        self.model = self.optim.step(lr, self.model, grads)
        return loss

    def params(self) -> list[np.ndarray]:
        return [p.val().to_numpy() for p in self.model.parameters().values()]


def cnn_batches(n: int, device: Device) -> list[tuple[Tensor, Tensor]]:
    """``n`` batches of the chapter's digits batch, its rows rolled by one more each time."""
    from minidl_book.workloads import cnn_batch

    x, y = cnn_batch()
    return [(Tensor.from_numpy(np.roll(x, k, axis=0), device), Tensor.from_numpy(np.roll(y, k, axis=0), device))
            for k in range(n)]


def cnn_lr(i: int) -> float:
    from minidl_book.workloads import CNN_LR

    return CNN_LR * 0.9**i

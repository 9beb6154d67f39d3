"""The book's two real training workloads, as one step each, in minidl and in PyTorch.

- **CNN**: the training chapter's digits CNN (``DigitsCnn``: two ``Conv2d -> BatchNorm -> ReLU
  -> max-pool`` blocks, ``Linear -> ReLU -> Dropout -> Linear``), batch 32, Adam (lr 3e-3,
  burn's epsilon 1e-5), on the first batch of the chapter's seeded loader (seed 0).
- **MLP**: the performance chapter's MLP 784-256-10, batch 128, SGD (lr 0.01), on the same
  seeded random batch as ``bench/mlp_processes.py`` and ``bench/stack.py``.

Each builder returns a :class:`TrainStep`: calling it runs one training step (forward, loss,
backward, optimizer update) and reads the loss back as a float, as the chapter's loop does
(``LossMetric`` reads it every step; on the fusion device that read is the step's sync point).
minidl and PyTorch start from the same weights: PyTorch draws them with ``torch.manual_seed``
and minidl loads them through ``PytorchStore``, as the training chapter does.

``bench/steps.py`` times these steps, the fusion chapter and the fusion tests run them; the
model classes are the training chapter's, kept identical here so those measure what the
chapter trains.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from minidl import Device, Tensor
from minidl.data import DataLoaderBuilder, DigitsBatcher, DigitsDataset
from minidl.module import Module, config
from minidl.nn import (
    BatchNormConfig,
    Conv2dConfig,
    CrossEntropyLossConfig,
    DropoutConfig,
    LinearConfig,
    MaxPool2dConfig,
    PaddingConfig2d,
    Relu,
    Sequential,
)
from minidl.optim import AdamConfig, GradientsParams, SgdConfig
from minidl.store import PytorchStore
from minidl.tensor.functional import relu

SEED = 0
CNN_BATCH, CNN_LR = 32, 3e-3
MLP_BATCH, MLP_LR = 128, 0.01


@config
class DigitsCnnConfig:
    """The digits CNN: two conv blocks (c1, c2 channels), a hidden Linear of `hidden` units."""

    c1: int = 8
    c2: int = 16
    hidden: int = 32
    dropout: float = 0.2

    def init(self, device: Device) -> DigitsCnn:
        return DigitsCnn(device, self)


class DigitsCnn(Module):
    """Input [batch, 1, 8, 8] -> logits [batch, 10] (the training chapter's model)."""

    def __init__(self, device: Device, cfg: DigitsCnnConfig):
        pad = PaddingConfig2d.Explicit(1, 1, 1, 1)
        self.conv1 = Conv2dConfig((1, cfg.c1), (3, 3)).with_padding(pad).init(device)
        self.bn1 = BatchNormConfig(cfg.c1).init(device)
        self.conv2 = Conv2dConfig((cfg.c1, cfg.c2), (3, 3)).with_padding(pad).init(device)
        self.bn2 = BatchNormConfig(cfg.c2).init(device)
        self.pool = MaxPool2dConfig((2, 2)).init()  # strides default to the kernel size
        self.fc1 = LinearConfig(cfg.c2 * 2 * 2, cfg.hidden).init(device)
        self.dropout = DropoutConfig(cfg.dropout).init()
        self.fc2 = LinearConfig(cfg.hidden, 10).init(device)

    def features(self, x: Tensor) -> Tensor:
        """The two conv blocks, flattened: [batch, c2 * 4]."""
        x = self.pool(relu(self.bn1(self.conv1(x))))
        return self.pool(relu(self.bn2(self.conv2(x)))).flatten(1)

    def forward(self, x: Tensor) -> Tensor:
        return self.fc2(self.dropout(relu(self.fc1(self.features(x)))))


def torch_cnn(cfg: DigitsCnnConfig):
    """The PyTorch twin of :class:`DigitsCnn`: the same layers under the same names."""
    import torch

    class TorchCnn(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = torch.nn.Conv2d(1, cfg.c1, 3, padding=1)
            self.bn1 = torch.nn.BatchNorm2d(cfg.c1)
            self.conv2 = torch.nn.Conv2d(cfg.c1, cfg.c2, 3, padding=1)
            self.bn2 = torch.nn.BatchNorm2d(cfg.c2)
            self.pool = torch.nn.MaxPool2d(2)
            self.fc1 = torch.nn.Linear(cfg.c2 * 2 * 2, cfg.hidden)
            self.dropout = torch.nn.Dropout(cfg.dropout)
            self.fc2 = torch.nn.Linear(cfg.hidden, 10)

        def forward(self, x):
            x = self.pool(torch.relu(self.bn1(self.conv1(x))))
            x = self.pool(torch.relu(self.bn2(self.conv2(x)))).flatten(1)
            return self.fc2(self.dropout(torch.relu(self.fc1(x))))

    return TorchCnn()


def cnn_batch() -> tuple[np.ndarray, np.ndarray]:
    """The first batch of the training chapter's loader: images [32, 1, 8, 8] float32 and
    targets [32] int64 (digits train split, seed 0, shuffled with seed 0)."""
    loader = (DataLoaderBuilder(DigitsBatcher()).batch_size(CNN_BATCH).shuffle(SEED)
              .set_device(Device.flex()).build(DigitsDataset("train", seed=SEED)))
    batch = next(iter(loader))
    return batch.images.to_numpy(), batch.targets.to_numpy()


def mlp_batch(batch: int = MLP_BATCH) -> tuple[np.ndarray, np.ndarray]:
    """The MLP benchmarks' batch: x [128, 784] standard normal, y [128] in 0..9 (seed 0;
    ``batch`` rows instead of 128 if asked)."""
    rng = np.random.default_rng(SEED)
    x = rng.standard_normal((batch, 784)).astype(np.float32)
    y = rng.integers(0, 10, batch).astype(np.int64)
    return x, y


@dataclass
class TrainStep:
    """One training step of a workload on one framework; ``step()`` runs it and returns the
    loss as a float. ``state`` holds the live model (and optimizer) for inspection."""

    name: str
    run: Callable[[], float]
    state: dict[str, Any] = field(default_factory=dict)

    def __call__(self) -> float:
        return self.run()


def _minidl_step(name: str, model: Module, optim, lr: float, x: np.ndarray, y: np.ndarray,
                 device: Device, by_param: bool) -> TrainStep:
    loss_fn = CrossEntropyLossConfig().init()
    images, targets = Tensor.from_numpy(x, device), Tensor.from_numpy(y, device)
    state: dict[str, Any] = {"model": model, "optim": optim, "device": device}

    def run() -> float:
        model = state["model"]
        loss = loss_fn(model(images), targets)
        grads = loss.backward()
        if by_param:
            grads = GradientsParams.from_grads(grads, model)
        state["model"] = optim.step(lr, model, grads)
        state["loss"] = loss
        return float(loss.into_scalar())

    return TrainStep(name, run, state)


def minidl_cnn_step(device: Device, cfg: DigitsCnnConfig | None = None) -> TrainStep:
    """The CNN step on ``device`` (an autodiff device: ``Device.flex().autodiff()``,
    ``Device.fusion().autodiff()``), from the weights :func:`torch_cnn_step` draws."""
    import torch

    cfg = cfg or DigitsCnnConfig()
    torch.manual_seed(SEED)
    weights = torch_cnn(cfg).state_dict()
    model = PytorchStore.from_state_dict(weights).load_into(cfg.init(device))
    device.seed(SEED)  # the dropout masks
    x, y = cnn_batch()
    return _minidl_step(f"minidl CNN on {device}", model, AdamConfig().init(), CNN_LR, x, y, device, True)


def minidl_mlp_step(device: Device, batch: int = MLP_BATCH) -> TrainStep:
    """The MLP 784-256-10 step on ``device``, from the weights :func:`torch_mlp_step` draws
    (on a batch of ``batch`` rows, 128 unless asked)."""
    import torch

    torch.manual_seed(SEED)
    weights = {f"layers.{k}": v for k, v in _torch_mlp().state_dict().items()}
    model = Sequential(LinearConfig(784, 256).init(device), Relu(), LinearConfig(256, 10).init(device))
    model = PytorchStore.from_state_dict(weights).load_into(model)
    x, y = mlp_batch(batch)
    return _minidl_step(f"minidl MLP on {device}", model, SgdConfig().init(), MLP_LR, x, y, device, False)


def _torch_mlp():
    import torch

    return torch.nn.Sequential(torch.nn.Linear(784, 256), torch.nn.ReLU(), torch.nn.Linear(256, 10))


def _torch_step(name: str, model, optimizer, x: np.ndarray, y: np.ndarray, compiled: bool) -> TrainStep:
    import torch

    forward = torch.compile(model) if compiled else model
    tx, ty = torch.from_numpy(x), torch.from_numpy(y)
    model.train()

    def run() -> float:
        optimizer.zero_grad()
        loss = torch.nn.functional.cross_entropy(forward(tx), ty)
        loss.backward()
        optimizer.step()
        return loss.item()

    return TrainStep(name, run, {"model": model, "optim": optimizer})


#: torch's optimizer implementations: its default (on CPU tensors a Python loop over the
#: parameters, ``foreach=None``), the multi-tensor ``foreach`` one, and the ``fused`` C++ kernel
#: (CPU since torch 2.4). Peers run at their best: :data:`TORCH_BEST_IMPL` unless asked.
TORCH_OPTIM_IMPLS: dict[str, dict[str, bool]] = {
    "default": {}, "foreach": {"foreach": True}, "fused": {"fused": True},
}
#: The fastest of :data:`TORCH_OPTIM_IMPLS` on both steps where ``bench/steps.py --impls``
#: measured them (fresh process each, one thread): ``fused`` (CNN step 1.46 ms against 1.81 ms
#: for the default loop and 1.73 ms for ``foreach``, AMD EPYC Zen 4).
TORCH_BEST_IMPL = "fused"


def torch_cnn_step(compiled: bool = False, cfg: DigitsCnnConfig | None = None,
                   impl: str = TORCH_BEST_IMPL) -> TrainStep:
    """The CNN step in PyTorch (eager, or the model under ``torch.compile``), Adam with burn's
    epsilon so both frameworks run the same rule; ``impl`` picks torch's Adam
    (:data:`TORCH_OPTIM_IMPLS`), its fused kernel by default."""
    import torch

    cfg = cfg or DigitsCnnConfig()
    torch.manual_seed(SEED)
    model = torch_cnn(cfg)
    adam = torch.optim.Adam(model.parameters(), lr=CNN_LR, eps=AdamConfig().epsilon,
                            **TORCH_OPTIM_IMPLS[impl])
    x, y = cnn_batch()
    name = f"torch.compile CNN ({impl} Adam)" if compiled else f"torch eager CNN ({impl} Adam)"
    return _torch_step(name, model, adam, x, y, compiled)


def torch_mlp_step(compiled: bool = False, impl: str = TORCH_BEST_IMPL) -> TrainStep:
    """The MLP 784-256-10 step in PyTorch (eager, or under ``torch.compile``), plain SGD
    (``impl`` of :data:`TORCH_OPTIM_IMPLS`, fused by default)."""
    import torch

    torch.manual_seed(SEED)
    model = _torch_mlp()
    sgd = torch.optim.SGD(model.parameters(), lr=MLP_LR, **TORCH_OPTIM_IMPLS[impl])
    x, y = mlp_batch()
    name = f"torch.compile MLP ({impl} SGD)" if compiled else f"torch eager MLP ({impl} SGD)"
    return _torch_step(name, model, sgd, x, y, compiled)


#: workload name -> (minidl builder(device), torch builder(compiled))
WORKLOADS: dict[str, tuple[Callable[[Device], TrainStep], Callable[[bool], TrainStep]]] = {
    "cnn": (minidl_cnn_step, torch_cnn_step),
    "mlp": (minidl_mlp_step, torch_mlp_step),
}

"""A training run that saves checkpoints, run as a child process by test_checkpoint_crash.py.

``python crash_child.py first BASE REF EXPECTED`` trains two steps, saves epoch 1 to BASE,
records its params and optimizer state in the ``.npz`` EXPECTED, trains one more step and
saves epoch 2 whole to REF (the bytes a complete epoch 2 has).

``python crash_child.py kill DIR SCRATCH LIMIT`` does the same training, saves epoch 2 once to
SCRATCH (so anything the save compiles or imports is done), then lowers the file-size limit
to LIMIT bytes with ``SIGXFSZ`` at its default action and saves epoch 2 to DIR: the kernel
kills the process the moment a write would grow a file past LIMIT bytes.

Everything runs on NdArray, whose kernels give the same bits in every process.
"""

from __future__ import annotations

import resource
import signal
import sys

import numpy as np

from minidl import Device, Tensor
from minidl.module import Module, config
from minidl.nn import LinearConfig, MseLoss
from minidl.optim import AdamConfig
from minidl.train import optimizer_record, save_checkpoint

AD = Device.ndarray().autodiff()


@config
class CrashConfig:
    """Wide enough that the optimizer file (two Adam moments) is bigger than the model's."""

    d_in: int = 32
    d_out: int = 16

    def init(self, device: Device) -> Crash:
        return Crash(device, self.d_in, self.d_out)


class Crash(Module):
    def __init__(self, device: Device, d_in: int, d_out: int):
        self.fc = LinearConfig(d_in, d_out).init(device)

    def forward(self, x: Tensor) -> Tensor:
        return self.fc(x)


def train(model, optimizer, steps: int, seed: int):
    rng = np.random.default_rng(seed)
    for _ in range(steps):
        x = Tensor.from_numpy(rng.standard_normal((8, 32)).astype(np.float32), AD)
        y = Tensor.from_numpy(rng.standard_normal((8, 16)).astype(np.float32), AD)
        model = optimizer.step(0.01, model, MseLoss()(model(x), y).backward())
    return model


def state_arrays(model, optimizer) -> dict[str, np.ndarray]:
    """Every param's values and every optimizer state array, by name."""
    arrays = {f"param:{path}": p.val().to_numpy() for path, p in model.parameters().items()}
    tensors, _ = optimizer_record(optimizer, model)
    arrays.update({f"optim:{key}": value for key, value in tensors.items()})
    return arrays


def main(mode: str, first: str, second: str, last: str) -> None:
    AD.seed(0)
    optimizer = AdamConfig().init()
    model = train(CrashConfig().init(AD), optimizer, 2, seed=1)
    if mode == "first":
        save_checkpoint(first, 1, model, CrashConfig(), optimizer)
        np.savez(last, **state_arrays(model, optimizer))
    model = train(model, optimizer, 1, seed=2)
    save_checkpoint(second, 2, model, CrashConfig(), optimizer)
    if mode == "kill":
        limit = int(last)
        signal.signal(signal.SIGXFSZ, signal.SIG_DFL)
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, resource.getrlimit(resource.RLIMIT_FSIZE)[1]))
        save_checkpoint(first, 2, model, CrashConfig(), optimizer)


if __name__ == "__main__":
    main(*sys.argv[1:5])

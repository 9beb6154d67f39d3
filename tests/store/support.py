"""Helpers of the store tests: twin models (PyTorch and minidl), module fingerprints, crafted files.

The twins have the same field names on both sides, so ``torch_model.state_dict()`` keys are
minidl param paths once the adapter has done its work (Linear weights transposed, norm
``weight``/``bias`` → ``gamma``/``beta``, ``num_batches_tracked`` dropped).
"""

from __future__ import annotations

import io
import pickle
import zipfile
from collections import OrderedDict
from pathlib import Path

import numpy as np
import torch

from minidl.dispatch import Device
from minidl.module import Module, Param, RunningState
from minidl.nn.batch_norm import BatchNormConfig
from minidl.nn.conv2d import Conv2dConfig
from minidl.nn.embedding import EmbeddingConfig
from minidl.nn.layer_norm import LayerNormConfig
from minidl.nn.linear import LinearConfig
from minidl.nn.padding import PaddingConfig2d
from minidl.tensor import Tensor
from minidl.tensor.activation import relu

TOKENS, VOCAB, D_EMB = 4, 10, 3


# ----- twins --------------------------------------------------------------------------------
class TorchMlp(torch.nn.Module):
    """Embedding → Linear → BatchNorm1d → ReLU → LayerNorm → Linear."""

    def __init__(self):
        super().__init__()
        self.emb = torch.nn.Embedding(VOCAB, D_EMB)
        self.fc1 = torch.nn.Linear(TOKENS * D_EMB, 16)
        self.bn = torch.nn.BatchNorm1d(16)
        self.ln = torch.nn.LayerNorm(16)
        self.fc2 = torch.nn.Linear(16, 5)

    def forward(self, tokens):
        x = self.emb(tokens).flatten(1)
        x = torch.relu(self.bn(self.fc1(x)))
        return self.fc2(self.ln(x))


class Mlp(Module):
    """minidl twin of :class:`TorchMlp`."""

    def __init__(self, device: Device):
        self.emb = EmbeddingConfig(VOCAB, D_EMB).init(device)
        self.fc1 = LinearConfig(TOKENS * D_EMB, 16).init(device)
        self.bn = BatchNormConfig(16).init(device)
        self.ln = LayerNormConfig(16).init(device)
        self.fc2 = LinearConfig(16, 5).init(device)

    def forward(self, tokens: Tensor) -> Tensor:
        x = self.emb(tokens).flatten(1)
        x = relu(self.bn(self.fc1(x)))
        return self.fc2(self.ln(x))


class TorchCnn(torch.nn.Module):
    """Conv2d(pad 1) → BatchNorm2d → ReLU → Conv2d(stride 2) → flatten → LayerNorm → Linear."""

    def __init__(self):
        super().__init__()
        self.conv1 = torch.nn.Conv2d(3, 6, 3, padding=1)
        self.bn = torch.nn.BatchNorm2d(6)
        self.conv2 = torch.nn.Conv2d(6, 4, 3, stride=2)
        self.ln = torch.nn.LayerNorm(36)
        self.fc = torch.nn.Linear(36, 5)

    def forward(self, x):
        x = torch.relu(self.bn(self.conv1(x)))
        x = self.conv2(x).flatten(1)
        return self.fc(self.ln(x))


class Cnn(Module):
    """minidl twin of :class:`TorchCnn` (input ``[n, 3, 8, 8]``)."""

    def __init__(self, device: Device):
        self.conv1 = Conv2dConfig((3, 6), (3, 3)).with_padding(PaddingConfig2d.Explicit(1, 1, 1, 1)).init(device)
        self.bn = BatchNormConfig(6).init(device)
        self.conv2 = Conv2dConfig((6, 4), (3, 3)).with_stride((2, 2)).init(device)
        self.ln = LayerNormConfig(36).init(device)
        self.fc = LinearConfig(36, 5).init(device)

    def forward(self, x: Tensor) -> Tensor:
        x = relu(self.bn(self.conv1(x)))
        x = self.conv2(x).flatten(1)
        return self.fc(self.ln(x))


def scramble_torch(model: torch.nn.Module, seed: int = 0) -> torch.nn.Module:
    """Give every norm non-default affine params and running stats, so a wrong mapping
    (gamma/beta, running_mean/var) cannot hide behind ones and zeros."""
    gen = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for module in model.modules():
            if isinstance(module, torch.nn.BatchNorm1d | torch.nn.BatchNorm2d | torch.nn.LayerNorm):
                module.weight.copy_(torch.rand(module.weight.shape, generator=gen) + 0.5)
                module.bias.copy_(torch.randn(module.bias.shape, generator=gen))
            if isinstance(module, torch.nn.BatchNorm1d | torch.nn.BatchNorm2d):
                module.running_mean.copy_(torch.randn(module.running_mean.shape, generator=gen))
                module.running_var.copy_(torch.rand(module.running_var.shape, generator=gen) + 0.5)
                module.num_batches_tracked.fill_(7)
    return model


class Small(Module):
    """A Linear and a BatchNorm: params, running states and a flag, for the bad-input tests."""

    def __init__(self, device: Device):
        self.fc = LinearConfig(2, 4).init(device)
        self.norm = BatchNormConfig(4).init(device)


class TorchSmall(torch.nn.Module):
    """PyTorch twin of :class:`Small`."""

    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(2, 4)
        self.norm = torch.nn.BatchNorm1d(4)


class Mixed(Module):
    """Params in float32, float64 and float16, an int64 param, a float16 running state and a
    flag: what a bit-exact round trip must keep."""

    def __init__(self, device: Device, seed: int = 0):
        rng = np.random.default_rng(seed)
        self.w32 = Param.initialized("w32", Tensor.from_numpy(rng.standard_normal((3, 5)).astype(np.float32), device))
        self.w64 = Param.initialized("w64", Tensor.from_numpy(rng.standard_normal((4,)), device))
        self.w16 = Param.initialized("w16", Tensor.from_numpy(rng.standard_normal((2, 3)).astype(np.float16), device))
        self.steps = Param.initialized("steps", Tensor.from_numpy(rng.integers(0, 1000, (3,)), device))
        self.stats = RunningState.new(Tensor.from_numpy(rng.standard_normal((5,)).astype(np.float16), device))
        self.training = Param.flag(True)
        self.layers = [LinearConfig(3, 2).init(device), LinearConfig(2, 2, bias=False).init(device)]


# ----- fingerprints -------------------------------------------------------------------------
def fingerprint(module: Module) -> dict:
    """Everything a load could change, read WITHOUT initializing lazy params: per path the
    leaf object, its id, whether it is initialized, and the value's dtype and bytes."""
    out: dict = {}

    def visit(path, leaf):
        if isinstance(leaf, RunningState):
            value = leaf.value().to_numpy()
            out[path] = ("running", id(leaf), leaf.id, value.dtype.str, value.shape, value.tobytes())
        elif leaf.is_flag():
            out[path] = ("flag", id(leaf), leaf.id, leaf.val())
        elif not leaf.is_initialized():
            out[path] = ("lazy", id(leaf), leaf.id, tuple(leaf.lazy_shape()))
        else:
            value = leaf.val().to_numpy()
            out[path] = ("param", id(leaf), leaf.id, value.dtype.str, value.shape, value.tobytes())

    module.visit(visit)
    return out


def to_numpy(module: Module) -> dict[str, np.ndarray]:
    """Param and running-state values by path (initializes lazy params)."""
    out = {path: p.val().to_numpy() for path, p in module.parameters().items()}
    out.update({path: s.value().to_numpy() for path, s in module.running_states().items()})
    return out


def torch_sd_numpy(model: torch.nn.Module) -> dict[str, np.ndarray]:
    """A torch model's state dict as NumPy arrays."""
    return {k: v.detach().numpy().copy() for k, v in model.state_dict().items()}


# ----- crafted PyTorch files ----------------------------------------------------------------
class _FakeStorage:
    pass


class _FakeTensor:
    def __init__(self, size, stride, offset=0):
        self.size, self.stride, self.offset = size, stride, offset


class _Crafter(pickle.Pickler):
    """Pickles ``_FakeTensor``s exactly as torch.save pickles tensors, with any view we like."""

    def __init__(self, file, numel: int):
        super().__init__(file, protocol=2)
        self.numel = numel

    def persistent_id(self, obj):
        if isinstance(obj, _FakeStorage):
            return ("storage", torch.FloatStorage, "0", "cpu", self.numel)
        return None

    def reducer_override(self, obj):
        if isinstance(obj, _FakeTensor):
            args = (_FakeStorage(), obj.offset, tuple(obj.size), tuple(obj.stride), False, OrderedDict())
            return (torch._utils._rebuild_tensor_v2, args)
        return NotImplemented


def craft_torch_file(path: Path, size, stride, numel: int, storage_bytes: bytes, offset: int = 0,
                     byteorder: str = "little") -> Path:
    """A zip archive laid out like ``torch.save``'s holding one tensor ``"w"`` whose view
    (``size``, ``stride``, ``offset``) and announced ``numel`` may lie about its storage."""
    buf = io.BytesIO()
    _Crafter(buf, numel).dump(OrderedDict(w=_FakeTensor(size, stride, offset)))
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("archive/data.pkl", buf.getvalue())
        archive.writestr("archive/byteorder", byteorder)
        archive.writestr("archive/data/0", storage_bytes)
        archive.writestr("archive/version", "3\n")
    return path

"""Helpers of the nn tests: devices and the PyTorch twin check. A backend that fails to load
fails the test that needs it."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import torch

from minidl.dispatch import Device, backend_for
from minidl.module import Module, ModuleMapper, Param
from minidl.tensor import Tensor


def plain_device(kind: str) -> Device:
    """The plain device of ``kind``, its backend loaded (an import error fails the test)."""
    device = {"fusion": Device.fusion, "flex": Device.flex, "ndarray": Device.ndarray, "wgpu": Device.wgpu}[kind]()
    backend_for(device)
    return device


def randn(shape, seed: int = 0, scale: float = 1.0) -> np.ndarray:
    """Reproducible float32 normal values."""
    return (np.random.default_rng(seed).standard_normal(shape) * scale).astype(np.float32)


def T(array, device: Device) -> Tensor:
    """A float tensor holding ``array``."""
    return Tensor.from_numpy(np.ascontiguousarray(array, dtype=np.float32), device=device)


def arr(t: Tensor) -> np.ndarray:
    """A tensor's values."""
    return t.to_numpy()


def close(actual, expected, what: str, rtol: float = 1e-5, atol: float = 1e-5) -> None:
    """``actual`` (minidl Tensor or array) within float32 tolerance of ``expected`` (torch/array)."""
    actual = arr(actual) if isinstance(actual, Tensor) else np.asarray(actual)
    expected = expected.detach().numpy() if isinstance(expected, torch.Tensor) else np.asarray(expected)
    assert actual.shape == expected.shape, f"{what}: shape {actual.shape} != {expected.shape}"
    np.testing.assert_allclose(actual, expected, rtol=rtol, atol=atol, err_msg=what)


def copy_into_torch(layer: Module, twin: torch.nn.Module, names: dict[str, tuple[str, Callable]]) -> None:
    """Set the twin's params from ours: ``names`` maps our path to (torch name, transform)."""
    params = layer.parameters()
    with torch.no_grad():
        for path, (name, transform) in names.items():
            value = transform(arr(params[path].val()))
            twin.get_parameter(name).copy_(torch.from_numpy(np.ascontiguousarray(value)))


def check_against_torch(layer: Module, twin: torch.nn.Module, x: np.ndarray, device: Device,
                        names: dict[str, tuple[str, Callable]], rtol: float = 1e-5, atol: float = 1e-5,
                        seed: int = 1) -> Tensor:
    """Copy our weights into ``twin``, then compare forward, the input gradient and every
    parameter gradient under a random upstream gradient. Returns our output."""
    copy_into_torch(layer, twin, names)
    ours_x = T(x, device).require_grad()
    out = layer(ours_x)
    theirs_x = torch.from_numpy(x.copy()).requires_grad_(True)
    expected = twin(theirs_x)
    close(out, expected, "forward", rtol, atol)
    upstream = randn(tuple(out.shape), seed=seed)
    grads = (out * T(upstream, device)).sum().backward()
    (expected * torch.from_numpy(upstream)).sum().backward()
    close(ours_x.grad(grads), theirs_x.grad, "input gradient", rtol, atol)
    params = layer.parameters()
    for path, (name, transform) in names.items():
        grad = params[path].val().grad(grads)
        assert grad is not None, f"no gradient for {path}"
        close(transform(arr(grad)), twin.get_parameter(name).grad, f"gradient of {path}", rtol, atol)
    return out


def identity(a: np.ndarray) -> np.ndarray:
    """No transform."""
    return a


def transpose(a: np.ndarray) -> np.ndarray:
    """The 2-D transpose (Linear's weight layout vs PyTorch's)."""
    return a.T


class RandomizeParams(ModuleMapper):
    """Gives every tensor param random normal values (so gamma and beta are not trivial)."""

    def __init__(self, seed: int):
        self.rng = np.random.default_rng(seed)

    def map_param(self, path: str, param: Param) -> Param:
        value = param.val()
        new = Tensor.from_numpy(self.rng.standard_normal(value.shape).astype(np.float32),
                                device=value.device.inner())
        if value.device.is_autodiff():
            new = Tensor.from_inner(new, value.device).require_grad()
        return param.with_value(new)

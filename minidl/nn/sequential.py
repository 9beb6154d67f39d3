"""``Sequential``: layers applied one after another (PyTorch's ``nn.Sequential``; burn writes
the chain by hand in ``forward``). Its layers are a list field, so their params are named
``layers.0.weight``, ``layers.1.bias``, ..."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from minidl.module import Module


class Sequential(Module):
    """``Sequential(a, b, c)(x)`` is ``c(b(a(x)))``."""

    def __init__(self, *layers: Module | list[Module]):
        if len(layers) == 1 and isinstance(layers[0], list | tuple):
            layers = tuple(layers[0])
        for i, layer in enumerate(layers):
            if not callable(layer):
                raise TypeError(f"Sequential: layer {i} is not callable ({type(layer).__name__})")
        self.layers = list(layers)

    def forward(self, input: Any) -> Any:
        """Feed ``input`` through every layer in order."""
        x = input
        for layer in self.layers:
            x = layer(x)
        return x

    def __getitem__(self, index: int) -> Module:
        return self.layers[index]

    def __len__(self) -> int:
        return len(self.layers)

    def __iter__(self) -> Iterator[Module]:
        return iter(self.layers)

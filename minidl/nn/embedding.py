"""``Embedding``: a lookup table of ``n_embedding`` vectors of size ``d_model`` (burn-nn
``embedding.rs``); the weight starts ``Normal(0, 1)`` as in burn and PyTorch."""

from __future__ import annotations

from minidl.dispatch import Device
from minidl.module import Initializer, Module, Param, config
from minidl.module.config import check_positive, positive
from minidl.tensor import Tensor
from minidl.tensor.module import embedding


@config
class EmbeddingConfig:
    """Config of :class:`Embedding`."""

    field_rules = {"n_embedding": positive, "d_model": positive}

    n_embedding: int
    d_model: int
    initializer: Initializer = Initializer.Normal(mean=0.0, std=1.0)

    def init(self, device: Device) -> Embedding:
        """An Embedding with a lazy weight ``[n_embedding, d_model]`` on ``device``."""
        check_positive("EmbeddingConfig", n_embedding=self.n_embedding, d_model=self.d_model)
        weight = self.initializer.init([self.n_embedding, self.d_model], device)
        return Embedding(weight)


class Embedding(Module):
    """Rows of ``weight`` picked by Int indices (burn's ``Embedding``)."""

    def __init__(self, weight: Param):
        self.weight = weight

    def forward(self, input: Tensor) -> Tensor:
        """Int ``input`` of any shape → ``input.shape + [d_model]``."""
        return embedding(self.weight.val(), input)

    def _display_attrs(self) -> dict:
        n, d = self.weight.lazy_shape()
        return {"n_embedding": n, "d_model": d}

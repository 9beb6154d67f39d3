"""``PytorchStore``: load a PyTorch ``state_dict`` into a minidl module (burn-store ``pytorch/store.rs``).

::

    torch.save(torch_model.state_dict(), "model.pt")            # in PyTorch
    model = PytorchStore.from_file("model.pt").load_into(model)  # in minidl

The file is read by :mod:`minidl.store.torch_reader`, which never runs the file's pickled code
(anything but tensors is refused with :class:`~minidl.store.errors.UnsafeFileError`). The
:class:`~minidl.store.adapter.PyTorchToMinidlAdapter` is always used (as burn always uses
``PyTorchToBurnAdapter``): Linear weights are transposed, norm ``weight``/``bias`` found for
``gamma``/``beta``, ``num_batches_tracked`` ignored.

The shape check compares with ``Param.lazy_shape()``, which is where the nn-modules chapter's
``LinearLayout.Col`` pitfall comes from: a Col weight not yet initialized reports
``[d_output, d_input]`` and the transposed PyTorch weight is ``[d_input, d_output]`` —
``Shape mismatch for 'fc.weight'``; once initialized it reports ``[d_input, d_output]``, the
load "succeeds", the Col ``load_mapper`` transposes the weight again, and the next forward
fails in ``Linear.forward``'s ``assert_shape``.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from minidl.module import Module
from minidl.store.adapter import PyTorchToMinidlAdapter
from minidl.store.base import ModuleStore
from minidl.store.errors import StoreError
from minidl.store.torch_reader import flatten_tensors, read_torch_file


def _to_numpy(value: Any) -> Any:
    """A torch tensor (duck-typed: torch is not imported) → an owned NumPy array."""
    if isinstance(value, np.ndarray):
        return np.array(value, copy=True)
    if hasattr(value, "detach") and hasattr(value, "numpy"):
        tensor = value.detach().cpu()
        if str(getattr(tensor, "dtype", "")) == "torch.bfloat16":
            tensor = tensor.float()  # NumPy has no bfloat16; widening is exact
        return np.array(tensor.numpy(), copy=True)
    if isinstance(value, Mapping):
        return {k: _to_numpy(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_to_numpy(v) for v in value]
    return value


class PytorchStore(ModuleStore):
    """A PyTorch ``state_dict`` (file or in memory) to load modules from (load only)."""

    def __init__(self, source: str, path: Path | None = None, state_dict: Mapping | None = None,
                 top_level_key: str | None = None):
        super().__init__(source, PyTorchToMinidlAdapter())
        self.path = path
        self.state_dict = state_dict
        self.top_level_key = top_level_key

    @staticmethod
    def from_file(path: str | Path, top_level_key: str | None = None) -> PytorchStore:
        """A store on a ``torch.save``d file (``.pt``/``.pth``, zip format); read on first use."""
        return PytorchStore(str(path), path=Path(path), top_level_key=top_level_key)

    @staticmethod
    def from_state_dict(state_dict: Mapping, top_level_key: str | None = None) -> PytorchStore:
        """A store on a ``state_dict`` in memory (torch tensors or NumPy arrays); the tensors
        are copied, so later changes to the torch model do not leak in."""
        if not isinstance(state_dict, Mapping):
            raise StoreError(f"from_state_dict expects a mapping of names to tensors, found {type(state_dict).__name__}")
        return PytorchStore("state_dict", state_dict=_to_numpy(state_dict), top_level_key=top_level_key)

    def with_top_level_key(self, key: str) -> PytorchStore:
        """Load from ``checkpoint[key]`` (e.g. ``"model_state_dict"``) instead of the top level."""
        return self._with(top_level_key=key)

    def _read(self) -> dict[str, np.ndarray]:
        if self.path is not None:
            return read_torch_file(self.path, self.top_level_key)
        return flatten_tensors(self.state_dict, self.top_level_key, source=self.source)

    def collect_from(self, module: Module) -> Any:
        """Not supported, as in burn: write a safetensors file with PyTorch names instead."""
        raise StoreError(
            "Saving to PyTorch format is not supported; use SafetensorsStore.from_file(path)"
            ".with_to_adapter(MinidlToPyTorchAdapter()).collect_from(module) and read it in "
            "PyTorch with safetensors.torch.load_file"
        )

"""``SafetensorsStore``: a module's record in a safetensors file (burn-store ``safetensors/store.rs``).

Saving (:meth:`SafetensorsStore.collect_from`) writes every tensor param and running state
under its dotted path (``fc.weight``, ``norm.running_mean``) with its own dtype, after the
param's ``save_mapper``; flags (Dropout's and BatchNorm's ``training``) are configuration and
are not written. Loading (:meth:`~minidl.store.base.ModuleStore.load_into`) checks every
tensor against the module first and returns a new module, or raises and changes nothing.

By default no adapter is used in either direction (burn: ``IdentityAdapter``); a store made
with ``with_to_adapter(MinidlToPyTorchAdapter())`` writes PyTorch's names and layouts, one made
with ``with_from_adapter(PyTorchToMinidlAdapter())`` reads a safetensors file exported from
PyTorch (``safetensors.torch.save_file(model.state_dict(), path)``).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from minidl.module import Module
from minidl.store import safetensors_io
from minidl.store.adapter import ModuleAdapter
from minidl.store.base import ModuleStore
from minidl.store.errors import StoreError
from minidl.store.module_bridge import collect_arrays

FORMAT_METADATA = {"format": "minidl", "format_version": "1"}


class SafetensorsStore(ModuleStore):
    """A safetensors file (or bytes in memory) that modules are saved into and loaded from."""

    def __init__(self, path: Path | None = None, data: bytes | None = None):
        super().__init__(str(path) if path is not None else "safetensors bytes")
        self.path = path
        self.data = data
        self.to_adapter: ModuleAdapter = ModuleAdapter()
        self.extra_metadata: dict[str, str] = {}

    @staticmethod
    def from_file(path: str | Path) -> SafetensorsStore:
        """A store on the file at ``path`` (read on first use, written by ``collect_from``)."""
        return SafetensorsStore(path=Path(path))

    @staticmethod
    def from_bytes(data: bytes | None = None) -> SafetensorsStore:
        """A store in memory: ``collect_from`` fills ``.data``; loading reads it."""
        return SafetensorsStore(data=data)

    def with_to_adapter(self, adapter: ModuleAdapter) -> SafetensorsStore:
        """The adapter used when saving (burn's ``with_to_adapter``)."""
        return self._with(to_adapter=adapter)

    def metadata(self, key: str, value: str) -> SafetensorsStore:
        """A store that also writes ``key: value`` into the file's ``__metadata__``."""
        return self._with(extra_metadata={**self.extra_metadata, str(key): str(value)})

    # ----- reading ------------------------------------------------------------------------
    def _read_all(self) -> tuple[dict[str, np.ndarray], dict[str, str]]:
        if self.path is not None:
            return safetensors_io.read_file(self.path)
        if self.data is None:
            raise StoreError("this in-memory SafetensorsStore holds no data yet (call collect_from first)")
        return safetensors_io.from_bytes(self.data)

    def _read(self) -> dict[str, np.ndarray]:
        return self._read_all()[0]

    def file_metadata(self) -> dict[str, str]:
        """The ``__metadata__`` strings of the file."""
        return self._read_all()[1]

    # ----- saving -------------------------------------------------------------------------
    def collect_from(self, module: Module) -> SafetensorsStore:
        """Write ``module``'s record (burn's ``module.save_into(&mut store)``); returns self."""
        tensors = collect_arrays(module, self.to_adapter)
        metadata = {**FORMAT_METADATA, "module": type(module).__name__, **self.extra_metadata}
        if self.path is not None:
            safetensors_io.write_file(self.path, tensors, metadata)
        else:
            self.data = safetensors_io.to_bytes(tensors, metadata)
        self._cache = None
        return self

"""One-call saving and loading, and a file writer for records.

- :func:`save_module` / :func:`load_module` — saving and loading a module in one call, written
  with burn-store's ``SafetensorsStore`` (burn 0.21's ``module.save_file(path, &recorder)``
  shape; 0.22 removed the ``Recorder`` system and saves through a store): the record in ``<name>.safetensors``, and, if a config is given, the
  config (the Config's own ``save``) as JSON beside it in ``<name>.json``.
- :func:`load_model` — burn's usual pattern ``Config::load(path)?.init(&device)`` followed
  by ``load_record``: build the module from its saved config, then load its tensors.
- :class:`SafetensorsFileRecorder` — the shape of burn 0.21's ``FileRecorder`` (``record(record,
  path)`` / ``load(path)``; burn 0.22 has no recorders) for the nested records of ``Module.into_record()``; the module's own
  ``load_record`` then checks and applies the record.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, TypeVar

import numpy as np

from minidl.dispatch import Device
from minidl.module import Module, is_config
from minidl.module.record import flatten_record
from minidl.store import safetensors_io
from minidl.store.atomic_file import write_text_atomically
from minidl.store.safetensors_store import FORMAT_METADATA, SafetensorsStore

M = TypeVar("M", bound=Module)


def config_path(path: str | Path) -> Path:
    """Where :func:`save_module` puts the config of the record at ``path``: same name, ``.json``."""
    return Path(path).with_suffix(".json")


def save_module(module: Module, path: str | Path, config: Any = None) -> Path:
    """Save ``module``'s record to ``path`` (safetensors) and, if given, its ``config`` as
    JSON at :func:`config_path` ``(path)``. Returns the record's path. Each file is written
    whole or not at all (:mod:`minidl.store.atomic_file`).

    Saving needs values, so lazy params of ``module`` are initialized by it (as in burn);
    a ``LinearLayout.Col`` weight then reports its materialized shape from ``lazy_shape()``."""
    path = Path(path)
    if config is not None:
        if not is_config(config):
            raise TypeError(f"save_module: config must be a @config instance, found {type(config).__name__}")
        # Config.save's text, written whole or not at all like the record
        write_text_atomically(config_path(path), config.to_json() + "\n")
    SafetensorsStore.from_file(path).collect_from(module)
    return path


def load_module(module: M, path: str | Path) -> M:
    """A new module: ``module`` with the record at ``path`` loaded (checked first: a failure
    names the tensor and leaves ``module`` as it was)."""
    return SafetensorsStore.from_file(path).load_into(module)


def load_model(config_cls: type, path: str | Path, device: Device) -> Any:
    """``config_cls.load(config_path(path)).init(device)`` with the record at ``path`` loaded."""
    config = config_cls.load(config_path(path))
    return load_module(config.init(device), path)


def _unflatten(flat: dict[str, Any]) -> dict[str, Any]:
    nested: dict[str, Any] = {}
    for path, value in flat.items():
        node = nested
        *heads, leaf = path.split(".")
        for head in heads:
            node = node.setdefault(head, {})
        node[leaf] = value
    return nested


class SafetensorsFileRecorder:
    """Writes and reads module records (``Module.into_record()``) as safetensors files, in
    the shape of burn 0.21's ``FileRecorder`` (``NamedMpkFileRecorder``, ...; 0.22 removed
    recorders): full precision, every dtype kept."""

    file_extension = "safetensors"

    def record(self, record: dict[str, Any], path: str | Path) -> Path:
        """Write ``record`` (a nested dict of tensors) to ``path``; returns the path."""
        arrays = {k: np.ascontiguousarray(v.to_numpy() if hasattr(v, "to_numpy") else v)
                  for k, v in flatten_record(record).items()}
        safetensors_io.write_file(path, arrays, FORMAT_METADATA)
        return Path(path)

    def load(self, path: str | Path) -> dict[str, Any]:
        """The record at ``path`` as a nested dict of NumPy arrays (for ``load_record``)."""
        tensors, _ = safetensors_io.read_file(path)
        return _unflatten(tensors)

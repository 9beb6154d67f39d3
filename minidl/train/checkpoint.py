"""Checkpoints a training run can resume from (burn-train's ``FileCheckpointer``, which the
learner uses to write ``model-{epoch}`` and ``optim-{epoch}`` records).

A checkpoint of epoch ``e`` in ``directory`` is three files:

- ``model-{e}.safetensors`` and ``model-{e}.json`` — the module's record and its config
  (:func:`minidl.store.save_module`), loaded back with :func:`minidl.store.load_model`;
- ``optim-{e}.safetensors`` — the optimizer's per-parameter state (Adam's two moments and
  its step count, SGD's velocity).

An optimizer keeps its state by ``Param.id`` and the ids live only in memory: a model built
again by ``load_model`` has new ids. burn writes each ``ParamId`` into the module record;
minidl's records hold values only, so the optimizer record is keyed by the parameter's
**path** (``conv1.weight``) and re-keyed to the new model's ids when it is loaded.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import numpy as np
import safetensors
import safetensors.numpy

from minidl.dispatch import Device
from minidl.module import Module
from minidl.optim import AdamState, Optimizer
from minidl.store import load_model, save_module
from minidl.tensor import Tensor

_STATE_TYPES = {"AdamState": AdamState}


def _flatten_state(path: str, state: Any, out: dict[str, np.ndarray], kinds: dict[str, str]) -> None:
    if isinstance(state, Tensor):
        out[path] = state.to_numpy()
        kinds[path] = "Tensor"
    elif dataclasses.is_dataclass(state) and type(state).__name__ in _STATE_TYPES:
        kinds[path] = type(state).__name__
        for field in dataclasses.fields(state):
            value = getattr(state, field.name)
            key = f"{path}/{field.name}"
            out[key] = value.to_numpy() if isinstance(value, Tensor) else np.asarray(value, dtype=np.int64)
    else:
        raise TypeError(f"optimizer_record: the state of '{path}' is a {type(state).__name__}, "
                        f"which has no record format (known: Tensor, {', '.join(_STATE_TYPES)})")


def optimizer_record(optimizer: Optimizer, module: Module) -> tuple[dict[str, np.ndarray], dict[str, str]]:
    """The optimizer's state of every parameter of ``module`` it has a state for, keyed by
    parameter path, and the metadata saying which kind of state each path holds."""
    tensors: dict[str, np.ndarray] = {}
    kinds: dict[str, str] = {}
    for path, param in module.parameters().items():
        state = optimizer.states.get(param.id)
        if state is not None:
            _flatten_state(path, state, tensors, kinds)
    return tensors, {"states": json.dumps(kinds, sort_keys=True)}


def load_optimizer_record(optimizer: Optimizer, module: Module, tensors: dict[str, np.ndarray],
                          metadata: dict[str, str], device: Device) -> None:
    """Put the recorded states into ``optimizer``, keyed by the ids of ``module``'s
    parameters at the recorded paths (tensors on ``device.inner()``, where optimizers work).
    A recorded path the module does not have is an error that names it."""
    kinds: dict[str, str] = json.loads(metadata["states"])
    params = module.parameters()
    missing = sorted(set(kinds) - set(params))
    if missing:
        raise ValueError(f"load_optimizer_record: the record has states for {missing}, "
                         f"which the module does not have")
    inner = device.inner()
    for path, kind in kinds.items():
        if kind == "Tensor":
            state: Any = Tensor.from_numpy(tensors[path], inner)
        else:
            cls = _STATE_TYPES[kind]
            values = {}
            for field in dataclasses.fields(cls):
                array = tensors[f"{path}/{field.name}"]
                values[field.name] = int(array) if array.ndim == 0 else Tensor.from_numpy(array, inner)
            state = cls(**values)
        optimizer.states[params[path].id] = state


def checkpoint_paths(directory: str | Path, epoch: int) -> dict[str, Path]:
    """Where the checkpoint of ``epoch`` lives: ``model`` (record; its config beside it as
    ``.json``) and ``optim``."""
    directory = Path(directory)
    return {"model": directory / f"model-{epoch}.safetensors", "optim": directory / f"optim-{epoch}.safetensors"}


def save_checkpoint(directory: str | Path, epoch: int, model: Module, config: Any,
                    optimizer: Optimizer) -> dict[str, Path]:
    """Write the checkpoint of ``epoch`` (model record + config, optimizer state); returns
    its paths."""
    paths = checkpoint_paths(directory, epoch)
    paths["model"].parent.mkdir(parents=True, exist_ok=True)
    save_module(model, paths["model"], config)
    tensors, metadata = optimizer_record(optimizer, model)
    safetensors.numpy.save_file(tensors, str(paths["optim"]), metadata=metadata)
    return paths


def restore_checkpoint(directory: str | Path, epoch: int, config_cls: type, device: Device,
                       optimizer: Optimizer) -> Module:
    """The model of checkpoint ``epoch`` built on ``device`` from its saved config, with
    ``optimizer``'s state restored for it (burn's ``Checkpointer::restore`` of the learner)."""
    paths = checkpoint_paths(directory, epoch)
    model = load_model(config_cls, paths["model"], device)
    with safetensors.safe_open(str(paths["optim"]), framework="numpy") as file:
        metadata = file.metadata() or {}
        tensors = {key: file.get_tensor(key) for key in file.keys()}
    load_optimizer_record(optimizer, model, tensors, metadata, device)
    return model

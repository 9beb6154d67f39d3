"""Checkpoints a training run can resume from (burn-train's ``FileCheckpointer``, which the
learner uses to write ``model-{epoch}`` and ``optim-{epoch}`` records).

A checkpoint of epoch ``e`` in ``directory`` is four files:

- ``model-{e}.safetensors`` and ``model-{e}.json`` — the module's record and its config
  (the layout of :func:`minidl.store.save_module`), loadable alone with
  :func:`minidl.store.load_model`;
- ``optim-{e}.safetensors`` — the optimizer's per-parameter state (Adam's two moments and
  its step count, SGD's velocity);
- ``checkpoint-{e}.json`` — the manifest, written last, naming the three with their sizes
  and SHA-256 digests (:mod:`minidl.train.checkpoint_manifest`): a checkpoint without it
  is incomplete and is refused.

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

from minidl.dispatch import Device
from minidl.module import Module, is_config
from minidl.optim import AdamState, Optimizer
from minidl.store import SafetensorsStore, config_path, safetensors_io
from minidl.store.atomic_file import fsync_directory, write_bytes_atomically
from minidl.tensor import Tensor
from minidl.train.checkpoint_manifest import (
    IncompleteCheckpointError,
    manifest_path,
    problems,
    recorded_epochs,
    write_manifest,
)

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
    ``.json``), ``optim``, and ``manifest`` (written last: the mark of a complete checkpoint)."""
    directory = Path(directory)
    return {"model": directory / f"model-{epoch}.safetensors",
            "optim": directory / f"optim-{epoch}.safetensors",
            "manifest": manifest_path(directory, epoch)}


def _file_names(epoch: int) -> list[str]:
    paths = checkpoint_paths(".", epoch)
    return [paths["model"].name, config_path(paths["model"]).name, paths["optim"].name]


def save_checkpoint(directory: str | Path, epoch: int, model: Module, config: Any,
                    optimizer: Optimizer, keep_last: int | None = None) -> dict[str, Path]:
    """Write the checkpoint of ``epoch`` (model record + config, optimizer state, then the
    manifest); returns its paths.

    Complete or absent: each file is written under a temporary name, fsynced and renamed,
    and the manifest naming the files with their sizes and digests comes last; a save
    interrupted at any byte leaves this epoch without a manifest, which
    :func:`restore_checkpoint` refuses, and leaves every earlier checkpoint untouched.

    How many are kept: by default **every** checkpoint (the training chapter resumes from
    an epoch before the last). With ``keep_last=n``, once epoch ``e`` is complete the
    checkpoint of epoch ``e - n`` is deleted (its manifest first), as burn-train's
    ``KeepLastNCheckpoints::new(n)`` does. burn's learner defaults to ``n = 2``, composed
    with a strategy that also keeps the epoch of the best validation loss (an epoch goes
    only when both agree); burn's reason is "minimizing disk space while ensuring that the
    training can be resumed even if something goes wrong". That matters there because its
    ``FileCheckpointer`` writes each record in place, so a save dying mid-file leaves the
    newest epoch torn and the one before it as the epoch to resume from. Here a torn save
    never replaces a complete one, so ``n = 1`` already always leaves a resumable epoch;
    ``2`` still keeps one step back from a newest epoch that is bad for another reason (a
    diverged step, saved faithfully).
    """
    if keep_last is not None and keep_last < 1:
        raise ValueError(f"save_checkpoint: keep_last must be at least 1, found {keep_last}")
    if not is_config(config):
        raise TypeError(f"save_checkpoint: config must be a @config instance, found {type(config).__name__}")
    paths = checkpoint_paths(directory, epoch)
    directory = paths["model"].parent
    directory.mkdir(parents=True, exist_ok=True)
    # an older save of this same epoch stops counting before its files are replaced
    paths["manifest"].unlink(missing_ok=True)
    fsync_directory(directory)
    record = SafetensorsStore.from_bytes().collect_from(model).data
    tensors, metadata = optimizer_record(optimizer, model)
    files = {paths["model"].name: record,
             config_path(paths["model"]).name: (config.to_json() + "\n").encode("utf-8"),
             paths["optim"].name: safetensors_io.to_bytes(tensors, metadata)}
    for name, data in files.items():
        write_bytes_atomically(directory / name, data)
    write_manifest(directory, epoch, files)
    if keep_last is not None and epoch - keep_last > 0:
        delete_checkpoint(directory, epoch - keep_last)
    return paths


def delete_checkpoint(directory: str | Path, epoch: int) -> None:
    """Remove the checkpoint of ``epoch`` (burn's ``Checkpointer::delete``): the manifest
    first, so the checkpoint is never seen half-deleted as complete."""
    paths = checkpoint_paths(directory, epoch)
    paths["manifest"].unlink(missing_ok=True)
    fsync_directory(paths["manifest"].parent)
    for name in _file_names(epoch):
        (paths["model"].parent / name).unlink(missing_ok=True)


def latest_complete_epoch(directory: str | Path) -> int | None:
    """The newest epoch whose checkpoint in ``directory`` is complete (manifest present,
    every file it names there with its size and digest), or ``None`` if there is none."""
    for epoch in recorded_epochs(directory):
        if not problems(directory, epoch, _file_names(epoch))[0]:
            return epoch
    return None


def _refuse(directory: Path, epoch: int, found: list[str]) -> IncompleteCheckpointError:
    latest = latest_complete_epoch(directory)
    resume = (f"The latest complete checkpoint is epoch {latest}." if latest is not None
              else "There is no complete checkpoint there.")
    return IncompleteCheckpointError(
        f"the checkpoint of epoch {epoch} in {directory} is incomplete or damaged, so it is not "
        f"loaded: {'; '.join(found)}. {resume}"
    )


def restore_checkpoint(directory: str | Path, epoch: int, config_cls: type, device: Device,
                       optimizer: Optimizer) -> Module:
    """The model of checkpoint ``epoch`` built on ``device`` from its saved config, with
    ``optimizer``'s state restored for it (burn's ``Checkpointer::restore`` of the learner).

    Only a complete checkpoint is loaded: a missing manifest or file, or a file whose size
    or SHA-256 is not the manifest's, raises :class:`IncompleteCheckpointError` saying what
    is wrong and which epoch :func:`latest_complete_epoch` would resume from. The bytes
    checked are the bytes loaded (each file is read once)."""
    directory = Path(directory)
    paths = checkpoint_paths(directory, epoch)
    found, verified = problems(directory, epoch, _file_names(epoch))
    if found:
        raise _refuse(directory, epoch, found)
    config = config_cls.from_json(verified[config_path(paths["model"]).name].decode("utf-8"))
    model = SafetensorsStore.from_bytes(verified[paths["model"].name]).load_into(config.init(device))
    tensors, metadata = safetensors_io.from_bytes(verified[paths["optim"].name], source=str(paths["optim"]))
    load_optimizer_record(optimizer, model, tensors, metadata, device)
    return model

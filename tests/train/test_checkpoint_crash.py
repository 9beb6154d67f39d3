"""Checkpoints are complete or absent: a save killed at any byte never yields a loadable
half-checkpoint, never harms the previous one, and the refusal says which epoch to resume."""

from __future__ import annotations

import hashlib
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from minidl.optim import AdamConfig
from minidl.store import safetensors_io
from minidl.train import (
    IncompleteCheckpointError,
    checkpoint_paths,
    latest_complete_epoch,
    restore_checkpoint,
    save_checkpoint,
)
from minidl.train import checkpoint as checkpoint_module

from .crash_child import AD, CrashConfig, state_arrays, train

ROOT = Path(__file__).resolve().parents[2]
CHILD = Path(__file__).with_name("crash_child.py")


def run_child(*args: str) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
           "PYTHONDONTWRITEBYTECODE": "1"}
    return subprocess.Popen([sys.executable, str(CHILD), *args], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def finish(child: subprocess.Popen) -> tuple[int, str]:
    _, err = child.communicate(timeout=300)
    return child.returncode, err


def digests(directory: Path) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(directory.iterdir())}


def same_contents(path: Path, whole: Path) -> bool:
    """Whether ``path`` holds what the complete file ``whole`` holds (safetensors headers of
    two processes may order the metadata differently, so those compare by content)."""
    if path.suffix != ".safetensors":
        return path.read_bytes() == whole.read_bytes()
    (tensors, meta), (want, want_meta) = safetensors_io.read_file(path), safetensors_io.read_file(whole)
    return meta == want_meta and sorted(tensors) == sorted(want) and all(
        bits(tensors[k]) == bits(want[k]) for k in want)


def bits(a: np.ndarray) -> bytes:
    return a.dtype.str.encode() + str(a.shape).encode() + np.ascontiguousarray(a).tobytes()


def test_a_save_killed_at_any_byte_leaves_the_previous_checkpoint_whole(tmp_path):
    base, ref = tmp_path / "base", tmp_path / "ref"
    rc, err = finish(run_child("first", str(base), str(ref), str(tmp_path / "expected.npz")))
    assert rc == 0, err
    epoch1 = digests(base)
    sizes = {name: (ref / name).stat().st_size for name in ("model-2.safetensors", "optim-2.safetensors")}
    model_size, optim_size = sizes["model-2.safetensors"], sizes["optim-2.safetensors"]
    # files are written model, config, optim, manifest; the limit is per file
    assert optim_size > model_size > (ref / "model-2.json").stat().st_size
    assert optim_size > (ref / "checkpoint-2.json").stat().st_size
    limits = sorted({0, 1, model_size // 2, model_size - 1, model_size, (model_size + optim_size) // 2,
                     optim_size - 1})

    children = {}
    for limit in limits:
        run = tmp_path / f"killed-at-{limit}"
        shutil.copytree(base, run)
        children[limit] = (run, run_child("kill", str(run), str(tmp_path / f"scratch-{limit}"), str(limit)))

    expected = dict(np.load(tmp_path / "expected.npz"))
    for limit, (run, child) in children.items():
        rc, err = finish(child)
        assert rc == -signal.SIGXFSZ, f"limit {limit}: the child was not killed by SIGXFSZ (rc {rc}): {err}"
        # every visible file of epoch 2 is whole (renamed only once written); temporaries stay hidden
        for path in run.iterdir():
            if path.name.startswith("."):
                assert path.name.endswith(".tmp")
            elif path.name not in epoch1:
                assert same_contents(path, ref / path.name), f"limit {limit}: {path.name} torn"
        assert not (run / "checkpoint-2.json").exists()
        model_written = limit >= model_size
        assert (run / "model-2.safetensors").exists() == model_written
        assert not (run / "optim-2.safetensors").exists()

        assert latest_complete_epoch(run) == 1
        with pytest.raises(IncompleteCheckpointError) as refused:
            restore_checkpoint(run, 2, CrashConfig, AD, AdamConfig().init())
        message = str(refused.value)
        assert "epoch 2" in message and "no manifest checkpoint-2.json" in message
        assert "The latest complete checkpoint is epoch 1." in message
        assert "optim-2.safetensors" in message.split("missing:")[1]
        if model_written:
            assert "present but unconfirmed: model-2.safetensors, model-2.json" in message

        # the previous checkpoint: its files untouched, restored bit for bit
        assert {name: digest for name, digest in digests(run).items() if name in epoch1} == epoch1
        optimizer = AdamConfig().init()
        model = restore_checkpoint(run, 1, CrashConfig, AD, optimizer)
        restored = state_arrays(model, optimizer)
        assert sorted(restored) == sorted(expected)
        for name, value in expected.items():
            assert bits(restored[name]) == bits(value), f"limit {limit}: {name} differs after restore"


def _trained(steps: int = 1):
    AD.seed(0)
    optimizer = AdamConfig().init()
    return train(CrashConfig().init(AD), optimizer, steps, seed=1), optimizer


def test_a_save_dying_before_its_manifest_is_refused(tmp_path, monkeypatch):
    model, optimizer = _trained()
    save_checkpoint(tmp_path, 1, model, CrashConfig(), optimizer)

    def crash(*_args, **_kwargs):
        raise KeyboardInterrupt  # Ctrl-C after the three files, before the manifest

    monkeypatch.setattr(checkpoint_module, "write_manifest", crash)
    with pytest.raises(KeyboardInterrupt):
        save_checkpoint(tmp_path, 2, model, CrashConfig(), optimizer)
    monkeypatch.undo()
    assert all((tmp_path / name).exists() for name in ("model-2.safetensors", "model-2.json", "optim-2.safetensors"))
    with pytest.raises(IncompleteCheckpointError, match="epoch 2 .* no manifest checkpoint-2.json.*"
                                                        "The latest complete checkpoint is epoch 1"):
        restore_checkpoint(tmp_path, 2, CrashConfig, AD, AdamConfig().init())
    assert latest_complete_epoch(tmp_path) == 1


@pytest.mark.parametrize("damage, reason", [
    (lambda p: p.write_bytes(p.read_bytes()[:-4]), "has {n} bytes, its manifest says {m}"),
    (lambda p: p.write_bytes(p.read_bytes()[:-1] + bytes([p.read_bytes()[-1] ^ 1])), "SHA-256 differs"),
    (lambda p: p.unlink(), "missing: optim-2.safetensors"),
], ids=["truncated", "one-bit-flipped", "deleted"])
def test_a_file_changed_after_the_save_is_refused(tmp_path, damage, reason):
    model, optimizer = _trained()
    save_checkpoint(tmp_path, 1, model, CrashConfig(), optimizer)
    save_checkpoint(tmp_path, 2, model, CrashConfig(), optimizer)
    optim = checkpoint_paths(tmp_path, 2)["optim"]
    size = optim.stat().st_size
    damage(optim)
    with pytest.raises(IncompleteCheckpointError) as refused:
        restore_checkpoint(tmp_path, 2, CrashConfig, AD, AdamConfig().init())
    assert reason.format(n=size - 4, m=size) in str(refused.value)
    assert "The latest complete checkpoint is epoch 1." in str(refused.value)
    assert latest_complete_epoch(tmp_path) == 1


def test_no_complete_checkpoint_is_said_so(tmp_path):
    assert latest_complete_epoch(tmp_path / "nowhere") is None
    with pytest.raises(IncompleteCheckpointError, match="There is no complete checkpoint there"):
        restore_checkpoint(tmp_path, 3, CrashConfig, AD, AdamConfig().init())


def test_saving_an_epoch_again_unmarks_it_before_replacing_its_files(tmp_path, monkeypatch):
    model, optimizer = _trained()
    save_checkpoint(tmp_path, 1, model, CrashConfig(), optimizer)
    seen = []
    real = checkpoint_module.write_bytes_atomically

    def spy(path, data):
        seen.append((Path(path).name, checkpoint_paths(tmp_path, 1)["manifest"].exists()))
        return real(path, data)

    monkeypatch.setattr(checkpoint_module, "write_bytes_atomically", spy)
    save_checkpoint(tmp_path, 1, model, CrashConfig(), optimizer)
    assert seen and not any(manifest_there for _, manifest_there in seen)
    assert latest_complete_epoch(tmp_path) == 1


def test_keep_last_deletes_the_epoch_n_back_like_burns_keep_last_n(tmp_path):
    model, optimizer = _trained()
    for epoch in range(1, 5):
        save_checkpoint(tmp_path, epoch, model, CrashConfig(), optimizer, keep_last=2)
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        f"{stem}-{e}.{ext}" for e in (3, 4)
        for stem, ext in (("model", "safetensors"), ("model", "json"), ("optim", "safetensors"), ("checkpoint", "json")))
    with pytest.raises(ValueError, match="keep_last must be at least 1"):
        save_checkpoint(tmp_path, 5, model, CrashConfig(), optimizer, keep_last=0)

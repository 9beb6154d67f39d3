"""A save that fails leaves the file already at that path as it was (SafetensorsStore, the
PyTorch-named export, the record files): the disk "fills up" under a file-size limit."""

from __future__ import annotations

import errno
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from minidl.dispatch import Device
from minidl.nn import LinearConfig
from minidl.store import PytorchStore, SafetensorsStore, StoreError
from minidl.store.atomic_file import write_bytes_atomically

ROOT = Path(__file__).resolve().parents[2]
LIMIT = 1024  # bytes: the old file fits, the new one does not

CHILD = textwrap.dedent("""
    import resource, signal, sys
    from minidl.dispatch import Device
    from minidl.nn import LinearConfig
    from minidl.store import MinidlToPyTorchAdapter, SafetensorsFileRecorder, SafetensorsStore

    path, how, mode, limit = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
    layer = LinearConfig(32, 32).init(Device.ndarray())   # a 4 KiB record
    save = {
        "store": lambda: SafetensorsStore.from_file(path).collect_from(layer),
        "pytorch-export": lambda: SafetensorsStore.from_file(path)
            .with_to_adapter(MinidlToPyTorchAdapter()).collect_from(layer),
        "recorder": lambda: SafetensorsFileRecorder().record(layer.into_record(), path),
    }[how]
    if mode == "killed":
        signal.signal(signal.SIGXFSZ, signal.SIG_DFL)
    resource.setrlimit(resource.RLIMIT_FSIZE, (limit, resource.getrlimit(resource.RLIMIT_FSIZE)[1]))
    try:
        save()
    except OSError as err:
        print(err.errno)
        sys.exit(3)
""")


def old_file(path: Path) -> bytes:
    SafetensorsStore.from_file(path).collect_from(LinearConfig(2, 2).init(Device.ndarray()))
    data = path.read_bytes()
    assert len(data) < LIMIT
    return data


@pytest.mark.parametrize("how", ["store", "pytorch-export", "recorder"])
@pytest.mark.parametrize("mode", ["raises", "killed"], ids=["disk-full-error", "killed-mid-write"])
def test_a_save_past_the_disk_limit_leaves_the_old_file(tmp_path, how, mode):
    path = tmp_path / "model.safetensors"
    before = old_file(path)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
           "PYTHONDONTWRITEBYTECODE": "1"}
    child = subprocess.run([sys.executable, "-c", CHILD, str(path), how, mode, str(LIMIT)], env=env,
                           capture_output=True, text=True, timeout=300)
    if mode == "raises":  # Python ignores SIGXFSZ: the write fails with EFBIG
        assert child.returncode == 3 and child.stdout.strip() == str(errno.EFBIG), child.stderr
        assert [p.name for p in tmp_path.iterdir()] == ["model.safetensors"], "the temporary file stayed"
    else:
        assert child.returncode == -signal.SIGXFSZ, child.stderr
        leftovers = [p.name for p in tmp_path.iterdir() if p.name != "model.safetensors"]
        assert all(name.startswith(".model.safetensors.") and name.endswith(".tmp") for name in leftovers)
    assert path.read_bytes() == before


def test_a_failing_write_removes_its_temporary_and_keeps_the_old_file(tmp_path, monkeypatch):
    path = tmp_path / "weights.safetensors"
    path.write_bytes(b"old")

    def no_space(fd):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "fsync", no_space)
    with pytest.raises(OSError, match="No space left"):
        write_bytes_atomically(path, b"new bytes")
    monkeypatch.undo()
    assert path.read_bytes() == b"old" and [p.name for p in tmp_path.iterdir()] == [path.name]


def test_a_save_into_a_missing_directory_fails_and_creates_nothing(tmp_path):
    with pytest.raises(FileNotFoundError):
        SafetensorsStore.from_file(tmp_path / "no" / "such.safetensors").collect_from(
            LinearConfig(2, 2).init(Device.ndarray()))
    assert list(tmp_path.iterdir()) == []


def test_pytorch_store_refuses_to_save_and_leaves_the_file(tmp_path):
    path = tmp_path / "model.pt"
    path.write_bytes(b"a torch file")
    with pytest.raises(StoreError, match="Saving to PyTorch format is not supported"):
        PytorchStore.from_file(path).collect_from(LinearConfig(2, 2).init(Device.ndarray()))
    assert path.read_bytes() == b"a torch file"


def test_a_saved_file_gets_the_usual_permissions(tmp_path):
    umask = os.umask(0o022)
    os.umask(umask)
    path = write_bytes_atomically(tmp_path / "a.bin", np.arange(3).tobytes())
    assert path.stat().st_mode & 0o777 == 0o666 & ~umask

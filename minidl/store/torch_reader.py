"""Read the tensors of a ``torch.save``d file without torch and without running its code.

Mirrors burn-store's ``pytorch/reader.rs`` (``PytorchReader``). Since PyTorch 1.6,
``torch.save`` writes a zip archive::

    archive/data.pkl        the pickled object (a state_dict: names -> tensors)
    archive/data/0, 1, ...  one raw byte buffer per storage
    archive/byteorder       "little" or "big"
    archive/version, ...

``data.pkl`` is read with :class:`~minidl.store.torch_pickle.SafeUnpickler`, which builds
only tensors (as NumPy arrays) and plain containers; each storage is read from its own zip
member and checked against the size the pickle announces. The result is a flat
``{name: np.ndarray}`` dict: nested dicts (a checkpoint holding ``{"model": state_dict,
"epoch": 3}``) are flattened with dots, plain numbers and strings are dropped.
"""

from __future__ import annotations

import zipfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from minidl.store.errors import CorruptFileError, StoreError
from minidl.store.torch_pickle import safe_unpickle

# zip members are compressed at most by this ratio before we call the file hostile (a "zip
# bomb" would otherwise allocate whatever the header claims).
_MAX_RATIO = 1000


def _storage_dtype(name: str, byteorder: str) -> np.dtype:
    if name == "bfloat16":
        return np.dtype(byteorder + "u2")
    return np.dtype(name).newbyteorder(byteorder) if np.dtype(name).itemsize > 1 else np.dtype(name)


def _decode_storage(raw: bytes, dtype_name: str, byteorder: str, key: str, numel: int) -> np.ndarray:
    dtype = _storage_dtype(dtype_name, byteorder)
    if len(raw) != numel * dtype.itemsize:
        raise CorruptFileError(
            f"storage {key}: expected {numel} {dtype_name} elements ({numel * dtype.itemsize} "
            f"bytes), found {len(raw)} bytes"
        )
    flat = np.frombuffer(raw, dtype=dtype)
    if dtype_name == "bfloat16":
        # bfloat16 is the top half of a float32: widening is exact
        return (flat.astype(np.uint32) << 16).view(np.float32)
    return flat.astype(flat.dtype.newbyteorder("="), copy=False)


def read_torch_file(path: str | Path, top_level_key: str | None = None) -> dict[str, np.ndarray]:
    """The tensors of a ``torch.save``d file, by name (see the module docstring).

    Raises :class:`~minidl.store.errors.UnsafeFileError` if the pickle asks for anything but
    tensors, :class:`~minidl.store.errors.CorruptFileError` if the file is truncated,
    damaged or not a PyTorch zip archive, ``FileNotFoundError`` if it does not exist.
    """
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"PyTorch file not found: {path}")
    try:
        archive = zipfile.ZipFile(path)
    except zipfile.BadZipFile:
        raise CorruptFileError(
            f"{path}: not a PyTorch zip archive (the file is truncated or damaged, or was written "
            "by torch.save's legacy format, _use_new_zipfile_serialization=False, which minidl "
            "does not read)"
        ) from None
    with archive:
        obj = _read_archive(archive, path)
    return flatten_tensors(obj, top_level_key, source=str(path))


def _read_archive(archive: zipfile.ZipFile, path: Path) -> Any:
    names = archive.namelist()
    pickles = [n for n in names if n.endswith("data.pkl") and n.count("/") == 1]
    if len(pickles) != 1:
        raise CorruptFileError(f"{path}: expected one '<archive>/data.pkl' in the zip, found {pickles}")
    prefix = pickles[0][: -len("data.pkl")]
    try:
        byteorder_raw = archive.read(prefix + "byteorder") if prefix + "byteorder" in names else b"little"
        byteorder = {"little": "<", "big": ">"}[byteorder_raw.decode().strip()]
        pickled = archive.read(pickles[0])
    except (zipfile.BadZipFile, KeyError, UnicodeDecodeError, OSError, EOFError) as err:
        raise CorruptFileError(f"{path}: damaged archive ({type(err).__name__}: {err})") from None

    def load_storage(key: str, dtype_name: str, numel: int) -> np.ndarray:
        member = f"{prefix}data/{key}"
        try:
            info = archive.getinfo(member)
        except KeyError:
            raise CorruptFileError(f"{path}: storage {key} is missing from the archive") from None
        if info.compress_size and info.file_size > _MAX_RATIO * max(info.compress_size, 1):
            raise CorruptFileError(f"{path}: storage {key} claims an implausible size")
        try:
            raw = archive.read(member)
        except (zipfile.BadZipFile, OSError, EOFError) as err:
            raise CorruptFileError(f"{path}: storage {key} is damaged ({err})") from None
        return _decode_storage(raw, dtype_name, byteorder, key, numel)

    return safe_unpickle(pickled, load_storage)


def flatten_tensors(obj: Any, top_level_key: str | None = None, source: str = "state dict") -> dict[str, np.ndarray]:
    """Flatten a (nested) mapping of arrays into ``{"a.b.c": array}``; non-tensor leaves
    (numbers, strings, None) are dropped. ``top_level_key`` first picks one entry, as burn's
    ``with_top_level_key("model_state_dict")`` does."""
    if top_level_key is not None:
        if not isinstance(obj, Mapping) or top_level_key not in obj:
            keys = sorted(map(str, obj)) if isinstance(obj, Mapping) else type(obj).__name__
            raise StoreError(f"{source}: top-level key {top_level_key!r} not found (found {keys})")
        obj = obj[top_level_key]
    out: dict[str, np.ndarray] = {}

    def walk(value: Any, prefix: str) -> None:
        if isinstance(value, np.ndarray):
            out[prefix] = value
        elif isinstance(value, Mapping):
            for k, v in value.items():
                walk(v, f"{prefix}.{k}" if prefix else str(k))
        elif isinstance(value, list | tuple):
            for i, v in enumerate(value):
                walk(v, f"{prefix}.{i}" if prefix else str(i))

    if isinstance(obj, np.ndarray):
        raise StoreError(f"{source}: holds a single tensor, not a state dict of named tensors")
    walk(obj, "")
    return out

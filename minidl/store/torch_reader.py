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

from minidl.store.errors import CorruptFileError, StoreError, UnsafeFileError
from minidl.store.torch_pickle import STORAGE_DTYPES, safe_unpickle

# What a hostile file may not make the reader do, checked before the work is done:
# a zip member compressed by more than this ratio is a "zip bomb" (it would allocate whatever
# its header claims);
_MAX_RATIO = 1000
# data.pkl describes tensors, it does not hold them (~100 bytes per tensor): bigger is hostile;
MAX_PICKLE_BYTES = 64 << 20
# flattening walks the unpickled containers: a pickle whose lists share each other (a DAG, a few
# bytes long) would make a recursive walk visit 2**depth paths; dicts 20,000 deep would blow the
# stack. A state dict is a shallow tree of at most a few hundred thousand entries.
MAX_NESTING = 100
MAX_ENTRIES = 250_000


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
    except (zipfile.BadZipFile, zipfile.LargeZipFile, ValueError, EOFError, NotImplementedError):
        raise CorruptFileError(
            f"{path}: not a PyTorch zip archive (the file is truncated or damaged, or was written "
            "by torch.save's legacy format, _use_new_zipfile_serialization=False, which minidl "
            "does not read)"
        ) from None
    with archive:
        obj = _read_archive(archive, path)
    return flatten_tensors(obj, top_level_key, source=str(path))


def _check_member_names(names: list[str], path: Path) -> None:
    """Refuse member names that point outside the archive (``../x``, ``/etc/x``, ``C:\\x``).

    minidl never extracts an archive, but a file with such names was not written by
    ``torch.save``: it is refused rather than half-trusted."""
    for name in names:
        parts = name.replace("\\", "/").split("/")
        if name.startswith(("/", "\\")) or ".." in parts or "\0" in name or (len(name) > 1 and name[1] == ":"):
            raise UnsafeFileError(f"{path}: the zip member name {name!r} points outside the archive; refused")


def _check_size(info: zipfile.ZipInfo, path: Path, what: str, limit: int | None = None) -> None:
    """Refuse a member whose uncompressed size is implausible, before it is decompressed."""
    if info.file_size > _MAX_RATIO * max(info.compress_size, 1) and info.file_size > (1 << 20):
        raise CorruptFileError(
            f"{path}: {what} claims {info.file_size} bytes from {info.compress_size} compressed "
            f"(ratio over {_MAX_RATIO}): refused as a zip bomb"
        )
    if limit is not None and info.file_size > limit:
        raise CorruptFileError(f"{path}: {what} is {info.file_size} bytes, more than the {limit} a state dict needs")


def _read_archive(archive: zipfile.ZipFile, path: Path) -> Any:
    names = archive.namelist()
    _check_member_names(names, path)
    pickles = [n for n in names if n.endswith("data.pkl") and n.count("/") == 1]
    if len(pickles) != 1:
        raise CorruptFileError(f"{path}: expected one '<archive>/data.pkl' in the zip, found {pickles}")
    prefix = pickles[0][: -len("data.pkl")]
    _check_size(archive.getinfo(pickles[0]), path, "data.pkl", MAX_PICKLE_BYTES)
    try:
        byteorder_raw = archive.read(prefix + "byteorder") if prefix + "byteorder" in names else b"little"
        byteorder = {"little": "<", "big": ">"}[byteorder_raw.decode().strip()]
        pickled = archive.read(pickles[0])
    except (zipfile.BadZipFile, KeyError, UnicodeDecodeError, OSError, EOFError, ValueError,
            NotImplementedError, RuntimeError) as err:  # RuntimeError: an encrypted member
        raise CorruptFileError(f"{path}: damaged archive ({type(err).__name__}: {err})") from None

    def load_storage(key: str, dtype_name: str, numel: int) -> np.ndarray:
        member = f"{prefix}data/{key}"
        try:
            info = archive.getinfo(member)
        except KeyError:
            raise CorruptFileError(f"{path}: storage {key} is missing from the archive") from None
        _check_size(info, path, f"storage {key}")
        itemsize = 2 if dtype_name == "bfloat16" else np.dtype(STORAGE_DTYPES.get(dtype_name, dtype_name)).itemsize
        if info.file_size != numel * itemsize:
            raise CorruptFileError(
                f"{path}: storage {key}: expected {numel} {dtype_name} elements "
                f"({numel * itemsize} bytes), found {info.file_size} bytes"
            )
        try:
            raw = archive.read(member)
        except (zipfile.BadZipFile, OSError, EOFError, ValueError, NotImplementedError, RuntimeError) as err:
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
    if isinstance(obj, np.ndarray):
        raise StoreError(f"{source}: holds a single tensor, not a state dict of named tensors")
    return _walk(obj, source)


def _walk(obj: Any, source: str) -> dict[str, np.ndarray]:
    """The arrays under ``obj`` by dotted path, walked iteratively within
    :data:`MAX_NESTING` levels and :data:`MAX_ENTRIES` entries (see their comment)."""
    out: dict[str, np.ndarray] = {}
    stack: list[tuple[Any, str, int]] = [(obj, "", 0)]
    visited = 0
    while stack:
        value, prefix, depth = stack.pop()
        visited += 1
        if visited > MAX_ENTRIES:
            raise CorruptFileError(
                f"{source}: more than {MAX_ENTRIES} entries to walk; its containers reference "
                "each other (a state dict is a tree of tensors): refused"
            )
        if isinstance(value, np.ndarray):
            out[prefix] = value
            continue
        if isinstance(value, Mapping):
            items = [(str(k), v) for k, v in value.items()]
        elif isinstance(value, list | tuple):
            items = [(str(i), v) for i, v in enumerate(value)]
        else:
            continue  # numbers, strings, None: not tensors
        if depth >= MAX_NESTING:
            raise CorruptFileError(
                f"{source}: containers nested deeper than {MAX_NESTING} levels (or containing "
                f"themselves) at '{prefix[:200]}': refused"
            )
        for key, child in reversed(items):
            stack.append((child, f"{prefix}.{key}" if prefix else key, depth + 1))
    return out

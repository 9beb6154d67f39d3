"""Reading and writing safetensors files of NumPy arrays, with clear errors.

The safetensors format (what burn-store's ``SafetensorsStore`` writes) is an 8-byte header
length, a JSON header (``{"fc.weight": {"dtype": "F32", "shape": [2, 4], "data_offsets":
[0, 32]}, "__metadata__": {...}}``) and the raw little-endian bytes. Nothing in it is code:
reading one cannot run anything, which is why burn (and we) save in it. Arrays keep their
dtype exactly (float16, float64, int, bool), so a round trip is bit-exact.
"""

from __future__ import annotations

import json
import struct
from collections.abc import Mapping
from pathlib import Path

import numpy as np
import safetensors
import safetensors.numpy as st_numpy

from minidl.store.atomic_file import write_bytes_atomically
from minidl.store.errors import CorruptFileError, StoreError


def to_bytes(tensors: Mapping[str, np.ndarray], metadata: Mapping[str, str] | None = None) -> bytes:
    """The safetensors bytes of ``tensors`` (C-contiguous copies are made where needed)."""
    arrays = {}
    for name, array in tensors.items():
        if not isinstance(array, np.ndarray):
            raise StoreError(f"safetensors: '{name}' is a {type(array).__name__}, not an array")
        # ascontiguousarray alone turns a 0-d array into shape (1,): keep the shape
        arrays[name] = np.ascontiguousarray(array).reshape(array.shape)
    meta = {str(k): str(v) for k, v in (metadata or {}).items()}
    try:
        return st_numpy.save(arrays, metadata=meta or None)
    except (safetensors.SafetensorError, ValueError, TypeError) as err:
        raise StoreError(f"safetensors: cannot write these tensors: {err}") from None


def from_bytes(data: bytes, source: str = "safetensors bytes") -> tuple[dict[str, np.ndarray], dict[str, str]]:
    """``(tensors, metadata)`` read from safetensors bytes; a damaged buffer raises
    :class:`CorruptFileError` naming ``source``."""
    try:
        tensors = st_numpy.load(data)
        metadata = _metadata(data)
    except (safetensors.SafetensorError, ValueError, OverflowError) as err:
        raise CorruptFileError(
            f"{source}: not a valid safetensors file (truncated or damaged?): {err}"
        ) from None
    # own the memory: nothing may alias the bytes we were given
    return {name: np.array(a, copy=True) for name, a in tensors.items()}, metadata


def _metadata(data: bytes) -> dict[str, str]:
    (length,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + length])
    return dict(header.get("__metadata__") or {})


def write_file(path: str | Path, tensors: Mapping[str, np.ndarray], metadata: Mapping[str, str] | None = None) -> None:
    """Write ``tensors`` to ``path`` in the safetensors format, whole or not at all: the
    bytes are made first, then :func:`~minidl.store.atomic_file.write_bytes_atomically`
    puts them in place, so a failing save leaves any file already at ``path`` as it was."""
    write_bytes_atomically(path, to_bytes(tensors, metadata))


def read_file(path: str | Path) -> tuple[dict[str, np.ndarray], dict[str, str]]:
    """``(tensors, metadata)`` of a safetensors file."""
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"safetensors file not found: {path}")
    return from_bytes(path.read_bytes(), source=str(path))

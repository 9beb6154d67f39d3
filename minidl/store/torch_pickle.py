"""A pickle reader that only builds tensors: safe reading of PyTorch's ``data.pkl``.

Mirrors burn-store's ``pytorch/pickle_reader.rs``: burn never runs Python, it interprets the
pickle opcodes itself and knows only the handful of globals a ``state_dict`` uses. Here
Python's ``pickle.Unpickler`` does the opcode work, but :meth:`SafeUnpickler.find_class` is
the only door through which a pickle can reach a callable, and it opens only for:

- ``collections.OrderedDict`` (the state dict itself);
- ``torch._utils._rebuild_tensor_v2`` / ``_rebuild_parameter`` — answered with OUR functions
  that build NumPy arrays; torch is never imported;
- the typed storage markers ``torch.FloatStorage``, ``torch.HalfStorage``, ... (dtype names).

Anything else (``os.system``, ``builtins.eval``, a model class from ``torch.save(model)``)
raises :class:`UnsafeFileError` before it is called. ``torch.load(weights_only=True)`` uses
the same idea; this reader needs no torch at all.
"""

from __future__ import annotations

import io
import math
import pickle
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

import numpy as np

from minidl.store.errors import CorruptFileError, UnsafeFileError

# torch storage class name -> NumPy dtype (native order; the archive's byteorder is applied
# when the bytes are read). bfloat16 has no NumPy dtype: it is widened to float32 exactly.
STORAGE_DTYPES: dict[str, str] = {
    "FloatStorage": "float32",
    "DoubleStorage": "float64",
    "HalfStorage": "float16",
    "BFloat16Storage": "bfloat16",
    "LongStorage": "int64",
    "IntStorage": "int32",
    "ShortStorage": "int16",
    "CharStorage": "int8",
    "ByteStorage": "uint8",
    "BoolStorage": "bool",
}


class StorageType:
    """What ``torch.FloatStorage`` & co. unpickle to here: just the element type's name."""

    __slots__ = ("dtype",)

    def __init__(self, dtype: str):
        self.dtype = dtype

    def __repr__(self) -> str:
        return f"StorageType({self.dtype})"


class Storage:
    """One storage of the archive: a flat 1-D array of its element type (burn's ``Storage``)."""

    __slots__ = ("key", "array")

    def __init__(self, key: str, array: np.ndarray):
        self.key = key
        self.array = array


# A view may repeat its storage's elements (stride 0, as an expanded tensor has): allow that up to
# this many elements per tensor, and up to this budget for the whole file, then call it hostile.
MAX_EXPANDED_ELEMENTS = 1 << 22
MAX_MATERIALIZED_BYTES_OVER_STORAGES = 64 << 20


def rebuild_tensor(storage: Storage, storage_offset: int, size: tuple, stride: tuple,
                   requires_grad: bool = False, backward_hooks: Any = None,
                   metadata: Any = None) -> np.ndarray:
    """Our ``torch._utils._rebuild_tensor_v2``: the view ``(offset, size, stride)`` of a
    storage, copied into a contiguous array. Bounds are checked first: a hostile file must
    not make ``as_strided`` read memory outside the storage, nor make a one-element storage
    viewed with stride 0 as ``[60000, 60000]`` allocate gigabytes."""
    if not isinstance(storage, Storage):
        raise UnsafeFileError(f"tensor rebuilt from {type(storage).__name__}, not a storage")
    size, stride, offset = _view_args(storage, storage_offset, size, stride)
    flat = storage.array
    if 0 in size:
        return np.zeros(size, dtype=flat.dtype)
    numel = math.prod(size)
    if numel > max(flat.size, MAX_EXPANDED_ELEMENTS):
        raise CorruptFileError(
            f"storage {storage.key}: a view of {numel} elements (size={list(size)}, "
            f"stride={list(stride)}) over a storage of {flat.size}: refused, it would repeat "
            "the storage's elements into more memory than the file holds"
        )
    last = offset + sum((n - 1) * s for n, s in zip(size, stride))
    if last >= flat.size:
        raise CorruptFileError(
            f"storage {storage.key}: view reaches element {last} but the storage holds {flat.size}"
        )
    item = flat.itemsize
    view = np.lib.stride_tricks.as_strided(
        flat[offset:], shape=size, strides=tuple(s * item for s in stride), writeable=False
    )
    return np.array(view, copy=True, order="C")


def _view_args(storage: Storage, storage_offset: Any, size: Any, stride: Any) -> tuple[tuple, tuple, int]:
    """``(size, stride, offset)`` as ints, or :class:`CorruptFileError` naming the storage."""
    try:
        size = tuple(int(s) for s in size)
        stride = tuple(int(s) for s in stride)
        offset = int(storage_offset)
    except (TypeError, ValueError, OverflowError):
        raise CorruptFileError(
            f"storage {storage.key}: the view's offset/size/stride are not integers "
            f"({storage_offset!r}, {size!r}, {stride!r})"
        ) from None
    if len(size) != len(stride) or offset < 0 or any(s < 0 for s in size) or any(s < 0 for s in stride):
        raise CorruptFileError(f"storage {storage.key}: invalid view offset={offset} size={size} stride={stride}")
    return size, stride, offset


def rebuild_parameter(data: Any, requires_grad: bool = False, backward_hooks: Any = None) -> Any:
    """Our ``torch._utils._rebuild_parameter``: a Parameter is its data here."""
    return data


def _ordered_dict(*args: Any) -> OrderedDict:
    return OrderedDict(*args)


_ALLOWED: dict[tuple[str, str], Callable[..., Any]] = {
    ("collections", "OrderedDict"): _ordered_dict,
    ("torch._utils", "_rebuild_tensor_v2"): rebuild_tensor,
    ("torch._utils", "_rebuild_parameter"): rebuild_parameter,
}


class SafeUnpickler(pickle.Unpickler):
    """Unpickles ``data.pkl`` allowing only tensors, storages, dicts and plain values.

    ``load_storage(key, dtype, numel)`` is called for each persistent storage reference
    (``('storage', torch.FloatStorage, '0', 'cpu', 12)``) and returns the flat array.
    """

    def __init__(self, data: bytes, load_storage: Callable[[str, str, int], np.ndarray]):
        super().__init__(io.BytesIO(data))
        self._load_storage = load_storage
        self._storages: dict[str, Storage] = {}
        self._materialized = 0  # bytes of rebuilt tensors so far

    def find_class(self, module: str, name: str) -> Any:
        if (module, name) == ("torch._utils", "_rebuild_tensor_v2"):
            return self._rebuild_tensor
        if (module, name) in _ALLOWED:
            return _ALLOWED[(module, name)]
        if module == "torch" and name in STORAGE_DTYPES:
            return StorageType(STORAGE_DTYPES[name])
        raise UnsafeFileError(
            f"the file contains non-tensor objects (it asks for '{module}.{name}') and was "
            "refused as unsafe: unpickling it could run arbitrary code. Save a state_dict "
            "(torch.save(model.state_dict(), path)) rather than a model or other objects."
        )

    def _rebuild_tensor(self, storage: Any, *args: Any) -> np.ndarray:
        """:func:`rebuild_tensor`, within a budget for the whole file: many views of one large
        storage must not add up to more memory than the storages hold (plus a margin)."""
        array = rebuild_tensor(storage, *args)
        self._materialized += array.nbytes
        held = sum(s.array.nbytes for s in self._storages.values())
        if self._materialized > 4 * held + MAX_MATERIALIZED_BYTES_OVER_STORAGES:
            raise CorruptFileError(
                f"the file's tensors would take {self._materialized} bytes, far more than its "
                f"storages hold ({held} bytes): refused"
            )
        return array

    def persistent_load(self, pid: Any) -> Storage:
        if not (isinstance(pid, tuple) and len(pid) >= 5 and pid[0] == "storage"):
            raise UnsafeFileError(f"unexpected persistent reference {pid!r}; refused as unsafe")
        _, storage_type, key, _location, numel = pid[:5]
        if not isinstance(storage_type, StorageType):
            raise UnsafeFileError(f"storage {key!r} has type {storage_type!r}; refused as unsafe")
        if not isinstance(key, str | int) or not isinstance(numel, int) or numel < 0:
            raise CorruptFileError(f"storage reference {pid[:5]!r}: the key or element count is invalid")
        key = str(key)
        if key not in self._storages:
            self._storages[key] = Storage(key, self._load_storage(key, storage_type.dtype, int(numel)))
        return self._storages[key]


def safe_unpickle(data: bytes, load_storage: Callable[[str, str, int], np.ndarray]) -> Any:
    """Unpickle ``data`` with :class:`SafeUnpickler`; pickle's own errors become
    :class:`CorruptFileError` (a truncated or damaged ``data.pkl``)."""
    try:
        return SafeUnpickler(data, load_storage).load()
    except (UnsafeFileError, CorruptFileError):
        raise
    except (pickle.UnpicklingError, EOFError, ValueError, TypeError, IndexError, KeyError,
            AttributeError, MemoryError, OverflowError, RecursionError) as err:
        raise CorruptFileError(f"the pickled state dict is damaged: {type(err).__name__}: {err}") from None

"""Element types and tensor kinds, mirroring burn's ``DType`` and the Float/Int/Bool kinds."""

from __future__ import annotations

import enum

import numpy as np


class Kind(enum.Enum):
    """The kind of a tensor: which family of backend ops it uses (burn's ``TensorKind``)."""

    FLOAT = "float"
    INT = "int"
    BOOL = "bool"


class DType(enum.Enum):
    """An element type; ``.numpy`` is the NumPy dtype a CPU backend stores it as."""

    F32 = "float32"
    F64 = "float64"
    F16 = "float16"
    I32 = "int32"
    I64 = "int64"
    BOOL = "bool"

    @property
    def numpy(self) -> np.dtype:
        return _NUMPY[self]  # a look-up: np.dtype(name) parses the name (4x the cost)

    @property
    def kind(self) -> Kind:
        if self in (DType.F32, DType.F64, DType.F16):
            return Kind.FLOAT
        if self in (DType.I32, DType.I64):
            return Kind.INT
        return Kind.BOOL

    @staticmethod
    def of(value) -> DType:
        """The DType of a NumPy array, NumPy dtype, DType or dtype name."""
        if isinstance(value, DType):
            return value
        if isinstance(value, np.ndarray):
            value = value.dtype
        known = _BY_NUMPY_DTYPE.get(value) if isinstance(value, np.dtype) else None
        if known is not None:  # every op asks: a dict hit, not numpy's dtype-name machinery
            return known
        name = np.dtype(value).name
        try:
            return DType(name)
        except ValueError:
            raise TypeError(
                f"unsupported dtype {name!r}: expected one of "
                f"{', '.join(d.value for d in DType)}"
            ) from None

    def __repr__(self) -> str:
        return f"minidl.{self.value}"


_BY_NUMPY_DTYPE: dict[np.dtype, DType] = {np.dtype(d.value): d for d in DType}
_NUMPY: dict[DType, np.dtype] = {d: np.dtype(d.value) for d in DType}

float32, float64, float16 = DType.F32, DType.F64, DType.F16
int32, int64, bool_ = DType.I32, DType.I64, DType.BOOL

DEFAULT_FLOAT = DType.F32
DEFAULT_INT = DType.I64

"""What can go wrong when a store reads a file or applies tensors to a module.

Mirrors burn-store's ``ApplyError`` (one problem with one tensor, printed exactly as burn
prints it: ``Shape mismatch for 'fc.weight': expected [4, 2], found [2, 4]``) and the store
errors (``SafetensorsStoreError``, ``PytorchStoreError``). Every error a store raises is a
:class:`StoreError`, a ``ValueError``: the file or the module was the wrong value.
"""

from __future__ import annotations

import dataclasses


class StoreError(ValueError):
    """A store could not read a file or apply it to a module (nothing was changed)."""


class CorruptFileError(StoreError):
    """The file is truncated, corrupt, or not in the format the store reads."""


class UnsafeFileError(StoreError):
    """A PyTorch file asked to run code or build objects other than tensors; it was refused."""


# ----- one problem with one tensor (burn-store ``ApplyError``) --------------------------------
def _shape(shape: tuple[int, ...] | list[int]) -> str:
    # burn prints a ``Vec<usize>`` with ``{:?}``: ``[4, 2]``
    return "[" + ", ".join(str(int(s)) for s in shape) + "]"


@dataclasses.dataclass(frozen=True)
class ShapeMismatch:
    """The file's tensor (after the adapter) has another shape than the module's param."""

    path: str
    expected: tuple[int, ...]
    found: tuple[int, ...]

    def __str__(self) -> str:
        return f"Shape mismatch for '{self.path}': expected {_shape(self.expected)}, found {_shape(self.found)}"


@dataclasses.dataclass(frozen=True)
class DTypeMismatch:
    """The file's tensor has another element type than the module's param."""

    path: str
    expected: str
    found: str

    def __str__(self) -> str:
        return f"DType mismatch for '{self.path}': expected {self.expected}, found {self.found}"


@dataclasses.dataclass(frozen=True)
class LoadError:
    """The file's tensor could not be turned into a value for the param."""

    path: str
    message: str

    def __str__(self) -> str:
        return f"Load error for '{self.path}': {self.message}"


ApplyError = ShapeMismatch | DTypeMismatch | LoadError

"""Adapters: how a file's tensors are translated for one framework's modules (burn-store ``adapter.rs``).

The adapter decides from the TARGET module's structure, as burn's does from the container
type the module derive records: every tensor slot knows the type names of the modules it
sits in (``("Net", "Linear")`` for ``fc.weight``), and the adapter looks at the innermost one.

:class:`PyTorchToMinidlAdapter` (burn's ``PyTorchToBurnAdapter``):

- a ``Linear`` ``weight`` is transposed: PyTorch stores ``[out, in]`` and computes
  ``x @ W.T``; minidl (as burn) stores ``[in, out]`` and computes ``x @ W``;
- ``BatchNorm`` / ``LayerNorm`` / ``GroupNorm`` call their scale and shift ``gamma`` and
  ``beta``, PyTorch calls them ``weight`` and ``bias``: the slot ``norm.gamma`` is looked up
  as ``norm.weight`` when the file has no ``norm.gamma`` (burn's alternative parameter name);
- BatchNorm's ``running_mean`` / ``running_var`` have the same names on both sides, so they
  map as they are; PyTorch's ``num_batches_tracked`` counter has no minidl twin and is ignored.

:class:`MinidlToPyTorchAdapter` is the way back (burn's ``BurnToPyTorchAdapter``), used to
write a file PyTorch's ``load_state_dict`` accepts.

:class:`FloatCastAdapter` casts every float tensor to one dtype (burn's ``FloatCastAdapter``),
and ``a.chain(b)`` runs ``a`` then ``b`` (burn's ``ModuleAdapter::chain`` / ``ChainAdapter``):
``PyTorchToMinidlAdapter().chain(FloatCastAdapter("float32"))`` imports a half-precision
checkpoint into a float32 module.
"""

from __future__ import annotations

import dataclasses

import numpy as np

LINEAR = "Linear"
NORMS = ("BatchNorm", "LayerNorm", "GroupNorm")
_TO_TORCH = {"gamma": "weight", "beta": "bias"}


@dataclasses.dataclass(frozen=True)
class TensorSlot:
    """One tensor of a module as a store sees it, found WITHOUT initializing anything
    (burn's ``TensorSnapshot`` of the target: path, container stack, lazy shape, dtype).

    ``shape`` comes from ``Param.lazy_shape()`` — for a lazy ``LinearLayout.Col`` weight that
    is ``[d_output, d_input]``, for a materialized one ``[d_input, d_output]`` (the nn-modules chapter's
    pitfall). ``kind`` is ``"param"`` or ``"running"`` (a ``RunningState``).
    """

    path: str
    containers: tuple[str, ...]
    shape: tuple[int, ...]
    dtype: str
    kind: str = "param"

    @property
    def name(self) -> str:
        """The last path segment (``weight`` of ``fc.weight``)."""
        return self.path.rsplit(".", 1)[-1]

    @property
    def module_type(self) -> str | None:
        """The type name of the module holding the tensor (``Linear``), if known."""
        return self.containers[-1] if self.containers else None


class ModuleAdapter:
    """Translates between a file's tensors and a module's slots (burn's ``ModuleAdapter``).
    The base class is the identity (burn's ``IdentityAdapter``)."""

    name = "identity"

    def alternative_name(self, param_name: str, module_type: str | None) -> str | None:
        """Another name to look the slot up under when the file lacks its own name."""
        return None

    def adapt(self, array: np.ndarray, slot: TensorSlot) -> np.ndarray:
        """The file's array turned into what the slot stores (loading)."""
        return array

    def export(self, array: np.ndarray, slot: TensorSlot) -> tuple[str, np.ndarray]:
        """The file's name and array for a slot's value (saving)."""
        return slot.path, array

    def ignores(self, key: str) -> bool:
        """Whether a file tensor has no place in a module and is dropped without complaint."""
        return False

    def chain(self, next_adapter: ModuleAdapter) -> ChainAdapter:
        """``self`` first, then ``next_adapter`` (burn's ``ModuleAdapter::chain``)."""
        return ChainAdapter(self, next_adapter)

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"


IdentityAdapter = ModuleAdapter


class ChainAdapter(ModuleAdapter):
    """Two adapters in sequence (burn's ``ChainAdapter``): ``adapt`` is
    ``second.adapt(first.adapt(array))``; an alternative name is asked of ``first``, then of
    ``second`` (with ``first``'s answer if it gave one); a key is ignored if either ignores it."""

    def __init__(self, first: ModuleAdapter, second: ModuleAdapter):
        self.first, self.second = first, second
        self.name = f"{first.name}+{second.name}"

    def alternative_name(self, param_name: str, module_type: str | None) -> str | None:
        name = self.first.alternative_name(param_name, module_type)
        if name is None:
            return self.second.alternative_name(param_name, module_type)
        return self.second.alternative_name(name, module_type) or name

    def adapt(self, array: np.ndarray, slot: TensorSlot) -> np.ndarray:
        return self.second.adapt(self.first.adapt(array, slot), slot)

    def export(self, array: np.ndarray, slot: TensorSlot) -> tuple[str, np.ndarray]:
        path, array = self.first.export(array, slot)
        return self.second.export(array, dataclasses.replace(slot, path=path))

    def ignores(self, key: str) -> bool:
        return self.first.ignores(key) or self.second.ignores(key)

    def __repr__(self) -> str:
        return f"{self.first!r}.chain({self.second!r})"


class FloatCastAdapter(ModuleAdapter):
    """Casts every float tensor to ``target`` (burn's ``FloatCastAdapter::to``, burn-store
    ``src/adapter.rs``): target-driven, whatever module the tensor sits in; integer and
    bool tensors and tensors already in ``target`` pass through. Loading (``adapt``) and
    saving (``export``) cast alike, so the same adapter can write a float16 file."""

    name = "float-cast"

    def __init__(self, target: str = "float32"):
        dtype = np.dtype(target)
        if dtype.kind != "f":
            raise ValueError(f"FloatCastAdapter target must be a float dtype, got {target!r}")
        self.target = dtype

    def _cast(self, array: np.ndarray) -> np.ndarray:
        if array.dtype.kind != "f" or array.dtype == self.target:
            return array
        return array.astype(self.target)

    def adapt(self, array: np.ndarray, slot: TensorSlot) -> np.ndarray:
        return self._cast(array)

    def export(self, array: np.ndarray, slot: TensorSlot) -> tuple[str, np.ndarray]:
        return slot.path, self._cast(array)

    def __repr__(self) -> str:
        return f"FloatCastAdapter({self.target.name!r})"


def _transpose(array: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(array.T)


class PyTorchToMinidlAdapter(ModuleAdapter):
    """PyTorch ``state_dict`` → minidl module (burn's ``PyTorchToBurnAdapter``): see the
    module docstring."""

    name = "pytorch"

    def alternative_name(self, param_name: str, module_type: str | None) -> str | None:
        if module_type in NORMS:
            return _TO_TORCH.get(param_name)
        return None

    def adapt(self, array: np.ndarray, slot: TensorSlot) -> np.ndarray:
        if slot.module_type == LINEAR and slot.name == "weight" and array.ndim == 2:
            return _transpose(array)
        return array

    def ignores(self, key: str) -> bool:
        return key.rsplit(".", 1)[-1] == "num_batches_tracked"


class MinidlToPyTorchAdapter(ModuleAdapter):
    """minidl module → PyTorch names and layouts (burn's ``BurnToPyTorchAdapter``): Linear
    weights transposed back to ``[out, in]``, norm ``gamma``/``beta`` named ``weight``/``bias``."""

    name = "to-pytorch"

    def export(self, array: np.ndarray, slot: TensorSlot) -> tuple[str, np.ndarray]:
        if slot.module_type == LINEAR and slot.name == "weight" and array.ndim == 2:
            return slot.path, _transpose(array)
        if slot.module_type in NORMS and slot.name in _TO_TORCH:
            head, _, _ = slot.path.rpartition(".")
            torch_name = _TO_TORCH[slot.name]
            return (f"{head}.{torch_name}" if head else torch_name), array
        return slot.path, array

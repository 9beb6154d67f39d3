"""``ModuleStore``: what every store does when it loads tensors into a module (burn-store
``traits.rs``: ``ModuleStore`` / ``ModuleSnapshot::load_from``).

A store knows how to READ a file into ``{name: np.ndarray}`` (its subclass's job) and then
always does the same thing with the module:

1. names: the regex key remapping, then optional contiguous renumbering of list indices
   (burn's order: ``pytorch/store.rs`` remaps, then maps indices contiguous);
2. :func:`~minidl.store.applier.plan_apply`: slots of the target (lazy shapes, no init),
   lookup with the adapter's alternative names, adapter transform, shape and dtype checks;
3. :meth:`ApplyResult.check`: refuse (``ApplyFailed``, the module untouched) or
4. build the NEW module with the checked arrays.

burn's stores mutate the module in place (``&mut M``) and return the ``ApplyResult``; minidl's
modules are values, so :meth:`ModuleStore.apply_to` returns ``(new_module, result)`` and
:meth:`ModuleStore.load_into` just the new module. Builder methods return a NEW store.
"""

from __future__ import annotations

import copy
from typing import Any

import numpy as np

from minidl.module import Module
from minidl.store.adapter import ModuleAdapter
from minidl.store.applier import ApplyResult, plan_apply
from minidl.store.errors import StoreError
from minidl.store.keyremap import KeyRemapper, map_indices_contiguous
from minidl.store.module_bridge import apply_arrays, collect_slots


class ModuleStore:
    """Base of :class:`SafetensorsStore` and :class:`PytorchStore` (see the module docstring)."""

    def __init__(self, source: str, adapter: ModuleAdapter | None = None):
        self.source = source
        self.from_adapter: ModuleAdapter = adapter or ModuleAdapter()
        self.remapper = KeyRemapper()
        self.validate_tensors = True
        self.partial = False
        self.contiguous_indices = False
        self._cache: dict[str, np.ndarray] | None = None
        self.last_result: ApplyResult | None = None

    # ----- reading (subclasses) -----------------------------------------------------------
    def _read(self) -> dict[str, np.ndarray]:
        raise NotImplementedError

    # ----- builders (each returns a new store) ---------------------------------------------
    def _with(self, **changes: Any) -> ModuleStore:
        new = copy.copy(self)
        for name, value in changes.items():
            setattr(new, name, value)
        new._cache = None
        new.last_result = None
        return new

    def with_key_remapping(self, pattern: str, replacement: str) -> ModuleStore:
        """Rename file tensors by regex before matching (``re.sub``; ``$1`` works too)."""
        return self._with(remapper=self.remapper.add_pattern(pattern, replacement))

    def remap(self, remapper: KeyRemapper) -> ModuleStore:
        """Use ``remapper`` instead of the rules added so far."""
        return self._with(remapper=remapper)

    def validate(self, validate: bool) -> ModuleStore:
        """Whether shape/dtype mismatches fail the load (default ``True``). With ``False``
        they are skipped: the module keeps its own values there (burn's ``validate``)."""
        return self._with(validate_tensors=bool(validate))

    def allow_partial(self, allow: bool) -> ModuleStore:
        """Whether missing slots and unexpected file tensors are tolerated (default ``False``)."""
        return self._with(partial=bool(allow))

    def map_indices_contiguous(self, enable: bool) -> ModuleStore:
        """Renumber list indices of file names to 0, 1, 2, ... (PyTorch ``Sequential``
        counts its parameter-less layers too)."""
        return self._with(contiguous_indices=bool(enable))

    def with_from_adapter(self, adapter: ModuleAdapter) -> ModuleStore:
        """The adapter used when loading (burn's ``with_from_adapter``)."""
        return self._with(from_adapter=adapter)

    # ----- what the file holds ------------------------------------------------------------
    def tensors(self) -> dict[str, np.ndarray]:
        """The file's tensors by (renumbered, remapped) name; read once per store."""
        if self._cache is None:
            raw = self._read()
            names = {k: k for k in raw}
            if not self.remapper.is_empty():
                names = self.remapper.remap(names)
            if self.contiguous_indices:  # after remapping, as burn's PytorchStore does
                renumbered = map_indices_contiguous(names)
                names = {new: names[old] for new, old in renumbered.items()}
            self._cache = {new: raw[old] for new, old in names.items()}
        return self._cache

    def keys(self) -> list[str]:
        """The names of the file's tensors, sorted."""
        return sorted(self.tensors())

    def get(self, name: str) -> np.ndarray | None:
        """One tensor of the file by name (burn's ``get_snapshot``), or ``None``."""
        return self.tensors().get(name)

    # ----- loading ------------------------------------------------------------------------
    def plan(self, module: Module) -> ApplyResult:
        """What loading into ``module`` would do; nothing is changed or raised."""
        return plan_apply(collect_slots(module), self.tensors(), self.from_adapter)

    def apply_to(self, module: Module) -> tuple[Module, ApplyResult]:
        """``(new_module, result)``; raises ``ApplyFailed`` (``module`` untouched) when the
        file does not fit (see :meth:`ApplyResult.check`)."""
        result = self.plan(module)
        self.last_result = result
        result.check(validate=self.validate_tensors, allow_partial=self.partial, source=self.source)
        return apply_arrays(module, result.values), result

    def load_into(self, module: Module) -> Module:
        """The new module holding the file's tensors (see :meth:`apply_to`)."""
        return self.apply_to(module)[0]

    def collect_from(self, module: Module) -> Any:
        """Save ``module`` into this store (not every store can)."""
        raise StoreError(f"{type(self).__name__} cannot save modules")

    def __repr__(self) -> str:
        return (f"{type(self).__name__}({self.source!r}, adapter={self.from_adapter!r}, "
                f"remapper={self.remapper!r}, validate={self.validate_tensors}, "
                f"allow_partial={self.partial})")

"""Matching a file's tensors to a module's slots, checking everything first (burn-store ``applier.rs``).

:func:`plan_apply` is burn's ``Applier`` without the mutation: it walks the TARGET's slots
(path, owning module types, lazy shape, dtype), finds each one's tensor in the file (under
its own name, else under the adapter's alternative name), lets the adapter transform it, and
checks shape and dtype. It changes nothing; it returns an :class:`ApplyResult` saying what
would be applied, what is missing, what is unused and what is wrong. The store then decides
(:meth:`ApplyResult.check`) whether to build the new module or raise — so a failed load
leaves the module exactly as it was.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence

import numpy as np

from minidl.store.adapter import ModuleAdapter, TensorSlot
from minidl.store.errors import ApplyError, DTypeMismatch, LoadError, ShapeMismatch, StoreError

_LIST_LIMIT = 20


@dataclasses.dataclass
class ApplyResult:
    """What applying a file to a module does (burn's ``ApplyResult``).

    ``values`` holds the adapted arrays by slot path (ready for the module); ``applied`` the
    paths that will be loaded; ``missing`` slots the file lacks; ``unused`` file tensors no
    slot takes; ``ignored`` file tensors the adapter drops on purpose; ``errors`` the
    mismatches (:class:`ShapeMismatch`, :class:`DTypeMismatch`, :class:`LoadError`).
    """

    values: dict[str, np.ndarray] = dataclasses.field(default_factory=dict)
    applied: list[str] = dataclasses.field(default_factory=list)
    missing: list[str] = dataclasses.field(default_factory=list)
    unused: list[str] = dataclasses.field(default_factory=list)
    ignored: list[str] = dataclasses.field(default_factory=list)
    errors: list[ApplyError] = dataclasses.field(default_factory=list)

    def is_success(self) -> bool:
        """Whether nothing is wrong, missing or unused."""
        return not (self.errors or self.missing or self.unused)

    def check(self, *, validate: bool = True, allow_partial: bool = False, source: str = "file") -> None:
        """Raise :class:`ApplyFailed` if this result must not be applied.

        ``validate`` (burn's default ``true``): any shape/dtype/load error fails the load; with
        ``validate=False`` those tensors are skipped and the module keeps its own values.
        ``allow_partial=False`` (the default): missing slots AND unused file tensors fail the
        load. burn only reports unused tensors; minidl refuses them unless partial loading is
        allowed, because an unexpected key is usually a naming mistake.
        """
        failing_errors = self.errors if validate else []
        failing_missing = self.missing if not allow_partial else []
        failing_unused = self.unused if not allow_partial else []
        if failing_errors or failing_missing or failing_unused:
            raise ApplyFailed(self, self.report(failing_errors, failing_missing, failing_unused, source))

    def report(self, errors: Sequence[ApplyError] | None = None, missing: Sequence[str] | None = None,
               unused: Sequence[str] | None = None, source: str = "file") -> str:
        """The multi-line message: every error, then missing and unexpected keys listed."""
        errors = self.errors if errors is None else errors
        missing = self.missing if missing is None else missing
        unused = self.unused if unused is None else unused
        lines = [f"Loading {source} into the module failed; the module was not changed."]
        lines += [f"  {err}" for err in errors]
        if missing:
            lines.append(f"  Missing keys (in the module, not in the file): {_names(missing)}")
        if unused:
            lines.append(f"  Unexpected keys (in the file, not in the module): {_names(unused)}")
        return "\n".join(lines)

    def summary(self) -> str:
        """A boxed summary, the way burn's ``ApplyResult`` prints itself."""
        lines = ["┌─ Tensor Loading Summary", "│",
                 f"│ ✓ Matched and checked:    {len(self.applied)} tensors",
                 f"│ ✗ Missing in the file:    {len(self.missing)} tensors",
                 f"│ ? Unused from the file:   {len(self.unused)} tensors",
                 f"│ - Ignored by the adapter: {len(self.ignored)} tensors",
                 f"│ ! Errors:                 {len(self.errors)}"]
        for title, items in (("Missing", self.missing), ("Unused", self.unused),
                             ("Errors", [str(e) for e in self.errors])):
            if items:
                lines += ["│", f"├─ {title}"] + [f"│    • {item}" for item in items[:_LIST_LIMIT]]
                if len(items) > _LIST_LIMIT:
                    lines.append(f"│    ... and {len(items) - _LIST_LIMIT} more")
        lines.append("└─")
        return "\n".join(lines)

    __str__ = summary

    def __repr__(self) -> str:
        return (f"ApplyResult(applied={len(self.applied)}, missing={self.missing}, "
                f"unused={self.unused}, ignored={self.ignored}, errors={[str(e) for e in self.errors]})")


class ApplyFailed(StoreError):
    """Loading was refused; ``.result`` is the :class:`ApplyResult` that says why."""

    def __init__(self, result: ApplyResult, message: str):
        super().__init__(message)
        self.result = result


def _names(names: Sequence[str]) -> str:
    shown = ", ".join(f"'{n}'" for n in names[:_LIST_LIMIT])
    more = len(names) - _LIST_LIMIT
    return shown + (f" ... and {more} more" if more > 0 else "")


def _dtype_name(array: np.ndarray) -> str:
    return np.dtype(array.dtype).name


def plan_apply(slots: Sequence[TensorSlot], source: Mapping[str, np.ndarray],
               adapter: ModuleAdapter | None = None) -> ApplyResult:
    """Match ``source`` (file tensors by name) to ``slots`` and check them; change nothing."""
    adapter = adapter or ModuleAdapter()
    result = ApplyResult()
    consumed: set[str] = set()
    for slot in slots:
        key = slot.path
        if key not in source:
            alt = adapter.alternative_name(slot.name, slot.module_type)
            if alt is not None:
                head, _, _ = slot.path.rpartition(".")
                alt_key = f"{head}.{alt}" if head else alt
                key = alt_key if alt_key in source else key
        if key not in source:
            result.missing.append(slot.path)
            continue
        consumed.add(key)
        raw = source[key]
        if not isinstance(raw, np.ndarray):
            result.errors.append(LoadError(slot.path, f"expected an array, found {type(raw).__name__}"))
            continue
        try:
            array = adapter.adapt(raw, slot)
        except Exception as err:  # an adapter bug must not half-apply a file
            result.errors.append(LoadError(slot.path, f"adapter {adapter.name!r} failed: {err}"))
            continue
        if tuple(array.shape) != tuple(slot.shape):
            result.errors.append(ShapeMismatch(slot.path, tuple(slot.shape), tuple(array.shape)))
            continue
        if _dtype_name(array) != slot.dtype:
            result.errors.append(DTypeMismatch(slot.path, slot.dtype, _dtype_name(array)))
            continue
        result.values[slot.path] = array
        result.applied.append(slot.path)
    for key in sorted(source):
        if key in consumed:
            continue
        (result.ignored if adapter.ignores(key) else result.unused).append(key)
    return result

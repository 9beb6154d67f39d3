"""Renaming the tensors of a file before they meet the module (burn-store ``keyremapper.rs``).

:class:`KeyRemapper` applies regex rules in order, each to the result of the previous one
(burn's ``add_pattern(from, to)``). Replacements take Python's ``\\1`` / ``\\g<name>`` and also
burn's (Rust regex) ``$1`` / ``${name}``, so a rule copied from burn's docs works unchanged.

:func:`map_indices_contiguous` renumbers list indices so they have no gaps: PyTorch's
``nn.Sequential(Linear, ReLU, Linear)`` names its weights ``0.weight`` and ``2.weight``
(the ReLU is index 1 but has no tensors); a container that lists only layers with
parameters wants ``0`` and ``1``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from minidl.store.errors import StoreError

_RUST_GROUP = re.compile(r"\$(\d+|\{\w+\})")


def _python_replacement(replacement: str) -> str:
    def convert(match: re.Match) -> str:
        name = match.group(1).strip("{}")
        return f"\\g<{name}>"

    return _RUST_GROUP.sub(convert, replacement)


class KeyRemapper:
    """Ordered regex renaming rules for tensor names (burn's ``KeyRemapper``). Immutable:
    :meth:`add_pattern` returns a new remapper."""

    def __init__(self, patterns: Iterable[tuple[re.Pattern, str]] = ()):
        self.patterns: tuple[tuple[re.Pattern, str], ...] = tuple(patterns)

    def add_pattern(self, pattern: str, replacement: str) -> KeyRemapper:
        """A remapper with one more rule: ``re.sub(pattern, replacement, name)``."""
        try:
            compiled = re.compile(pattern)
        except re.error as err:
            raise StoreError(f"invalid key remapping pattern {pattern!r}: {err}") from None
        return KeyRemapper((*self.patterns, (compiled, _python_replacement(replacement))))

    def is_empty(self) -> bool:
        """Whether there are no rules."""
        return not self.patterns

    def remap_key(self, key: str) -> str:
        """``key`` after every rule."""
        for pattern, replacement in self.patterns:
            key = pattern.sub(replacement, key)
        return key

    def remap(self, keys: Iterable[str]) -> dict[str, str]:
        """``{new_name: original_name}`` for ``keys``; two names renamed to one is an error."""
        out: dict[str, str] = {}
        for key in keys:
            new = self.remap_key(key)
            if new in out:
                raise StoreError(
                    f"key remapping sends both '{out[new]}' and '{key}' to '{new}'"
                )
            out[new] = key
        return out

    def __repr__(self) -> str:
        rules = ", ".join(f"{p.pattern!r} -> {r!r}" for p, r in self.patterns)
        return f"KeyRemapper([{rules}])"


def map_indices_contiguous(keys: Iterable[str]) -> dict[str, str]:
    """``{new_name: original_name}`` with each list's numeric indices renumbered 0, 1, 2, ...
    in their order (burn-store's ``map_indices_contiguous``). Indices are grouped by the
    ORIGINAL prefix before them, so nested lists renumber independently."""
    keys = list(keys)
    seen: dict[str, set[int]] = {}
    for key in keys:
        parts = key.split(".")
        for i, part in enumerate(parts):
            if part.isdigit():
                seen.setdefault(".".join(parts[:i]), set()).add(int(part))
    renumber = {prefix: {old: new for new, old in enumerate(sorted(idx))} for prefix, idx in seen.items()}
    out: dict[str, str] = {}
    for key in keys:
        parts = key.split(".")
        new_parts = [
            str(renumber[".".join(parts[:i])][int(p)]) if p.isdigit() else p
            for i, p in enumerate(parts)
        ]
        out[".".join(new_parts)] = key
    return out

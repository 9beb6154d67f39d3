"""``with_fields``: a copy of a module with some fields replaced (the modules chapter's map).

burn's ``#[derive(Module)]`` writes a map as ``Self { field: map(self.field), ... }``: a new
struct, field by field. Python has no such literal for an object of any class, and a build
checker refuses ``setattr`` with a computed name in the reader's code (it guards the
checker), so the map build-it gets this one helper: a shallow copy of ``module`` (same class,
constants and all) with ``fields`` set on the copy; ``module`` itself is left as it was.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

__all__ = ["with_fields"]


def with_fields(module: Any, fields: Mapping[str, Any]) -> Any:
    """A new object of ``module``'s class with its fields, ``fields`` replacing some."""
    new = copy.copy(module)
    for name, value in fields.items():
        setattr(new, name, value)
    return new

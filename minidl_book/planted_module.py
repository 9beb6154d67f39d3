"""A module that exists for one check: importing it runs its code, which leaves a mark.

The safe-unpickler build-it (:mod:`minidl_book.build_unpickler`) plants it to catch a
``find_class`` that looks a name up before refusing it: pickle's own lookup imports the
module the file names, and importing runs that module's code. (burn-store's
``pytorch/pickle_reader.rs`` imports nothing: it matches the two strings of each
``GLOBAL`` against the names it knows.) The module's file sits in a folder put on
``sys.path`` only inside ``with PlantedModule() as planted:``; the module is dropped from
``sys.modules`` on the way out, and ``planted.imported`` says whether its code ran.
"""

from __future__ import annotations

import importlib
import sys
import tempfile
import uuid
from pathlib import Path

__trace_hide__ = True

__all__ = ["PlantedModule"]

#: the module's code: one assignment, so that running it is all a run can observe
_SOURCE = "ran = True\nopened = open  # io.open\n"


class PlantedModule:
    """A module with a fresh name (``name``) whose ``opened`` is ``io.open``, the chapter's
    payload call; ``imported`` after the ``with`` block: whether its code ran."""

    def __init__(self) -> None:
        self.name = f"planted_{uuid.uuid4().hex[:12]}"
        self.imported = False
        self._folder: tempfile.TemporaryDirectory | None = None

    def __enter__(self) -> PlantedModule:
        self._folder = tempfile.TemporaryDirectory()
        folder = Path(self._folder.name)
        (folder / f"{self.name}.py").write_text(_SOURCE, encoding="utf-8")
        sys.path.insert(0, str(folder))
        importlib.invalidate_caches()
        return self

    def __exit__(self, *exc: object) -> None:
        assert self._folder is not None
        module = sys.modules.pop(self.name, None)
        self.imported = getattr(module, "ran", False) is True
        sys.path.remove(self._folder.name)
        self._folder.cleanup()

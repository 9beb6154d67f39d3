"""In ``make lab``'s kernels: the values chapters ``glue``, for the prose that shows them.

On the site, myst-nb replaces ``{glue:text}`name:.4f``` in the prose with the value a cell
glued while the book was built. JupyterLab knows no glue; jupyterlab-myst evaluates inline
``{eval}`expr``` roles in the kernel instead. ``lab_contents`` turns each glue role into an
``{eval}`` of :func:`show` when a chapter is opened (and back when it is saved), and the
Lab's kernel imports this module first (``exec_lines`` in ``lab_kernels/``), which makes
``myst_nb.glue`` also remember every value it glues. So after *Run All* the prose shows the
values the cells just measured; before, it says which cell has not run yet.
"""

from __future__ import annotations

from typing import Any

import myst_nb

_glued: dict[str, Any] = {}
_glue = myst_nb.glue


def glue(name: str, variable: Any, display: bool = True) -> None:
    """``myst_nb.glue`` that also keeps ``variable`` for :func:`show`."""
    _glued[name] = variable
    return _glue(name, variable, display)


myst_nb.glue = glue


class _Text:
    """Shown as its text (no quotes, unlike a ``str`` result of ``{eval}``)."""

    def __init__(self, text: str) -> None:
        self.text = text

    def __repr__(self) -> str:
        return self.text


def show(name: str, fmt: str = "", kind: str = "text") -> Any:
    """The glued value ``name``: formatted text for ``{glue:text}``, the object for ``md``."""
    if name not in _glued:
        return _Text(f"[{name}: run the cells above]")
    value = _glued[name]
    if kind in ("md", "block"):  # a Markdown object: shown as Markdown
        return value
    return _Text(format(value, fmt) if fmt else str(value))

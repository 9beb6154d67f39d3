"""Shared by the book tests: where the project is and which chapters _toc.yml lists."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parent.parent
CELL_TIMEOUT = 600  # seconds per cell, as `execute.timeout` in _config.yml

_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")


def strip_ansi(text: str) -> str:
    """Text without terminal colour codes (tracebacks from a kernel carry them)."""
    return _ANSI.sub("", text)


def _files(entries: list[dict[str, Any]] | None) -> list[str]:
    out: list[str] = []
    for entry in entries or []:
        if "file" in entry:
            out.append(entry["file"])
        for key in ("chapters", "sections", "parts"):
            out += _files(entry.get(key))
    return out


def toc_docnames(root: Path = ROOT) -> list[str]:
    """Every ``file`` in ``_toc.yml`` (root first), as written there (no suffix)."""
    toc = yaml.safe_load((root / "_toc.yml").read_text(encoding="utf-8"))
    names = [toc["root"], *_files(toc.get("chapters")), *_files(toc.get("parts"))]
    names += _files(toc.get("sections"))
    return [
        str(Path(n).with_suffix("")) if Path(n).suffix in (".md", ".ipynb") else n for n in names
    ]


def chapter_path(docname: str, root: Path = ROOT) -> Path:
    """The source file of a docname (``chapters/intro`` -> ``chapters/intro.md``)."""
    for suffix in (".md", ".ipynb"):
        path = root / f"{docname}{suffix}"
        if path.is_file():
            return path
    raise FileNotFoundError(f"_toc.yml lists {docname!r} but neither .md nor .ipynb exists")

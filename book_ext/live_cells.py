"""What Live code needs to know about a chapter's cells, read from the chapter's source.

* **A stable id per code cell**, so that a reader's edit saved in the browser finds its cell
  again after the book is rebuilt: ``"<section>/<k>"``, the slug of the heading the cell sits
  under and its place among that section's code cells. Rewriting a cell's text keeps its id
  (the browser then sees that the built source changed, by its ``hash``, and marks the saved
  edit); adding or removing cells moves the ids of that section only.
* **Which exercises a cell checks**: the ``{exercise}`` directives (labels and titles) of the
  chapter, each paired with the code cell that checks it, the first cell after it whose
  source calls ``.check(`` (a cell with k calls checks the last k exercises still waiting,
  in order). An exercise that no cell checks is listed, with no cell.
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path
from typing import Any

HEADING = re.compile(r"^#{1,6}\s+(.+?)\s*#*\s*$", re.M)
EXERCISE = re.compile(r"^(`{3,}|:{3,})\{exercise(?:-start)?\}[ \t]*(.*)$")
OPTION = re.compile(r"^:([\w-]+):\s*(.*)$")
CHECK_CALL = re.compile(r"\.check\(")


def slug(text: str) -> str:
    """A heading's text as a lowercase, dash-separated id (markup and punctuation dropped)."""
    text = re.sub(r"[`*_{}\[\]()]", "", text).lower()
    return re.sub(r"[^0-9a-z]+", "-", text).strip("-") or "section"


def headings(markdown: str) -> list[str]:
    """The headings of a markdown cell, outside fenced blocks (a ``# comment`` in code is none)."""
    found, fence = [], ""
    for line in markdown.splitlines():
        stripped = line.strip()
        if fence:  # inside: only a bare run of the same mark, at least as long, closes it
            if stripped and set(stripped) == {fence[0]} and len(stripped) >= len(fence):
                fence = ""
            continue
        opening = re.match(r"^(`{3,}|~{3,}|:{3,})", stripped)
        if opening:
            fence = opening.group(1)
        elif h := HEADING.match(line):
            found.append(h.group(1))
    return found


def source_hash(source: str) -> str:
    """A short digest of a cell's built source (the browser compares it with a saved edit's)."""
    return hashlib.sha256(source.encode("utf-8")).hexdigest()[:16]


def exercises_in(markdown: str) -> list[dict[str, str]]:
    """The ``{exercise}`` directives of one markdown cell: label and title, in order."""
    found = []
    lines = markdown.splitlines()
    for i, line in enumerate(lines):
        m = EXERCISE.match(line.strip())
        if not m:
            continue
        label = ""
        for opt in lines[i + 1 :]:
            o = OPTION.match(opt.strip())
            if not o:
                break
            if o.group(1) == "label":
                label = o.group(2).strip()
        if label:
            found.append({"label": label, "title": m.group(2).strip() or label})
    return found


def read_cells(path: Path) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The code cells of a MyST/ipynb notebook (source, tags, id, hash, exercises checked) and
    its exercises (label, title, id of the checking cell or ``None``); empty if no notebook."""
    if path.suffix not in {".md", ".ipynb"}:
        return [], []
    import jupytext

    text = path.read_text(encoding="utf-8")
    if path.suffix == ".md" and "jupytext:" not in text.split("\n---", 1)[0]:
        return [], []
    nb = jupytext.reads(text, fmt=path.suffix[1:] if path.suffix == ".ipynb" else "md:myst")
    section, count, seen = "top", 0, {}
    cells: list[dict[str, Any]] = []
    exercises: list[dict[str, Any]] = []
    waiting: list[dict[str, Any]] = []
    for c in nb.cells:
        if c.cell_type == "markdown":
            for title in headings(c.source):
                base = slug(title)
                seen[base] = seen.get(base, 0) + 1
                section = base if seen[base] == 1 else f"{base}-{seen[base]}"
                count = 0
            for ex in exercises_in(c.source):
                ex["cell"] = None
                exercises.append(ex)
                waiting.append(ex)
            continue
        if c.cell_type != "code":
            continue
        cell = {
            "source": c.source,
            "tags": list(c.metadata.get("tags", [])),
            "id": f"{section}/{count}",
            "hash": source_hash(c.source),
            "answers": [],
        }
        count += 1
        calls = len(CHECK_CALL.findall(c.source))
        if calls and waiting:
            checked = waiting[-calls:]
            for ex in checked:
                ex["cell"] = cell["id"]
            cell["answers"] = [ex["label"] for ex in checked]
            waiting = []
        cells.append(cell)
    return cells, exercises

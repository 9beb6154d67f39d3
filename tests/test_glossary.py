"""The glossary keeps the contract its preface states (fast: nothing is executed).

- Its entries run A to Z, across its letter sections, so a reader finds a word by scanning.
- Every entry says what burn has: an item with its file (``burn-x/src/....rs:line``), or that
  burn has none; and it ends with a link to the chapter (or section) that teaches the word.
- Every ``{term}`` link in the book, its text normalised (a role may wrap across lines),
  names an entry.
- Where burn's source is on this machine, every ``crate/src/file.rs:line`` an entry cites
  exists at the tag the preface names, and the item written just before the citation is
  within a few lines of it (so a moved or misnamed item fails here, not in a reader's hands).
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest
from booktools import ROOT, chapter_path, toc_docnames

GLOSSARY = ROOT / "chapters" / "glossary.md"
BURN = Path("/work/.mirror/tracel-ai+burn/repo")
TAG = "v0.22.0-pre.2"

_TERM = re.compile(r"\{term\}`([^`]+)`")
_CITE = re.compile(r"`((?:burn-[\w-]+/src/[\w/.-]+\.rs)?):(\d+)`")
_ITEM = re.compile(r"`([^`]+)`")


def entries() -> list[tuple[str, str]]:
    """(term, body) of every entry, in source order, across the page's glossary blocks."""
    out: list[tuple[str, str]] = []
    inside = False
    for line in GLOSSARY.read_text(encoding="utf-8").splitlines():
        if line.startswith("```{glossary}"):
            inside = True
        elif inside and line.startswith("```"):
            inside = False
        elif inside and line.strip() and not line.startswith(":"):
            if line.startswith((" ", "\t")):
                term, body = out[-1]
                out[-1] = (term, f"{body} {line.strip()}")
            else:
                out.append((line.strip(), ""))
    return out


def test_entries_run_a_to_z():
    terms = [t for t, _ in entries()]
    assert len(terms) >= 40, terms
    assert terms == sorted(terms, key=str.casefold), "glossary entries out of A-Z order"


@pytest.mark.parametrize("term,body", entries(), ids=[t for t, _ in entries()])
def test_entry_names_burns_item_and_links_its_chapter(term, body):
    assert re.search(r"burn (?:has no|has none)|\bburn\b(?::|'s)? .*`[^`]+`", body), (
        f"{term}: names no burn item and does not say burn has none")
    assert re.search(r"\(\{(?:doc|ref)\}`[^`]+`\)$", body), f"{term}: ends with no chapter link"


def test_every_term_link_in_the_book_names_an_entry():
    terms = {t.casefold() for t, _ in entries()}
    missing = []
    for doc in toc_docnames():
        text = chapter_path(doc).read_text(encoding="utf-8")
        for m in _TERM.finditer(text):
            target = re.search(r"<([^>]+)>\s*$", m.group(1))
            name = " ".join((target.group(1) if target else m.group(1)).split()).casefold()
            if name not in terms:
                missing.append(f"{doc}: {m.group(0)!r}")
    assert missing == [], missing


def _burn_lines(path: str) -> list[str] | None:
    out = subprocess.run(["git", "-C", str(BURN), "show", f"{TAG}:crates/{path}"],
                         capture_output=True, text=True)
    return out.stdout.splitlines() if out.returncode == 0 else None


@pytest.mark.skipif(not BURN.exists(), reason="burn's source is not on this machine")
@pytest.mark.parametrize("term,body", entries(), ids=[t for t, _ in entries()])
def test_cited_burn_lines_hold_the_item(term, body):
    path = None
    for m in _CITE.finditer(body):
        path = m.group(1) or path
        assert path, f"{term}: {m.group(0)} with no file before it"
        lines = _burn_lines(path)
        assert lines is not None, f"{term}: crates/{path} is not in burn at {TAG}"
        line = int(m.group(2))
        items = [i for i in _ITEM.findall(body[: m.start()]) if not _CITE.fullmatch(f"`{i}`")]
        name = re.split(r"[<(!]", items[-1])[0].split("::")[-1].strip()
        window = "\n".join(lines[max(0, line - 9): line + 8])
        assert name and name in window, (
            f"{term}: `{name}` is not within 8 lines of crates/{path}:{line} at {TAG}")

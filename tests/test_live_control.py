"""The Live code control is added only to pages with a cell or exercise a reader can use
(fast: no build, no browser)."""

from __future__ import annotations

import sys
from pathlib import Path
from types import SimpleNamespace

from booktools import ROOT

sys.path.insert(0, str(ROOT / "book_ext"))
import live  # noqa: E402

HEADER = "---\njupytext:\n  text_representation:\n    extension: .md\n---\n\n"


def _context(tmp_path: Path, body: str) -> str:
    src = tmp_path / "page.md"
    src.write_text(HEADER + body, encoding="utf-8")
    app = SimpleNamespace(srcdir=str(tmp_path),
                          env=SimpleNamespace(doc2path=lambda doc: str(src)))
    context = {"body": "<p>page</p>"}
    live._page_context(app, "chapters/page", "page.html", context, doctree=object())
    return context["body"]


def test_a_page_whose_cells_are_all_hidden_gets_no_control(tmp_path):
    body = "# G\n\n```{code-cell} ipython3\n:tags: [remove-input]\n\nprint(1)\n```\n"
    assert live.CONFIG_ID not in _context(tmp_path, body)


def test_a_page_with_a_shown_cell_gets_the_control(tmp_path):
    body = "# G\n\n```{code-cell} ipython3\nprint(1)\n```\n"
    assert live.CONFIG_ID in _context(tmp_path, body)

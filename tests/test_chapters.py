"""The chapters' kernel and table of contents: _toc.yml lists files that exist, and the
kernel a chapter runs in is the project's Python, in the chapter's folder.

That every chapter runs top to bottom is checked on the book's own build
(``test_chapter_executes`` in tests/test_site.py), which executes each chapter once.
"""

from __future__ import annotations

import sys
from pathlib import Path

import nbformat
from booktools import CELL_TIMEOUT, ROOT, chapter_path, toc_docnames
from nbclient import NotebookClient

DOCNAMES = toc_docnames()


def run(nb: nbformat.NotebookNode, cwd: Path) -> nbformat.NotebookNode:
    client = NotebookClient(
        nb,
        timeout=CELL_TIMEOUT,
        kernel_name="python3",
        resources={"metadata": {"path": str(cwd)}},
    )
    client.execute()
    return nb


def test_toc_lists_existing_chapters():
    assert DOCNAMES and DOCNAMES[0] == "chapters/intro"
    for name in DOCNAMES:
        chapter_path(name)  # raises when a listed chapter has no file


def test_kernel_is_the_projects_python():
    nb = nbformat.v4.new_notebook()
    code = "import sys, os, minidl\nprint(sys.prefix)\nprint(minidl.__file__)\nprint(os.getcwd())"
    nb.cells.append(nbformat.v4.new_code_cell(code))
    run(nb, ROOT / "chapters")
    prefix, minidl_file, cwd = nb.cells[0].outputs[0]["text"].splitlines()
    assert Path(prefix).resolve() == Path(sys.prefix).resolve()
    assert Path(minidl_file).resolve().is_relative_to(ROOT)  # the editable install
    assert Path(cwd).resolve() == (ROOT / "chapters").resolve()

"""Every chapter listed in _toc.yml runs top to bottom as a notebook.

Each chapter (a jupytext MyST Markdown file) is read with jupytext and executed with
nbclient in the project's kernel, with the chapter's folder as working directory and the
same per-cell timeout as the book build. A failing cell fails the test with the cell's
source and the error; cells tagged ``raises-exception`` may raise.
"""

from __future__ import annotations

import sys
from pathlib import Path

import jupytext
import nbformat
import pytest
from booktools import CELL_TIMEOUT, ROOT, chapter_path, strip_ansi, toc_docnames
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError

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


@pytest.mark.timeout(3600)
@pytest.mark.parametrize("docname", DOCNAMES)
def test_chapter_executes(docname: str):
    path = chapter_path(docname)
    nb = jupytext.read(path)
    try:
        run(nb, path.parent)
    except CellExecutionError as err:
        pytest.fail(f"{path.relative_to(ROOT)}: a cell failed\n{strip_ansi(str(err))}", False)
    errors = [
        out
        for cell in nb.cells
        if cell.cell_type == "code" and "raises-exception" not in cell.metadata.get("tags", [])
        for out in cell.get("outputs", [])
        if out.get("output_type") == "error"
    ]
    assert not errors

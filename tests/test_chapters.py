"""Every chapter listed in _toc.yml runs top to bottom as a notebook.

The chapters are executed once, by the session's book build (``book_build`` in
tests/conftest.py: myst-nb runs each chapter in the project's kernel, in the chapter's
folder, with the per-cell timeout of _config.yml). Each chapter's test reads what that run
left: a chapter whose cell failed fails with the traceback myst-nb saved; otherwise every
code cell of the chapter must have run, and none but those tagged ``raises-exception``
may show an error. The project's kernel itself is checked with nbclient.
"""

from __future__ import annotations

import sys
from pathlib import Path

import jupytext
import nbformat
import pytest
from booktools import CELL_TIMEOUT, ROOT, chapter_path, strip_ansi, toc_docnames
from conftest import BOOK_GROUP
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


@BOOK_GROUP
@pytest.mark.timeout(3600)
@pytest.mark.parametrize("docname", DOCNAMES)
def test_chapter_executes(docname: str, book_build):
    report = book_build.error_report(docname)
    if report.is_file():
        tail = "\n".join(report.read_text(encoding="utf-8").splitlines()[-60:])
        pytest.fail(f"{docname}: a cell failed when the book was built\n{strip_ansi(tail)}", False)
    executed = book_build.executed(docname)
    assert executed.is_file(), f"{docname}: the build wrote no executed notebook"
    nb = nbformat.read(executed, as_version=4)
    code = [cell for cell in nb.cells if cell.cell_type == "code"]
    source = [cell for cell in jupytext.read(chapter_path(docname)).cells if cell.cell_type == "code"]
    assert len(code) == len(source), f"{docname}: the executed notebook has other code cells"
    skipped = [i for i, cell in enumerate(code) if cell.get("execution_count") is None]
    assert not skipped, f"{docname}: code cells never executed (by index): {skipped}"
    errors = [
        out
        for cell in code
        if "raises-exception" not in cell.metadata.get("tags", [])
        for out in cell.get("outputs", [])
        if out.get("output_type") == "error"
    ]
    assert not errors, f"{docname}: error outputs: {[e.get('ename') for e in errors]}"

"""JupyterLab's view of the chapters (``make lab``): what the site shows, and reading is free.

A contents manager on top of jupytext's (which opens the MyST ``.md`` chapters as
notebooks):

* **Reading does not write.** JupyterLab saves a notebook it has only opened and run
  (autosave), and jupytext would rewrite the file: a ``jupytext_version`` line, the Lab's
  kernelspec, a blank line dropped. A save whose cells (type, source, tags and other book
  metadata; never outputs) equal the file on disk writes nothing. A real edit is saved, and
  the file keeps its own front matter (header) as it was.
* **Folded as on the site.** Cells tagged ``hide-input`` open with their source collapsed,
  ``hide-output`` with their outputs collapsed, ``hide-cell`` both (JupyterLab's
  ``jupyter.source_hidden`` / ``outputs_hidden``; ``remove-*`` tags collapse the same way), and a ``{solution}`` with ``:class: dropdown`` opens as a folded
  dropdown in jupyterlab-myst. Glue roles in the prose become ``{eval}`` roles that show the
  values the kernel glued (book_ext/lab_glue.py). None of this reaches the file: it is
  taken out again on save.
"""

from __future__ import annotations

import copy
import re
from pathlib import Path
from typing import Any

import jupytext
import nbformat
from jupyter_client.kernelspec import KernelSpecManager
from jupyter_core.paths import jupyter_path
from jupytext.async_contentsmanager import AsyncTextFileContentsManager

# cell metadata the Lab writes that the book does not own
LAB_KEYS = {"jupyter", "collapsed", "scrolled", "execution", "trusted", "user_expressions"}
FOLD = {  # myst-nb tag -> what JupyterLab collapses
    "hide-input": ["source_hidden"],
    "hide-output": ["outputs_hidden"],
    "hide-cell": ["source_hidden", "outputs_hidden"],
    "remove-input": ["source_hidden"],
    "remove-output": ["outputs_hidden"],
    "remove-cell": ["source_hidden", "outputs_hidden"],
}
HEADER = re.compile(r"\A---\n.*?\n---\n", re.S)
GLUE = re.compile(r"\{glue:(text|md)\}`([^`:]+)(?::([^`]*))?`")
GLUE_BLOCK = re.compile(r"^```\{glue:md\} (\S+)\n:format: (\w+)\n```$", re.M)
EVAL = re.compile(
    r'\{eval\}`__import__\("book_ext\.lab_glue"\)\.lab_glue\.show\("([^"]*)", "([^"]*)", "(text|md|block)"\)`'
)


def glue_to_eval(source: str) -> str:
    """``{glue:text}`name:fmt``` -> an ``{eval}`` of ``lab_glue.show`` (jupyterlab-myst runs it)."""
    source = GLUE_BLOCK.sub(
        lambda m: (
            f'{{eval}}`__import__("book_ext.lab_glue").lab_glue.show("{m[1]}", "{m[2]}", "block")`'
        ),
        source,
    )
    return GLUE.sub(
        lambda m: (
            '{eval}`__import__("book_ext.lab_glue").lab_glue.show('
            f'"{m[2]}", "{m[3] or ""}", "{m[1]}")`'
        ),
        source,
    )


def eval_to_glue(source: str) -> str:
    """The inverse of :func:`glue_to_eval`."""

    def back(m: re.Match) -> str:
        if m[3] == "block":  # the ```{glue:md} name / :format: f``` directive
            return f"```{{glue:md}} {m[1]}\n:format: {m[2]}\n```"
        return f"{{glue:{m[3]}}}`{m[1]}{':' + m[2] if m[2] else ''}`"

    return EVAL.sub(back, source)


def fold(nb: dict[str, Any]) -> None:
    """Collapse what the site folds (in place): hide-input sources, hide-output outputs;
    glue roles in the prose become ``{eval}`` roles."""
    for cell in nb.get("cells", []):
        if cell.get("cell_type") == "markdown" and "{glue:" in cell.get("source", ""):
            cell["source"] = glue_to_eval(cell["source"])
        tags = set(cell.get("metadata", {}).get("tags", []))
        for tag, keys in FOLD.items():
            if tag in tags:
                for key in keys:
                    cell["metadata"].setdefault("jupyter", {})[key] = True


def book_cells(nb: dict[str, Any]) -> list[tuple[str, str, dict[str, Any]]]:
    """What the file holds of each cell: type, source, metadata without the Lab's keys."""
    out = []
    for cell in nb.get("cells", []):
        source = cell.get("source", "")
        if isinstance(source, list):
            source = "".join(source)
        meta = {k: v for k, v in cell.get("metadata", {}).items() if k not in LAB_KEYS}
        out.append((cell.get("cell_type", ""), source.strip("\n"), meta))
    return out


def unfold(nb: dict[str, Any]) -> dict[str, Any]:
    """A copy of ``nb`` as the file holds it: no Lab-only metadata, glue roles back."""
    nb = copy.deepcopy(nb)
    for cell in nb.get("cells", []):
        source = cell.get("source", "")
        if isinstance(source, list):
            source = cell["source"] = "".join(source)
        if cell.get("cell_type") == "markdown" and "{eval}" in source:
            cell["source"] = eval_to_glue(source)
        meta = cell.get("metadata", {})
        for key in LAB_KEYS & set(meta):
            del meta[key]
    return nb


class BookContentsManager(AsyncTextFileContentsManager):
    """jupytext's contents manager, plus: reading never writes, and the site's folds."""

    def _chapter(self, path: str) -> Path | None:
        os_path = Path(self._get_os_path(path.strip("/")))
        return os_path if os_path.suffix == ".md" and os_path.is_file() else None

    async def get(self, path: str, content: bool = True, type: str | None = None, **kw: Any):
        model = await super().get(path, content=content, type=type, **kw)
        if content and model.get("type") == "notebook" and self._chapter(path):
            fold(model["content"])
        return model

    async def save(self, model: dict[str, Any], path: str = "") -> dict[str, Any]:
        os_path = self._chapter(path)
        if os_path is None or model.get("type") != "notebook" or model.get("content") is None:
            return await super().save(model, path)
        on_disk_text = os_path.read_text(encoding="utf-8")
        on_disk = jupytext.reads(on_disk_text, fmt="md:myst")
        if book_cells(unfold(model["content"])) == book_cells(on_disk):
            self.log.info("minidl book: %s unchanged, not rewritten", path)
            return await super().get(path, content=False)
        model = dict(model)
        model["content"] = nbformat.from_dict(unfold(model["content"]))
        saved = await super().save(model, path)
        header = HEADER.match(on_disk_text)
        text = os_path.read_text(encoding="utf-8")
        if header and HEADER.match(text):  # keep the chapter's own front matter
            os_path.write_text(HEADER.sub(lambda _: header.group(0), text, count=1), "utf-8")
            saved = await super().get(path, content=False)
        return saved


class BookKernelSpecManager(KernelSpecManager):
    """Kernel specs from ``book_ext/lab_kernels/`` first: ``python3`` there is the project's
    python that imports :mod:`lab_glue` before the chapter runs."""

    def _kernel_dirs_default(self) -> list[str]:
        return [str(Path(__file__).resolve().parent / "lab_kernels"), *jupyter_path("kernels")]

"""Sphinx extension: a "Live code" control on every chapter page, served from the site itself.

Pressed on a page that ``make serve`` serves, the control asks the site for the address and
token of the Jupyter server that ``make serve`` started beside it (``_live/server.json``,
see ``book_ext/serve.py``), loads thebe from the site, connects the page's code cells to a
kernel, makes them editable and runnable, and lets their outputs replace the build-time
ones. Opened from ``file://`` (or any server without a kernel), the control says to run
``make serve`` instead of failing silently.

Offline: thebe comes from the npm registry (``npm pack thebe@VERSION``, checked against the
pinned sha512) once, into ``.live_vendor/`` of the project, and is copied into the built
site under ``_live/thebe/``. It is deliberately *not* under ``_static/``: jupyter-book 1.x
adds every ``.js`` file found there to every page. thebe's MathJax 2 (from a CDN) is turned
off in ``minidl-live.js``; nothing it loads leaves the site.

So that a live session runs the same program as the build, each page carries the sources
of all its code cells, including those tagged ``remove-cell``/``remove-input`` that the
page does not show; the page script runs them too, hidden, in notebook order. Each cell
also carries a stable id and a digest of its source, and the labels of the exercises it
checks (``book_ext/live_cells.py``): the page script saves the reader's edits and the
exercises' verdicts in the browser under them.

A page with a ``<div class="minidl-progress"></div>`` block (the intro's "Your progress")
also gets the list of the book's exercises, chapter by chapter; the page script fills in the
reader's verdicts from the browser's storage.
"""

from __future__ import annotations

import base64
import hashlib
import json
import shutil
import subprocess
import tarfile
import tempfile
from pathlib import Path
from typing import Any

from live_cells import read_cells
from sphinx.application import Sphinx
from sphinx.util import logging

logger = logging.getLogger(__name__)

THEBE_VERSION = "0.9.3"
# `npm view thebe@0.9.3 dist.integrity`: the tarball must match before anything is copied.
THEBE_INTEGRITY = "sha512-Rb/7kVhtlffXra3kIe7OuIGE7awsm2/fGWxw21DiNfnWLnUQiDl9AWqYdshPwZPG/5DzLpsJRPix2xtCPtJmQQ=="
HERE = Path(__file__).resolve().parent
VENDOR = HERE.parent / ".live_vendor" / f"thebe-{THEBE_VERSION}"
TARGET = Path("_live") / "thebe"  # below the HTML output
CONFIG_ID = "minidl-live-config"
PROGRESS_ID = "minidl-progress-config"
PROGRESS_PLACEHOLDER = '<div class="minidl-progress"></div>'  # a raw HTML block in a chapter


def _integrity(data: bytes) -> str:
    return "sha512-" + base64.b64encode(hashlib.sha512(data).digest()).decode()


def vendor_thebe(dest: Path = VENDOR) -> Path:
    """Fetch thebe's prebuilt bundle from the npm registry into ``dest`` (once); return it.

    Only ``lib/*.js``, ``lib/thebe.css`` and the licence files are kept (no source maps).
    Raises ``RuntimeError`` when npm is missing or the tarball does not match the pin.
    """
    if (dest / "index.js").is_file():
        return dest
    npm = shutil.which("npm")
    if npm is None:
        raise RuntimeError("npm is missing (apt-get install npm): it fetches thebe for Live code")
    with tempfile.TemporaryDirectory() as tmp:
        proc = subprocess.run(
            [npm, "pack", f"thebe@{THEBE_VERSION}", "--silent", "--pack-destination", tmp],
            capture_output=True,
            text=True,
            timeout=300,
        )
        tgz = Path(tmp) / f"thebe-{THEBE_VERSION}.tgz"
        if proc.returncode != 0 or not tgz.is_file():
            raise RuntimeError(f"npm pack thebe@{THEBE_VERSION} failed:\n{proc.stderr[-2000:]}")
        found = _integrity(tgz.read_bytes())
        if found != THEBE_INTEGRITY:
            raise RuntimeError(
                f"thebe-{THEBE_VERSION}.tgz: expected integrity {THEBE_INTEGRITY}, found {found}"
            )
        partial = dest.with_name(dest.name + ".partial")
        shutil.rmtree(partial, ignore_errors=True)
        partial.mkdir(parents=True)
        with tarfile.open(tgz) as tar:
            for member in tar.getmembers():
                name = member.name.removeprefix("package/")
                keep = name.startswith("lib/") and "/" not in name[4:]
                keep = keep and (name.endswith((".js", ".css", ".txt")))
                if (keep and member.isfile()) or name == "LICENSE":
                    data = tar.extractfile(member)
                    assert data is not None
                    (partial / Path(name).name).write_bytes(data.read())
        shutil.rmtree(dest, ignore_errors=True)
        partial.rename(dest)
    return dest


def _builder_inited(app: Sphinx) -> None:
    app.config.html_static_path.append(str(HERE / "static"))
    for part in ("store", "math", "work"):  # helpers first: deferred scripts run in order
        app.add_js_file(f"minidl-live-{part}.js", defer="defer")
    app.add_js_file("minidl-live.js", defer="defer")
    app.add_css_file("minidl-live.css")
    if app.builder.format == "html":
        try:
            vendor_thebe()
        except RuntimeError as err:  # the site still reads; the control will say why
            logger.info(f"Live code: thebe not vendored ({err})")


def _source(app: Sphinx, docname: str) -> Path | None:
    try:
        return Path(app.env.doc2path(docname))
    except Exception:  # a page with no source document (genindex, search)
        return None


def _book_order(app: Sphinx) -> list[str]:
    """Every page reachable from the root's toctree, in reading order."""
    order: list[str] = []

    def walk(doc: str) -> None:
        if doc in order:
            return
        order.append(doc)
        for child in app.env.toctree_includes.get(doc, []):
            walk(child)

    walk(app.config.root_doc)
    return order


def _book_exercises(app: Sphinx, pagename: str) -> list[dict[str, Any]]:
    """Per chapter with exercises: its storage key, title, address from ``pagename``, exercises."""
    chapters = []
    for doc in _book_order(app):
        source = _source(app, doc)
        if source is None or not source.is_file():
            continue
        _, exercises = read_cells(source)
        if not exercises:
            continue
        title = app.env.titles.get(doc)
        chapters.append(
            {
                "path": source.relative_to(Path(app.srcdir)).as_posix(),
                "title": title.astext() if title is not None else doc,
                "url": app.builder.get_relative_uri(pagename, doc),
                "exercises": exercises,
            }
        )
    return chapters


def _script(element_id: str, data: Any) -> str:
    payload = json.dumps(data).replace("<", "\\u003c")  # no "</script>" inside the JSON
    return f'\n<script type="application/json" id="{element_id}">{payload}</script>\n'


#: tags of a cell whose source the page does not show
HIDDEN = {"remove-cell", "remove-input"}


def _page_context(
    app: Sphinx, pagename: str, templatename: str, context: dict[str, Any], doctree: Any
) -> None:
    if doctree is None or "body" not in context:
        return
    if PROGRESS_PLACEHOLDER in context["body"]:
        context["body"] += _script(PROGRESS_ID, {"chapters": _book_exercises(app, pagename)})
    source = _source(app, pagename)
    if source is None:
        return
    cells, exercises = read_cells(source)
    if not exercises and all(HIDDEN & set(c["tags"]) for c in cells):
        return  # nothing for a reader to run or edit (a glossary): no Live code control
    config = {
        "root": "../" * pagename.count("/"),
        "path": source.relative_to(Path(app.srcdir)).as_posix(),
        "kernel": "python3",
        "cells": cells,
        "exercises": exercises,
        "thebe": THEBE_VERSION,
        "vendored": (VENDOR / "index.js").is_file(),
    }
    context["body"] += _script(CONFIG_ID, config)


def _copy(app: Sphinx, exception: Exception | None) -> None:
    if exception is not None or app.builder.format != "html" or not (VENDOR / "index.js").is_file():
        return
    dst = Path(app.outdir) / TARGET
    dst.mkdir(parents=True, exist_ok=True)
    for f in VENDOR.iterdir():
        shutil.copy2(f, dst / f.name)


def setup(app: Sphinx) -> dict[str, Any]:
    app.connect("builder-inited", _builder_inited)
    app.connect("html-page-context", _page_context)
    app.connect("build-finished", _copy)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}

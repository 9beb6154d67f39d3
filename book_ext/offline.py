"""Sphinx extension: keep the built site offline (no CDN at build or view time).

1. MathJax 3 from a local copy, never from a CDN.

Sphinx's default ``mathjax_path`` points at jsdelivr, so maths would not render offline.
This extension copies the parts of MathJax that ``tex-chtml.js`` loads (the TeX input and
its on-demand extensions, the CHTML output and its woff fonts, the menu and accessibility
components) from the ``mathjax`` package that the ``django-static-mathjax`` dependency
installs, into ``_static/mathjax/`` of the HTML output, and points ``mathjax_path`` at that
copy. Script and font URLs are relative, so the site works from ``file://`` as well as over
http.

2. No thebe. jupyter-book always loads ``sphinx_thebe``, which puts a loader script and the
unpkg.com address of thebe into every page (used only by a launch button this book does
not have). They are dropped from each page's scripts.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

from sphinx.application import Sphinx
from sphinx.config import Config

ENTRY = "tex-chtml.js"
PARTS = ("output/chtml", "input/tex", "ui", "a11y", "sre", "adaptors")
TARGET = "mathjax"  # below the output's _static/


def mathjax_source() -> Path:
    """The ``es5`` folder of the installed MathJax 3 (raises if it is missing)."""
    import mathjax  # from django-static-mathjax

    for base in [Path(p) for p in mathjax.__path__]:
        es5 = base / "static" / "mathjax" / "es5"
        if (es5 / ENTRY).is_file():
            return es5
    raise FileNotFoundError(
        "MathJax 3 not found in the 'mathjax' package (pip install django-static-mathjax)"
    )


def _config_inited(app: Sphinx, config: Config) -> None:
    mathjax_source()  # fail early, with the message above
    config.mathjax_path = f"{TARGET}/{ENTRY}"  # relative: resolved against _static/


def _copy(app: Sphinx, exception: Exception | None) -> None:
    if exception is not None or app.builder.format != "html":
        return
    src = mathjax_source()
    dst = Path(app.outdir) / "_static" / TARGET
    dst.mkdir(parents=True, exist_ok=True)
    shutil.copy2(src / ENTRY, dst / ENTRY)
    for part in PARTS:
        if (src / part).is_dir():
            shutil.copytree(src / part, dst / part, dirs_exist_ok=True)


def _drop_thebe(
    app: Sphinx, pagename: str, templatename: str, context: dict[str, Any], doctree: Any
) -> None:
    scripts = context.get("script_files")
    if not scripts:
        return

    def is_thebe(js: Any) -> bool:
        body = str(getattr(js, "attributes", {}).get("body", ""))
        return "sphinx-thebe" in str(getattr(js, "filename", js)) or "THEBE_JS_URL" in body

    scripts[:] = [js for js in scripts if not is_thebe(js)]


def setup(app: Sphinx) -> dict[str, Any]:
    app.connect("config-inited", _config_inited, priority=900)
    app.connect("build-finished", _copy)
    app.connect("html-page-context", _drop_thebe, priority=900)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}

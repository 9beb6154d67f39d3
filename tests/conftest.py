"""Fixtures shared across test files: the book, built once per test session.

Building the book executes every chapter; the chapter tests read the executed notebooks it
writes and the site tests open its pages, so the chapters run once per ``make test``, not
once per test file that needs them. Every test that reads this build lives in
tests/test_site.py; under ``make test`` (pytest-xdist, two workers, ``--dist loadfile``: a
file's tests stay on one worker) that file is collected first, so one worker builds the
book and runs the site's tests while the other runs the library's.
"""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
from booktools import ROOT

BUILD_TIMEOUT = 3600

#: The file whose tests read the book build: scheduled first (see the module docstring).
BOOK_TESTS = "test_site.py"


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The book's tests first (a stable sort: every other test keeps its order)."""
    items.sort(key=lambda item: item.path.name != BOOK_TESTS)


@pytest.fixture(autouse=True)
def _fusion_records_every_op(request: pytest.FixtureRequest):
    """The fusion device runs a small op whose inputs exist eagerly on its inner backend
    (``Stream.eager_below``): the tests' tensors are small, and they test the lazy machinery
    (recording, search, fusers, kernels, capture of launches), so every fusion op is recorded
    here unless a test is marked ``fusion_eager_policy`` (the policy's own tests and the real
    training steps, which run the device as a user gets it)."""
    if request.node.get_closest_marker("fusion_eager_policy"):
        yield
        return
    from minidl.fusion.stream import Stream

    default, Stream.eager_below = Stream.eager_below, 0
    try:
        yield
    finally:
        Stream.eager_below = default


@dataclass(frozen=True)
class BookBuild:
    """One ``jupyter-book build -W -n --keep-going`` of the project into ``out``."""

    out: Path
    returncode: int
    log: str

    @property
    def html(self) -> Path:
        return self.out / "_build" / "html"

    def executed(self, docname: str) -> Path:
        """The chapter as the build executed it (myst-nb writes it with its outputs)."""
        return self.out / "_build" / "jupyter_execute" / f"{docname}.ipynb"

    def error_report(self, docname: str) -> Path:
        """Where myst-nb saves the traceback of a chapter whose execution failed."""
        return self.html / "reports" / f"{docname}.err.log"


@pytest.fixture(scope="session")
def book_build(tmp_path_factory: pytest.TempPathFactory) -> BookBuild:
    """Build the book once for the session (every chapter executed), pass or fail."""
    out = tmp_path_factory.mktemp("book")
    jb = Path(sys.executable).with_name("jupyter-book")
    env = dict(os.environ)
    env.setdefault("NUMBA_CACHE_DIR", str(ROOT / ".numba_cache"))
    env["PATH"] = f"{jb.parent}{os.pathsep}{env.get('PATH', '')}"
    cmd = [str(jb), "build", str(ROOT), "-W", "-n", "--keep-going", "--path-output", str(out)]
    proc = subprocess.run(
        cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=BUILD_TIMEOUT
    )
    return BookBuild(out, proc.returncode, proc.stdout + proc.stderr)

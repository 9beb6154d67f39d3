"""A broken backend is a failing run: a Flex whose import raises (a numba typing error, an
``AttributeError`` at import) must turn the tests that use it red, never into xfails or skips.

A pytest run in a child process gets an import hook that makes ``import minidl.backends.flex``
raise, then runs the Flex cases of test files that reach Flex through each of the suite's
device helpers.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

#: One file per way the suite reaches Flex (nn/module/backend/debug/autodiff/optim/store/tensor helpers).
FILES = [
    "tests/nn/test_dropout.py",
    "tests/module/test_initializer.py",
    "tests/backend/test_float_data.py",
    "tests/debug/test_diagram.py",
    "tests/autodiff/test_graph_facts.py",
    "tests/optim/test_optimizers.py",
    "tests/store/test_safetensors_roundtrip.py",
    "tests/tensor/test_creation.py",
]

PLANTED = "module 'numba' has no attribute 'planted_typing_error'"

RUN = textwrap.dedent(f"""
    import importlib.abc, importlib.machinery, sys
    import pytest

    class BrokenFlex(importlib.abc.MetaPathFinder, importlib.abc.Loader):
        def find_spec(self, name, path=None, target=None):
            if name == "minidl.backends.flex":
                return importlib.machinery.ModuleSpec(name, self, is_package=True)
            return None

        def create_module(self, spec):
            return None

        def exec_module(self, module):
            raise AttributeError({PLANTED!r})

    sys.meta_path.insert(0, BrokenFlex())
    sys.exit(pytest.main(sys.argv[1:]))
""")


def test_a_flex_that_fails_to_import_fails_the_run():
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    # a module that imports Flex at collection fails there; the others must still run and fail
    args = ["-q", "-p", "no:cacheprovider", "-rfE", "-o", "addopts=", "--continue-on-collection-errors",
            "-k", "flex", *FILES]
    run = subprocess.run([sys.executable, "-c", RUN, *args], cwd=ROOT, env=env,
                         capture_output=True, text=True, timeout=900)
    out = run.stdout + run.stderr
    tail = "\n".join(out.splitlines()[-40:])
    assert run.returncode in (1, 2), f"the run with a broken Flex did not fail (rc {run.returncode}):\n{tail}"
    assert PLANTED in out, f"the failures are not the planted import error:\n{tail}"
    summary = out.strip().splitlines()[-1]
    assert not re.search(r"\b(xfailed|skipped|xpassed)\b", summary), f"a broken Flex was excused: {summary}"
    # "FAILED path::test - message" or, for a module that fails at collection, "ERROR path - message"
    red = {line.split()[1].split("::")[0] for line in out.splitlines() if line.startswith(("FAILED ", "ERROR "))}
    assert red == set(FILES), f"files whose Flex cases did not fail: {sorted(set(FILES) - red)}\n{tail}"

"""The seam of issue 41: the generic fusion package (IR, stream, search, fusers' rules, plans,
the decorator) imports no backend; each backend supplies its code generator
(registered beside it: ``register_runtime``), as burn-fusion leaves kernels to burn-cubecl-fusion."""

from __future__ import annotations

import ast
import pkgutil
import subprocess
import sys
from pathlib import Path

import minidl.backends.fusion as generic

BACKENDS = ("minidl.backends.flex", "minidl.backends.ndarray", "minidl.backends.wgpu")
PACKAGE = Path(generic.__file__).parent


def test_no_module_of_the_generic_package_has_an_import_statement_of_a_backend():
    found = []
    for path in sorted(PACKAGE.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            names = (
                [a.name for a in node.names]
                if isinstance(node, ast.Import)
                else [node.module or ""]
                if isinstance(node, ast.ImportFrom)
                else []
            )
            found += [f"{path.name}: {n}" for n in names if n.startswith(BACKENDS)]
    assert not found, found


def test_importing_every_module_of_the_generic_package_loads_no_backend():
    modules = [f"minidl.backends.fusion.{m.name}" for m in pkgutil.iter_modules([str(PACKAGE)])]
    code = (
        "import importlib, sys\n"
        f"for m in {modules!r}: importlib.import_module(m)\n"
        f"print([m for m in sys.modules if m.startswith({BACKENDS!r})])"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]", out.stdout


def test_each_backend_supplies_its_generator():
    from minidl.backends.flex.fusion import FLEX_FUSION, NumbaGenerator
    from minidl.backends.fusion import FusionFlex

    assert FusionFlex.stream.runtime is FLEX_FUSION and isinstance(
        FLEX_FUSION.generator, NumbaGenerator
    )
    assert FusionFlex.stream.processor.explorer.generator is FLEX_FUSION.generator
    assert not FLEX_FUSION.records_every_op  # the CPU runs small ops at once


def test_the_old_import_paths_still_work():
    from minidl.backends.fusion.codegen import PARALLEL_FROM
    from minidl.backends.fusion.codegen_matmul import matmul_kernel
    from minidl.backends.fusion.source import kernel_dir

    assert (
        PARALLEL_FROM == 1 << 16
        and callable(matmul_kernel)
        and kernel_dir().name == "fusion_kernels"
    )

"""The seam of issue 41: the generic fusion package (IR, stream, search, fusers' rules, plans,
the decorator) imports no backend; each backend supplies its code generator
(registered beside it: ``register_runtime``), as burn-fusion leaves kernels to burn-cubecl-fusion."""

from __future__ import annotations

import ast
import pkgutil
import subprocess
import sys
from pathlib import Path

import minidl.fusion as generic

BACKENDS = ("minidl.backends",)
PACKAGE = Path(generic.__file__).parent


def _strings_naming_a_backend(tree: ast.AST) -> list[str]:
    """Every import statement's module and every string literal (a module name handed to
    ``importlib``) that names a backend module; docstrings are prose and are skipped."""
    docstrings = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
        and node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
    }
    names = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names += [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            names.append(node.module or "")
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings:
            names.append(node.value)
    return [n for n in names if n.startswith(BACKENDS)]


def test_the_generic_package_sits_beside_autodiff_not_among_the_backends():
    assert PACKAGE.parent.name == "minidl" and (PACKAGE.parent / "autodiff").is_dir()


def test_no_module_of_the_generic_package_names_a_backend_module():
    found = []
    for path in sorted(PACKAGE.glob("*.py")):
        found += [f"{path.name}: {n}" for n in _strings_naming_a_backend(ast.parse(path.read_text()))]
    assert not found, found


def test_importing_every_module_of_the_generic_package_loads_no_backend():
    modules = [f"minidl.fusion.{m.name}" for m in pkgutil.iter_modules([str(PACKAGE)])]
    code = (
        "import importlib, sys\n"
        f"for m in {modules!r}: importlib.import_module(m)\n"
        f"print([m for m in sys.modules if m.startswith({BACKENDS!r})])"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]", out.stdout


def test_each_backend_supplies_its_generator():
    from minidl.backends.flex.fusion import FLEX_FUSION, FusionFlex, NumbaGenerator
    from minidl.backends.wgpu.fusion import WGPU_FUSION, FusionWgpu, WgslGenerator

    assert FusionFlex.stream.runtime is FLEX_FUSION and isinstance(
        FLEX_FUSION.generator, NumbaGenerator
    )
    assert FusionFlex.stream.processor.explorer.generator is FLEX_FUSION.generator
    assert not FLEX_FUSION.records_every_op  # the CPU runs small ops eagerly
    assert FusionWgpu.stream.runtime is WGPU_FUSION and isinstance(
        WGPU_FUSION.generator, WgslGenerator
    )
    assert WGPU_FUSION.records_every_op  # on the GPU every op is recorded

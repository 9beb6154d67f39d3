"""The house rules of the Flex kernels (ARCHITECTURE.md, "Conventions"), checked on the code itself."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import minidl.backends.flex.kernels as kernels

KERNEL_DIR = Path(kernels.__file__).parent
MODULES = kernels._MODULES

_PROBE = r"""
import importlib, json
from numba.core.registry import CPUDispatcher
out = {}
for name in %r:
    mod = importlib.import_module("minidl.backends.flex.kernels." + name)
    for attr, obj in vars(mod).items():
        if isinstance(obj, CPUDispatcher) and obj.__module__ == mod.__name__:
            out[name + "." + attr] = {
                "compiled": len(obj.signatures),
                "cached": type(obj._cache).__name__ != "NullCache",
            }
print(json.dumps(out))
"""


def test_importing_the_kernels_compiles_nothing_and_every_kernel_is_cached():
    probe = _PROBE % (list(MODULES),)
    proc = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    info = json.loads(proc.stdout.strip().splitlines()[-1])
    assert len(info) > 50
    compiled = [k for k, v in info.items() if v["compiled"]]
    assert not compiled, f"compiled at import: {compiled}"
    uncached = [k for k, v in info.items() if not v["cached"]]
    assert not uncached, f"kernels without cache=True: {uncached}"


def _is_njit(fn: ast.FunctionDef) -> bool:
    for d in fn.decorator_list:
        target = d.func if isinstance(d, ast.Call) else d
        if isinstance(target, ast.Name) and target.id == "njit":
            return True
    return False


def test_no_blas_and_no_thread_count_queries_inside_the_kernels():
    # np.dot / matmul / @ would call OpenBLAS (its pool fights numba's), in a kernel or in a
    # wrapper; get_num_threads() inside an njit function silently disables caching (a
    # wrapper may ask it); nnan/ninf would break NaN semantics.
    blas = {"dot", "matmul", "einsum", "inner", "vdot", "tensordot"}
    for path in KERNEL_DIR.glob("*.py"):
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            where = f"{path.name}:{getattr(node, 'lineno', '?')}"
            assert not (isinstance(node, ast.BinOp) and isinstance(node.op, ast.MatMult)), where
            if isinstance(node, ast.Attribute):
                assert node.attr not in blas, where
            if isinstance(node, ast.Constant):
                assert node.value not in ("nnan", "ninf", "fast"), where
        for fn in ast.walk(tree):
            if isinstance(fn, ast.FunctionDef) and _is_njit(fn):
                for node in ast.walk(fn):
                    name = getattr(node, "attr", getattr(node, "id", None))
                    assert name != "get_num_threads", f"{path.name}:{fn.name}"


def test_every_njit_decorator_uses_the_shared_cached_options():
    for path in KERNEL_DIR.glob("*.py"):
        for line in path.read_text().splitlines():
            if line.startswith("@njit"):
                assert "**JIT" in line, f"{path.name}: {line}"

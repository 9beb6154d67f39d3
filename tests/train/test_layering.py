"""minidl.train and minidl.data sit at the top: nothing below them imports them."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "minidl"
# who may import each top package (besides itself): debug and book look at everything
ALLOWED = {"minidl.train": {"book", "debug"}, "minidl.data": {"train", "book", "debug"}}


def imported_modules(path: Path) -> set[str]:
    names = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
    return names


@pytest.mark.parametrize("target", sorted(ALLOWED))
def test_nothing_below_imports_the_top_packages(target):
    offenders = []
    for path in PACKAGE.rglob("*.py"):
        owner = path.relative_to(PACKAGE).parts[0].removesuffix(".py")
        if f"minidl.{owner}" == target or owner in ALLOWED[target]:
            continue
        if any(name == target or name.startswith(target + ".") for name in imported_modules(path)):
            offenders.append(str(path.relative_to(PACKAGE)))
    assert offenders == [], f"{target} is imported from below: {offenders}"


def test_the_top_packages_import_only_downward():
    for package in ("train", "data"):
        for path in (PACKAGE / package).rglob("*.py"):
            assert not any(name.startswith(("minidl_book", "minidl.debug")) for name in imported_modules(path)), path
    data_imports = set().union(*(imported_modules(p) for p in (PACKAGE / "data").rglob("*.py")))
    assert not any(name.startswith("minidl.train") for name in data_imports)

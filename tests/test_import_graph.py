"""minidl's import graph has no cycle: no module imports one that imports it back.

The graph is read from the source with ``ast`` (nothing is imported), over every module of
``minidl/``, and counts every import statement: module level, under ``if TYPE_CHECKING:``,
and inside functions. A function-local import is how a cycle usually hides (it runs later,
so Python does not fail), and a ``TYPE_CHECKING`` import is one a type checker follows, so
both count here.

An edge goes to the module that is named: ``from minidl.autodiff.ops import tensor`` points at
``minidl.autodiff.ops.tensor`` when that is a module, else at the package ``minidl.autodiff.ops``
(its ``__init__``). Parent packages that Python initializes on the way are not edges: that
``minidl.autodiff.ops.tensor`` lives inside ``minidl.autodiff`` is containment, not a use.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "minidl"


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def modules() -> dict[str, Path]:
    return {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def imported(name: str, path: Path, known: dict[str, Path]) -> set[str]:
    """The minidl modules that the source of ``name`` imports, wherever the statement is."""
    is_package = path.name == "__init__.py"
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                here = name.split(".") if is_package else name.split(".")[:-1]
                here = here[: len(here) - (node.level - 1)]
                base = ".".join([*here, base] if base else here)
            targets = []
            for alias in node.names:
                sub = f"{base}.{alias.name}"
                targets.append(sub if sub in known else base)
        else:
            continue
        for target in targets:
            # ``import a.b.c`` names a.b.c; keep the longest prefix that is a minidl module
            while target and target not in known:
                target = target.rpartition(".")[0]
            if target and target != name:
                found.add(target)
    return found


def import_graph() -> dict[str, set[str]]:
    known = modules()
    return {name: imported(name, path, known) for name, path in known.items()}


def find_cycle(graph: dict[str, set[str]], skip=lambda name: False) -> list[str] | None:
    """One cycle (``[a, b, ..., a]``) among the modules ``skip`` does not exclude, or ``None``."""
    WHITE, GREY, BLACK = 0, 1, 2
    colour = {name: WHITE for name in graph}
    stack: list[str] = []

    def visit(name: str) -> list[str] | None:
        colour[name] = GREY
        stack.append(name)
        for target in sorted(graph[name]):
            if skip(target):
                continue
            if colour[target] == GREY:
                return [*stack[stack.index(target):], target]
            if colour[target] == WHITE:
                cycle = visit(target)
                if cycle:
                    return cycle
        stack.pop()
        colour[name] = BLACK
        return None

    for name in sorted(graph):
        if colour[name] == WHITE and not skip(name):
            cycle = visit(name)
            if cycle:
                return cycle
    return None


def test_the_graph_sees_imports_everywhere():
    """The reader finds TYPE_CHECKING and function-local imports (else the test proves nothing)."""
    graph = import_graph()
    assert len(graph) > 100
    # minidl/__init__.py imports minidl.debug inside `if MINIDL_DEBUG` (a nested statement)
    assert "minidl.debug" in graph["minidl"]
    # a relative or absolute `from package import submodule` points at the submodule
    assert "minidl.tensor.functional" in graph["minidl.tensor"]


def test_find_cycle_reports_one():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert find_cycle(graph) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set()}) is None


def _backends(name: str) -> bool:
    return name.startswith("minidl.backends.")


def test_no_import_cycle_outside_the_backends():
    """Every module outside minidl/backends/ (the backends' own refactor is a separate job)."""
    cycle = find_cycle(import_graph(), skip=_backends)
    assert cycle is None, "import cycle: " + " -> ".join(cycle)


def test_no_import_cycle_anywhere():
    """The backends included: a cycle inside minidl/backends/ is a failure like any other."""
    cycle = find_cycle(import_graph())
    assert cycle is None, "import cycle: " + " -> ".join(cycle)


def reachable(graph: dict[str, set[str]], start: str) -> set[str]:
    """Every module ``start`` imports, directly or through others."""
    seen, todo = set(), [start]
    while todo:
        for target in graph[todo.pop()]:
            if target not in seen:
                seen.add(target)
                todo.append(target)
    return seen


def test_the_generic_fusion_package_reaches_no_backend():
    """``minidl/fusion/`` (burn-fusion) imports no backend, not even through another module:
    each backend supplies its code generator beside itself (``minidl/backends/*/fusion/``)."""
    graph = import_graph()
    generic = [name for name in graph if name == "minidl.fusion" or name.startswith("minidl.fusion.")]
    assert len(generic) > 10
    arrows = sorted(f"{name} -> {target}" for name in generic
                    for target in reachable(graph, name) if target.startswith("minidl.backends"))
    assert arrows == []
    # and the backends' generators do import it (the seam is used, not bypassed)
    assert "minidl.fusion" in graph["minidl.backends.flex.fusion"]
    assert "minidl.fusion" in graph["minidl.backends.wgpu.fusion"]


# ----- the library and the book's package --------------------------------------------------------
BOOK_PACKAGE = ROOT / "minidl_book"


def graph_with_the_book() -> dict[str, set[str]]:
    """The import graph over ``minidl/`` and ``minidl_book/`` together."""
    known = {module_name(p): p for p in sorted([*PACKAGE.rglob("*.py"), *BOOK_PACKAGE.rglob("*.py")])}
    return {name: imported(name, path, known) for name, path in known.items()}


def test_the_combined_graph_sees_the_books_imports_of_the_library():
    graph = graph_with_the_book()
    assert any(name.startswith("minidl_book") for name in graph)
    assert any(t.startswith("minidl.") for n, ts in graph.items() if n.startswith("minidl_book") for t in ts)


def test_no_minidl_module_imports_the_books_package():
    """Nothing in the library, ``minidl.debug`` included, points up at ``minidl_book``."""
    graph = graph_with_the_book()
    arrows = sorted(f"{name} -> {target}" for name, targets in graph.items()
                    if name == "minidl" or name.startswith("minidl.")
                    for target in targets if target.partition(".")[0] == "minidl_book")
    assert arrows == []


def test_no_import_cycle_across_the_library_and_the_book():
    cycle = find_cycle(graph_with_the_book(), skip=_backends)
    assert cycle is None, "import cycle: " + " -> ".join(cycle)

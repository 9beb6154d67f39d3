"""The repository stands alone: the library imports without the book's tools, declares exactly
the packages it imports, cites no file it does not hold, and ARCHITECTURE.md names real paths.
"""

from __future__ import annotations

import ast
import importlib.metadata
import json
import re
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "minidl"

#: What the book's machinery and the tests use and the library must never need.
BOOK_ONLY = ("torch", "hypothesis", "matplotlib", "IPython")

IMPORT_EVERY_MODULE = r"""
import importlib.abc, json, pkgutil, sys

BLOCKED = set(sys.argv[1].split(","))

class Unimportable(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.partition(".")[0] in BLOCKED:
            raise ImportError(f"{name} is made unimportable for this test")
        return None

sys.meta_path.insert(0, Unimportable())
blocked_works = []
for name in sorted(BLOCKED):
    try:
        __import__(name)
    except ImportError:
        blocked_works.append(name)

import minidl
failed = {}
names = []
def onerror(name):
    failed[name] = repr(sys.exc_info()[1])
for info in pkgutil.walk_packages(minidl.__path__, "minidl.", onerror=onerror):
    names.append(info.name)
    try:
        importlib.import_module(info.name)
    except Exception as error:
        failed[info.name] = repr(error)
loaded = sorted(n for n in sys.modules if n.partition(".")[0] in BLOCKED)
print(json.dumps({"blocked": blocked_works, "names": names, "failed": failed, "loaded": loaded}))
"""


def test_every_minidl_module_imports_with_the_book_tools_unimportable():
    env = {"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin",
           "NUMBA_CACHE_DIR": str(ROOT / ".numba_cache")}
    done = subprocess.run([sys.executable, "-c", IMPORT_EVERY_MODULE, ",".join(BOOK_ONLY)],
                          capture_output=True, text=True, cwd=ROOT, env=env, timeout=600)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report["blocked"] == sorted(BOOK_ONLY)  # the finder really blocks them
    expected = {module_name(p) for p in PACKAGE.rglob("*.py")} - {"minidl"}
    assert set(report["names"]) == expected
    assert report["failed"] == {}
    assert report["loaded"] == []


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


# ----- nothing cites a file the repository does not have ---------------------------------------
SKIP_DIRS = {".git", ".venv", "_build", ".numba_cache", "__pycache__", ".pytest_cache",
             ".ruff_cache", ".hypothesis", ".ipynb_checkpoints", "node_modules"}
#: Spelled in pieces so this file does not match itself.
FORBIDDEN = re.compile("DESIGN" + r"\.md|DESIGN" + r" §|seed" + r" 00\d", re.IGNORECASE)


def repository_files():
    stack = [ROOT]
    while stack:
        folder = stack.pop()
        for path in folder.iterdir():
            if path.is_dir():
                if path.name not in SKIP_DIRS:
                    stack.append(path)
            elif path.is_file():
                yield path


def test_no_file_cites_the_house_plan_or_the_source_chapters_by_number():
    found = []
    for path in repository_files():
        try:
            text = path.read_text(encoding="utf-8")
        except (UnicodeDecodeError, OSError):
            continue
        for number, line in enumerate(text.splitlines(), 1):
            if FORBIDDEN.search(line):
                found.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()}")
    assert found == []


def test_the_forbidden_pattern_matches_what_it_is_meant_to():
    assert FORBIDDEN.search("see " + "DESIGN" + ".md") and FORBIDDEN.search("Seed" + " 003's")
    assert not FORBIDDEN.search("the seeded stream") and not FORBIDDEN.search("ARCHITECTURE.md")


# ----- the declared dependencies are what minidl imports ---------------------------------------
def third_party_imports() -> set[str]:
    """Top-level names of every non-stdlib module minidl's source imports, anywhere in a file."""
    names: set[str] = set()
    for path in PACKAGE.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                names.update(alias.name.partition(".")[0] for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
                names.add(node.module.partition(".")[0])
    return {n for n in names if n not in sys.stdlib_module_names and n not in ("minidl", "__future__")}


def distribution_of(module: str) -> str:
    dists = importlib.metadata.packages_distributions().get(module)
    assert dists, f"{module} is imported by minidl but no installed distribution provides it"
    return dists[0].lower()


def test_pyproject_declares_exactly_what_minidl_imports():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    declared = {re.split(r"[<>=!~ \[]", d)[0].lower() for d in project["dependencies"]}
    optional = {re.split(r"[<>=!~ \[]", d)[0].lower()
                for extra in ("digits", "gpu") for d in project["optional-dependencies"][extra]}
    imported = {distribution_of(m) for m in third_party_imports()}
    # the optional extras are really used (by minidl.data.digits, by minidl.backends.wgpu)
    assert optional <= imported
    assert declared == imported - optional
    assert not imported & {distribution_of(m) for m in ("torch", "hypothesis")}


# ----- ARCHITECTURE.md names real things --------------------------------------------------------
def named_paths(text: str) -> tuple[set[str], set[str]]:
    """Repository paths (``minidl/backend/device.py``, ``tests/flex/``) and dotted minidl
    module names (``minidl.debug``) quoted in backticks in ``text``."""
    paths, modules = set(), set()
    for token in re.findall(r"`([^`\s]+)`", text):
        token = re.sub(r":\d+$", "", token.rstrip(",.;:"))  # a ``file:line`` names the file
        if re.fullmatch(r"[\w.-]+(/[\w.-]*)+|[\w-]+\.(py|md|toml|yml|txt|lock)", token):
            paths.add(token)
        elif re.fullmatch(r"minidl(_book)?(\.\w+)+", token):
            modules.add(token)
    return paths, modules


def resolves(module: str) -> bool:
    """Whether a dotted name is a module or package of the repository, or an attribute one
    defines at top level (``minidl.debug.trace``)."""
    parts = module.split(".")
    for cut in range(len(parts), 0, -1):
        base = ROOT.joinpath(*parts[:cut])
        for source in (base.with_suffix(".py"), base / "__init__.py"):
            if source.is_file():
                rest = parts[cut:]
                if not rest:
                    return True
                tree = ast.parse(source.read_text())
                defined = {n.name for n in tree.body if isinstance(n, ast.FunctionDef | ast.ClassDef)}
                defined |= {t.id for n in tree.body if isinstance(n, ast.Assign) for t in n.targets
                            if isinstance(t, ast.Name)}
                defined |= {a.asname or a.name for n in tree.body if isinstance(n, ast.ImportFrom)
                            for a in n.names}
                return len(rest) == 1 and rest[0] in defined
    return False


def test_architecture_md_exists_and_every_path_it_names_exists():
    text = (ROOT / "ARCHITECTURE.md").read_text()
    paths, modules = named_paths(text)
    assert len(paths) > 30 and len(modules) > 3  # the document does name the code
    missing = sorted(p for p in paths if not (ROOT / p).exists())
    assert missing == []
    unresolved = sorted(m for m in modules if not resolves(m))
    assert unresolved == []


def test_the_path_reader_finds_paths_and_modules():
    paths, modules = named_paths("see `minidl/backend/device.py:12`, `tests/flex/` and "
                                 "`minidl.debug.trace`; not `a + b` nor `Linear.forward`")
    assert paths == {"minidl/backend/device.py", "tests/flex/"}
    assert modules == {"minidl.debug.trace"}
    assert resolves("minidl.debug.trace") and not resolves("minidl.debug.no_such_thing")

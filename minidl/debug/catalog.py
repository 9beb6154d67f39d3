"""Everything a breakpoint can name: backend classes, their ops, functional ops, layers, kernels.

lldb resolves ``breakpoint set -r REGEX`` against the symbols of the binary; our "binary" is
the set of names :mod:`minidl.debug.names` gives to code that exists *now*: every op of every
backend class (``Dispatch``, ``Flex``, ``NdArray`` and each ``Autodiff[...]`` made so far),
the functions of ``minidl.tensor.module`` and ``minidl.backend.modules``, the methods of the
nn layers and of ``Tensor``, and the numba kernels of the loaded kernel modules.

A :class:`Location` also knows where the code is and, when one body serves several names (a
ModuleOps default runs as ``Dispatch.linear`` and ``Flex.linear``), the condition that picks
one of them — which is what ``pdb``'s ``b file:line, condition`` needs.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import sys
import types
from dataclasses import dataclass

from minidl.backend import BackendBase, op_names, ops_protocols
from minidl.debug.names import def_line, display_path, kernel_name

__trace_hide__ = True

#: Packages imported (when present) before names are listed; missing pieces are skipped.
PACKAGES = (
    "minidl.dispatch", "minidl.backends.flex", "minidl.backends.ndarray", "minidl.autodiff",
    "minidl.tensor", "minidl.tensor.module", "minidl.nn",
)


def ensure_loaded() -> None:
    """Import the parts of minidl that exist, so their classes and functions can be listed."""
    for name in PACKAGES:
        if name in sys.modules:
            continue
        try:
            importlib.import_module(name)
        except Exception:  # a piece not written yet (or broken mid-edit): nothing to list
            continue


def _order(cls: type) -> tuple[int, str]:
    name = cls.__name__
    if name == "Dispatch":
        return (0, name)
    if name.startswith("Autodiff"):
        return (1, name)
    return ({"Flex": 2, "NdArray": 3}.get(name, 4), name)


def backend_classes(all_modules: bool = False) -> list[type]:
    """Every concrete backend class that exists, Dispatch first, then ``Autodiff[...]``,
    Flex, NdArray. Found through ``BackendBase.__subclasses__()``; protocol mixins and abstract
    classes are left out, and (unless ``all_modules``) so are classes defined outside minidl,
    such as the throwaway backends tests define."""
    protocols = set(ops_protocols())
    found: list[type] = []
    stack = list(BackendBase.__subclasses__())
    seen: set[type] = set()
    while stack:
        cls = stack.pop()
        if cls in seen:
            continue
        seen.add(cls)
        stack.extend(cls.__subclasses__())
        if cls in protocols or cls.__dict__.get("abstract", False) or getattr(cls, "abstract", True):
            continue
        if not all_modules and not cls.__module__.startswith("minidl."):
            continue
        found.append(cls)
    return sorted(found, key=_order)


@dataclass(frozen=True)
class Location:
    """Where a named piece of code lives. ``condition`` (a Python expression over the frame's
    locals, or ``""``) tells this name apart from others sharing the same body."""

    name: str
    code: types.CodeType
    condition: str = ""

    @property
    def path(self) -> str:
        """The file, relative to the repository root."""
        return display_path(self.code.co_filename)

    @property
    def line(self) -> int:
        """The line of the ``def``."""
        return def_line(self.code)

    @property
    def body_line(self) -> int:
        """The first line of the body (where pdb can stop), after the docstring if any."""
        lines = sorted({ln for _, _, ln in self.code.co_lines() if ln is not None and ln > self.line})
        doc = self.code.co_consts[0] if self.code.co_consts and isinstance(self.code.co_consts[0], str) else None
        if doc is not None and len(lines) > 1:
            return lines[1] if _is_docstring_line(self.code, lines[0]) else lines[0]
        return lines[0] if lines else self.line


def _is_docstring_line(code: types.CodeType, line: int) -> bool:
    import linecache

    text = linecache.getline(code.co_filename, line).lstrip()
    return text.startswith(('"""', "'''", 'r"""', '"', "'"))


def _code_of(obj) -> types.CodeType | None:
    func = getattr(obj, "__func__", obj)
    func = inspect.unwrap(func) if callable(func) else func
    return getattr(func, "__code__", None)


def _backend_locations(classes: list[type]) -> list[Location]:
    users: dict[types.CodeType, int] = {}
    entries: list[tuple[str, types.CodeType]] = []
    for cls in classes:
        names = list(op_names(cls))
        for klass in cls.__mro__:  # hand-written extras: backward, from_inner, grad, ...
            if klass in (object, BackendBase) or klass in ops_protocols():
                continue
            for key, member in klass.__dict__.items():
                if not key.startswith("_") and isinstance(member, classmethod) and key not in names:
                    names.append(key)
        for op in names:
            code = _code_of(getattr(cls, op, None))
            if code is None:
                continue
            entries.append((f"{cls.__name__}.{op}", code))
            users[code] = users.get(code, 0) + 1
    return [
        Location(name, code, f"cls.__name__ == {name.rsplit('.', 1)[0]!r}" if users[code] > 1 else "")
        for name, code in entries
    ]


def _module_functions(module: types.ModuleType, classes: list[type]) -> list[Location]:
    short = module.__name__.rsplit(".", 1)[-1]
    out: list[Location] = []
    for key, obj in vars(module).items():
        if not inspect.isfunction(obj) or obj.__module__ != module.__name__:
            continue
        code = obj.__code__
        params = code.co_varnames[: code.co_argcount]
        if params and params[0] == "B":
            out.extend(
                Location(f"{short}.{key}[{cls.__name__}]", code, f"B.__name__ == {cls.__name__!r}")
                for cls in classes
            )
        else:
            out.append(Location(f"{short}.{key}", code))
    return out


def _methods(modules: list[types.ModuleType], only: str | None = None) -> list[Location]:
    """``Class.method`` for the leaf classes of ``modules``, named as frames are: by the
    runtime class, so ``Tensor.exp`` even when ``exp`` is written in a mixin."""
    classes = {
        cls for module in modules for cls in vars(module).values()
        if inspect.isclass(cls) and cls.__module__ == module.__name__
    }
    leaves = [c for c in classes if not any(o is not c and issubclass(o, c) for o in classes)]
    out: list[Location] = []
    for cls in sorted(leaves, key=lambda c: c.__name__):
        seen: set[str] = set()
        for klass in cls.__mro__:
            if not klass.__module__.startswith("minidl."):
                continue
            for key, member in klass.__dict__.items():
                if key in seen or (only is not None and key != only):
                    continue
                func = getattr(member, "__func__", member)
                if (key.startswith("__") and key != "__call__") or not inspect.isfunction(func):
                    continue
                seen.add(key)
                out.append(Location(f"{cls.__name__}.{key}", func.__code__))
    return out


def _submodules(package: str) -> list[types.ModuleType]:
    root = sys.modules.get(package)
    if root is None:
        return []
    mods = [root]
    for info in pkgutil.walk_packages(getattr(root, "__path__", []), package + "."):
        try:
            mods.append(importlib.import_module(info.name))
        except Exception:
            continue
    return mods


def _kernels() -> list[Location]:
    dispatcher = getattr(sys.modules.get("numba.core.dispatcher"), "Dispatcher", None)
    if dispatcher is None:
        return []
    out: list[Location] = []
    for name, module in list(sys.modules.items()):
        if not name.startswith("minidl.backends") or module is None:
            continue
        for key, obj in vars(module).items():
            if isinstance(obj, dispatcher) and getattr(obj, "py_func", None) is not None \
                    and obj.py_func.__module__ == name:
                out.append(Location(kernel_name(key), obj.py_func.__code__))
    return out


_cache: tuple[tuple, dict[str, Location]] | None = None


def known_locations() -> dict[str, Location]:
    """Every name a breakpoint can resolve to, mapped to its :class:`Location`.

    Recomputed when a backend class or a module appeared since the last call (a new
    ``Autodiff[...]``, a lazily imported kernel module), otherwise served from a cache.
    """
    global _cache
    ensure_loaded()
    classes = backend_classes()
    key = (tuple(id(c) for c in classes), len(sys.modules))
    if _cache is not None and _cache[0] == key:
        return dict(_cache[1])
    found: list[Location] = _backend_locations(classes)
    for package in ("minidl.backend.modules",):
        for module in _submodules(package):
            found.extend(_module_functions(module, classes))
    if "minidl.tensor.module" in sys.modules:
        found.extend(_module_functions(sys.modules["minidl.tensor.module"], classes))
    found.extend(_methods([m for m in _submodules("minidl.tensor") if m.__name__ != "minidl.tensor.module"]))
    found.extend(_methods(_submodules("minidl.nn"), only="forward"))
    found.extend(_kernels())
    names = {loc.name: loc for loc in found}
    _cache = (key, names)
    return dict(names)

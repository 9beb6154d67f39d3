"""The reader's run, watched for the whole run: what the reader's own frames call and reach.

A build exercise or a puzzle runs the reader's code inside the checker's process, so the
rules must hold for every frame of the reader's, not only for the function handed in:

* **whose frame**: code in ``minidl/`` or ``minidl_book/`` is the library's (the checker
  included); every other frame is the reader's (helpers defined in earlier cells too), and
  so is the solution's own code wherever it lives. The standard library and third-party
  packages are transparent: a frame of theirs counts as whoever called it, so ``inspect``
  called by the reader is the reader. A module's ``__trace_hide__`` plays no part here.
* **what the reader calls**: every Python function of the library entered straight from a
  reader frame (one ``sys.setprofile`` event), every builtin the reader calls (``c_call``),
  and every reader code object that runs (read once for the names it loads) are checked
  against the rules, which are frozen in a :class:`Frozen` before the run starts.
* **what the reader must not reach**: a tensor's storage (``.primitive``,
  ``.backend_tensor``, ``_wrap``, ``DispatchTensor``: guarded descriptors are put on the two
  slots for the run); frames (``sys._getframe``, ``inspect``, ``tb_frame``...), the garbage
  collector's object lists, the profiler, imports done by call, NumPy and torch (an audit hook
  and a torch function mode back the profile hook up); and the checker itself: its modules'
  globals, its classes and ``builtins`` are compared before and after, and put back.

:class:`Watch` collects :class:`Violation` s; the first one becomes the verdict.
"""

from __future__ import annotations

import builtins
import dataclasses
import dis
import os
import re
import sys
import types
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import minidl
from minidl.debug import _hooks
from minidl.debug.names import _EXTERNAL_PREFIXES, code_info, frame_name

__trace_hide__ = True

__all__ = ["ALIASES", "Frozen", "Violation", "Watch"]

_PACKAGE = tuple(os.path.realpath(d) + os.sep for d in (os.path.dirname(minidl.__file__),
                                                       os.path.dirname(__file__)))  # minidl_book
_BOOK = _PACKAGE[1]

#: Named ops that do what an operator does: allowing ``*`` allows ``mul`` too.
ALIASES = {
    "__add__": ("add", "add_scalar"), "__radd__": ("add", "add_scalar"),
    "__sub__": ("sub", "sub_scalar"), "__rsub__": ("sub", "sub_scalar"),
    "__mul__": ("mul", "mul_scalar"), "__rmul__": ("mul", "mul_scalar"),
    "__truediv__": ("div", "div_scalar"), "__neg__": ("neg",), "__matmul__": ("matmul",),
    "__eq__": ("equal", "equal_elem"), "__ne__": ("not_equal", "not_equal_elem"),
    "__lt__": ("lower", "lower_elem"), "__le__": ("lower_equal", "lower_equal_elem"),
    "__gt__": ("greater", "greater_elem"), "__ge__": ("greater_equal", "greater_equal_elem"),
    "__and__": ("bool_and",), "__or__": ("bool_or",), "__xor__": ("bool_xor",),
    "__invert__": ("bool_not",), "__mod__": ("remainder", "remainder_scalar"),
    "__pow__": ("powf", "powf_scalar", "powi_scalar"),
}

#: Reaching into a tensor's storage: attribute and global names, read in the reader's code.
STORAGE_NAMES = frozenset({"primitive", "backend_tensor", "_wrap", "DispatchTensor"})
#: Names that lead out of the reader's own code: to frames, closures, globals, the checker.
INTROSPECTION_NAMES = frozenset({
    "f_back", "f_globals", "f_locals", "f_builtins", "f_code", "tb_frame", "tb_next", "gi_frame",
    "cr_frame", "ag_frame", "__globals__", "__closure__", "cell_contents", "__code__",
    "__subclasses__", "__builtins__", "__getattribute__", "__get__", "__set__", "__dict__",
    "__wrapped__", "__defaults__", "__kwdefaults__", "_getframe",
    "_current_frames", "settrace", "setprofile", "get_objects", "get_referrers", "get_referents",
    "__import__", "__reduce__", "__reduce_ex__", "attrgetter", "methodcaller",
    # a module reached as another module's attribute (minidl.tensor.base.sys.modules[...])
    "sys", "gc", "inspect", "importlib", "builtins", "ctypes", "_thread", "threading", "modules",
    "minidl_book", "_ACTIVE", "_hooks", "_callbacks",
})
#: Modules the reader's code must not import or hold while the checker runs it.
INTERPRETER_MODULES = frozenset({
    "sys", "gc", "inspect", "importlib", "builtins", "ctypes", "threading", "_thread",
    "traceback", "types", "minidl_book", "multiprocessing", "subprocess", "os", "signal",
    "atexit", "weakref", "marshal", "pickle", "code", "dis", "operator",
})
_BANNED_BUILTINS = {
    builtins.__import__: "an import done by call (__import__)", builtins.eval: "eval",
    builtins.exec: "exec", builtins.compile: "compile", builtins.globals: "globals()",
    builtins.vars: "vars()", builtins.locals: "locals()", builtins.breakpoint: "breakpoint()",
    sys._getframe: "sys._getframe (the checker's frames)", sys.settrace: "sys.settrace",
    sys.setprofile: "sys.setprofile (the checker's watch)", sys._current_frames: "sys._current_frames",
}
for _name in ("get_objects", "get_referrers", "get_referents"):
    import gc as _gc

    _BANNED_BUILTINS[getattr(_gc, _name)] = f"gc.{_name} (the checker's objects)"
import _thread  # noqa: E402

for _name in ("start_new_thread", "start_joinable_thread", "start_new"):
    if hasattr(_thread, _name):
        _BANNED_BUILTINS[getattr(_thread, _name)] = "a thread (it would run after the check)"
_ATTR_BUILTINS = {builtins.getattr, builtins.setattr, builtins.delattr, builtins.hasattr}

_AUDITED = ("sys._getframe", "sys._current_frames", "sys.settrace", "sys.setprofile",
            "gc.get_objects", "gc.get_referrers", "gc.get_referents", "object.__getattr__",
            "object.__setattr__", "object.__delattr__", "ctypes.", "code.__new__",
            "function.__new__", "sys.addaudithook", "import")


@dataclass(frozen=True)
class Frozen:
    """The rules of one check, copied before the run (the reader cannot switch them off)."""

    allowed: frozenset[str] | None
    forbidden: tuple[tuple[re.Pattern, str], ...]
    must_reach: tuple[tuple[re.Pattern, str], ...]
    no_data: bool
    no_numpy: bool
    no_torch: bool
    fresh_result: bool
    helpers: frozenset[types.CodeType]
    #: ``{code: check(args, result) -> why or None}``: helpers whose every call from the
    #: reader's code is recorded (arguments and result) for the checker to judge after the run
    helper_checks: Mapping[types.CodeType, Any] = dataclasses.field(default_factory=dict)


@dataclass
class Violation:
    """A broken rule: ``rule`` (its name, for ``Verdict.rule``), ``text`` (the message) and
    ``site`` (``at line 4 of f: `...```, the reader's line)."""

    rule: str
    text: str
    site: str = ""


@dataclass
class Call:
    """A library function entered straight from the reader's code."""

    name: str
    code: types.CodeType
    site: str


def _classify_path(code: types.CodeType, glob: Mapping[str, Any] | None = None) -> str:
    filename = code.co_filename
    if filename.startswith("<frozen"):
        return "ext"
    if filename.startswith("<"):
        # exec'd code (dataclass and namedtuple methods, or a reader's exec'd helper): whose
        # module it runs in decides
        where = (glob or {}).get("__file__") or ""
        if not where:
            return "ext"  # numba's and dataclasses' generated code; read when the reader calls it
        filename = where
    full = os.path.realpath(filename)
    if full.startswith(_PACKAGE) or full.startswith(_kernel_dir()):
        return "book" if full.startswith(_BOOK) else "lib"
    if full.startswith(_EXTERNAL_PREFIXES):
        return "ext"
    return "reader"


def _kernel_dir() -> str:
    """Where the fusion backend writes the kernels it generates (library code, not the reader's;
    see ``minidl.backends.flex.fusion.source.kernel_dir``)."""
    root = os.environ["NUMBA_CACHE_DIR"]  # set by minidl's import (minidl/__init__.py)
    return os.path.realpath(os.path.join(root, "fusion_kernels")) + os.sep


_PATH_KIND: dict[types.CodeType, str] = {}


def site_of(frame: types.FrameType | None) -> str:
    """``at line 4 of outer: `return a * b```."""
    if frame is None:
        return "(below your code)"
    import linecache

    line = frame.f_lineno
    text = linecache.getline(frame.f_code.co_filename, line).strip()
    return f"at line {line} of {frame.f_code.co_name}" + (f": `{text}`" if text else "")


def _code_site(code: types.CodeType, line: int | None) -> str:
    import linecache

    line = line or code.co_firstlineno
    text = linecache.getline(code.co_filename, line).strip()
    return f"at line {line} of {code.co_name}" + (f": `{text}`" if text else "")


class _GuardedSlot:
    """A slot's descriptor, put on the class for one run so that a read or write of it is a
    Python call the watch sees (a plain slot read leaves no event)."""

    __slots__ = ("_slot", "_name")

    def __init__(self, slot: Any, name: str):
        self._slot, self._name = slot, name

    def __get__(self, obj, owner=None):
        return self._slot.__get__(obj, owner)

    def __set__(self, obj, value):
        self._slot.__set__(obj, value)

    def __delete__(self, obj):
        self._slot.__delete__(obj)


_STORAGE_CODES = frozenset({_GuardedSlot.__get__.__code__, _GuardedSlot.__set__.__code__,
                            _GuardedSlot.__delete__.__code__})


def _storage_targets() -> list[tuple[type, str]]:
    from minidl.dispatch.tensor import DispatchTensor
    from minidl.tensor.base import TensorBase

    return [(TensorBase, "primitive"), (DispatchTensor, "backend_tensor")]


def _private_codes() -> dict[types.CodeType, str]:
    from minidl.dispatch.tensor import DispatchTensor
    from minidl.tensor.base import TensorBase

    return {TensorBase._wrap.__code__: "Tensor._wrap", DispatchTensor.__init__.__code__: "DispatchTensor(...)"}


_CHECKER_MODULES = ("minidl_book.build_check", "minidl_book.watch", "minidl_book.verdict",
                    "minidl_book.harness", "minidl_book.reader_code", "minidl_book.compare",
                    "minidl_book.puzzles", "minidl_book.exercises", "minidl.debug._hooks",
                    "minidl.debug.trace", "minidl.debug.names")


def _snapshot() -> dict:
    """Identity of what the checker relies on: its modules' globals, its classes' dicts and
    ``builtins``."""
    snap: dict = {"builtins": dict(vars(builtins))}
    for name in _CHECKER_MODULES:
        module = sys.modules.get(name)
        if module is None:
            continue
        snap[name] = dict(vars(module))
        for value in list(vars(module).values()):
            if isinstance(value, type) and value.__module__ == name:
                snap[(name, value.__qualname__)] = (value, dict(vars(value)))
    return snap


def _changed(before: dict) -> list[str]:
    """What differs from ``before``; it is put back as it was."""
    out = []
    now_builtins = vars(builtins)
    for key, value in before["builtins"].items():
        if now_builtins.get(key, _MISSING) is not value:
            out.append(f"builtins.{key}")
            setattr(builtins, key, value)
    for key in [k for k in now_builtins if k not in before["builtins"]]:
        out.append(f"builtins.{key}")
        delattr(builtins, key)
    for key, value in before.items():
        if key == "builtins":
            continue
        if isinstance(key, tuple):
            klass, kept = value
            now = dict(vars(klass))
            for attr in set(kept) | set(now):
                if now.get(attr, _MISSING) is not kept.get(attr, _MISSING):
                    out.append(f"{key[1]}.{attr}")
                    if attr in kept:
                        type.__setattr__(klass, attr, kept[attr])
                    else:
                        type.__delattr__(klass, attr)
            continue
        module = sys.modules.get(key)
        if module is None:
            continue
        now = vars(module)
        for attr, kept in value.items():
            if now.get(attr, _MISSING) is not kept and attr not in ("_CHECKERS", "__warningregistry__"):
                out.append(f"{key}.{attr}")
                now[attr] = kept
    return out


_MISSING = object()
_ACTIVE: list[Watch] = []


def _audit(event: str, args: tuple) -> None:
    if not _ACTIVE:
        return
    watch = _ACTIVE[-1]
    if watch._busy or not event.startswith(_AUDITED):
        return
    if event == "object.__setattr__" or event == "object.__delattr__":
        if not (args and isinstance(args[0], type) and getattr(args[0], "__module__", "").startswith(
                ("minidl_book", "minidl.debug"))):
            return
    if event == "import":
        top = str(args[0]).split(".")[0] if args else ""
        if not ((top == "numpy" and watch.rules.no_numpy) or (top == "torch" and watch.rules.no_torch)):
            return
    watch._busy = True
    try:
        kind, frame = watch.owner(sys._getframe(1))
        what = _audit_text(event, args)
    except Exception:  # noqa: BLE001 - an audit hook must never break the code it watches
        return
    finally:
        watch._busy = False
    if kind != "reader":
        return
    watch.add("no reaching outside your code", f"your code called {what}", site_of(frame))
    raise PermissionError(f"the checker refuses {what} in a checked solution")


def _audit_text(event: str, args: tuple) -> str:
    def arg(i: int) -> str:
        return str(args[i]) if len(args) > i else "?"

    if event == "object.__getattr__":
        return f"reading {arg(1)} (frames lead to the checker)"
    if event in ("object.__setattr__", "object.__delattr__"):
        verb = "changing" if event == "object.__setattr__" else "deleting"
        return f"{verb} {getattr(args[0], '__name__', '?') if args else '?'}.{arg(1)} (the checker)"
    if event == "import":
        return f"importing {arg(0)}"
    return event


#: whether :func:`_audit` is installed (a list, so installing it changes no global of the
#: checker's, which a watch compares before and after)
_AUDIT_INSTALLED: list[bool] = []


def _install_audit() -> None:
    """Install :func:`_audit`, once, at the first watch. Not at import: an audit hook cannot
    be removed, and it runs on every audited event of the process, ``id()`` among them: a
    benchmark importing ``minidl_book`` measured ``id()`` at 0.17 us instead of 0.05, a
    Dispatch forwarder (which calls it once) 0.25 us slower."""
    if not _AUDIT_INSTALLED:
        sys.addaudithook(_audit)
        _AUDIT_INSTALLED.append(True)


def _torch_mode():
    """A ``TorchFunctionMode`` that refuses torch calls whose nearest non-library caller is
    the reader's (``None`` when torch cannot be imported)."""
    try:
        import torch
        from torch.overrides import TorchFunctionMode
    except Exception:  # pragma: no cover - torch is in the book's environment
        return None

    class _NoTorch(TorchFunctionMode):
        def __torch_function__(self, func, types_, args=(), kwargs=None):
            if _ACTIVE:
                watch = _ACTIVE[-1]
                kind, frame = watch.owner(sys._getframe(1))
                if kind == "reader":
                    name = getattr(func, "__name__", str(func))
                    watch.add("no torch", f"your code called torch ({name}); compute with minidl",
                              site_of(frame))
                    raise PermissionError("the checker refuses torch in a checked solution")
            return func(*args, **(kwargs or {}))

    del torch
    return _NoTorch


class Watch:
    """One watched run: ``with Watch(rules, reader_codes, checker_codes) as w: run()``; then
    ``w.violations``, ``w.calls`` (library functions the reader called), ``w.reached``
    (the patterns of the must-reach rules that hit) and ``w.made(obj)`` (whether a tensor was made in the run)."""

    def __init__(self, rules: Frozen, reader_codes: set, checker_codes: set = frozenset(),
                 reader_files: Sequence[str] = ()):
        self.rules = rules
        self.reader_codes = set(reader_codes)
        self.reader_files = {os.path.realpath(f) for f in reader_files}
        self.checker_codes = set(checker_codes)
        self.violations: list[Violation] = []
        self.calls: list[Call] = []
        #: ``(check, arguments, result, site)`` of each call of a checked helper (see
        #: :attr:`Frozen.helper_checks`)
        self.helper_results: list[tuple] = []
        self._helper_args: dict[int, tuple] = {}
        self.tensor_calls = 0
        #: the must-reach rules that hit, by their pattern (a rule is named, not numbered)
        self.reached: set[str] = set()
        self.scanned: set[types.CodeType] = set()
        self._made: list = []
        self._made_ids: set[int] = set()
        self._busy = False
        self._kinds: dict[types.CodeType, str] = {}
        self._private = _private_codes()
        from minidl.tensor.base import TensorBase

        self._init_code = TensorBase.__init__.__code__
        self._wrap_code = TensorBase._wrap.__code__
        self._mode = None
        self.boundary: types.CodeType | None = None  # the checker's frame that calls run

    # ----- whose frame --------------------------------------------------------------------
    def kind(self, code: types.CodeType, glob: Mapping[str, Any] | None = None) -> str:
        """``reader``, ``lib`` (minidl), ``book`` (minidl_book) or ``ext`` (transparent)."""
        k = self._kinds.get(code)
        if k is None:
            if code in self.rules.helpers:
                k = "book"  # an earlier puzzle's solution: what it calls is not this solution's
            elif code in self.reader_codes:
                k = "reader"
            elif code in self.checker_codes:
                k = "book"
            else:
                k = _PATH_KIND.get(code)
                if k is None:
                    k = _PATH_KIND[code] = _classify_path(code, glob)
                if k == "book" and code.co_filename in self.reader_files:
                    k = "reader-file"  # a helper beside a solution kept in the book's own files
            self._kinds[code] = k
        return k

    def owner(self, frame: types.FrameType | None, limit: int = 1000) -> tuple[str, types.FrameType | None]:
        """Whose the frame is, looking through standard-library and third-party frames (at
        most ``limit`` of them: deep inside numba's compiler nobody is the reader)."""
        while frame is not None and limit > 0:
            k = self.kind(frame.f_code, frame.f_globals)
            if k not in ("ext", "reader-file"):  # a helper beside a planted solution: its caller's
                return ("reader" if k == "reader" else "lib"), frame
            frame = frame.f_back
            limit -= 1
        return "lib", None

    def add(self, rule: str, text: str, site: str = "") -> None:
        """Record a broken rule (the first one is the verdict)."""
        self.violations.append(Violation(rule, text, site))

    def made(self, obj: Any) -> bool:
        """Whether ``obj`` is a tensor made during this run (or, with ``fresh_result``, a
        value a library call returned to the reader's code)."""
        return id(obj) in self._made_ids

    # ----- the run ------------------------------------------------------------------------
    def __enter__(self) -> Watch:
        self._snapshot = _snapshot()
        self._slots = []
        for klass, name in _storage_targets():
            slot = vars(klass)[name]
            if isinstance(slot, _GuardedSlot):  # a nested watch: already guarded
                continue
            type.__setattr__(klass, name, _GuardedSlot(slot, name))
            self._slots.append((klass, name, slot))
        mode_type = _torch_mode() if self.rules.no_torch else None
        self._mode = mode_type() if mode_type is not None else None
        if self._mode is not None:
            self._mode.__enter__()
        _install_audit()
        _ACTIVE.append(self)
        _hooks.add(self._event)
        self._profile = sys.getprofile()
        return self

    def __exit__(self, *exc) -> None:
        still = sys.getprofile() is self._profile and self._event in _hooks._callbacks
        _hooks.remove(self._event)
        if not still:
            self.add("no reaching outside your code", "your code switched the checker's watch off "
                     "(sys.setprofile / sys.settrace)")
            _hooks._callbacks[:] = [c for c in _hooks._callbacks if c is not self._event]
        if _ACTIVE and _ACTIVE[-1] is self:
            _ACTIVE.pop()
        if self._mode is not None:
            try:
                self._mode.__exit__(None, None, None)
            except Exception:  # noqa: BLE001 - the mode stack was changed by the reader
                self.add("no torch", "your code changed torch's function modes")
        for klass, name, slot in self._slots:
            type.__setattr__(klass, name, slot)
        changed = _changed(self._snapshot)
        if changed:
            self.add("the checker is not yours to change",
                     f"your code changed the checker: {', '.join(sorted(set(changed))[:4])} "
                     "(put back as it was)")

    # ----- events -------------------------------------------------------------------------
    def _event(self, frame: types.FrameType, event: str, arg: Any) -> None:
        if self._busy:
            return
        if self.rules.helper_checks and frame.f_code in self.rules.helper_checks:
            self._helper_event(frame, event, arg)
        if event == "call":
            self._call(frame)
        elif event == "return":
            if frame.f_code is self._wrap_code:
                self._keep(arg)
            elif self.rules.fresh_result and frame.f_back is not None and \
                    self.kind(frame.f_code) in ("lib", "book") and \
                    self.kind(frame.f_back.f_code) == "reader":
                self._keep(arg)  # what a library op handed the reader (a backend's primitive)
        elif event == "c_call":
            kind = self.kind(frame.f_code, frame.f_globals)
            if kind == "reader":
                self._builtin(arg, frame, frame)
            elif kind == "reader-file" and self.owner(frame, 8)[0] == "reader":
                self._builtin(arg, frame, frame)
            elif kind == "ext" and _hashable(arg) and arg in _BANNED_BUILTINS:
                who, owner = self.owner(frame, 8)  # inspect.currentframe(), called by the reader
                if who == "reader":
                    self._builtin(arg, frame, owner)

    def _helper_event(self, frame: types.FrameType, event: str, arg: Any) -> None:
        """Record a checked helper's arguments when the reader's code calls it, and its
        result when it returns."""
        code = frame.f_code
        if event == "call" and self.owner(frame.f_back)[0] == "reader":
            names = code.co_varnames[:code.co_argcount + code.co_kwonlyargcount]
            args = {n: frame.f_locals.get(n) for n in names}
            self._helper_args[id(frame)] = (args, site_of(self.owner(frame.f_back)[1]))
        elif event == "return" and id(frame) in self._helper_args:
            args, site = self._helper_args.pop(id(frame))
            self.helper_results.append((self.rules.helper_checks[code], args, arg, site))

    def _keep(self, obj: Any) -> None:
        if id(obj) not in self._made_ids:
            self._made.append(obj)
            self._made_ids.add(id(obj))

    def _call(self, frame: types.FrameType) -> None:
        code = frame.f_code
        kind = self.kind(code, frame.f_globals)
        rules = self.rules
        if kind == "reader-file" and self.owner(frame)[0] != "reader":
            return  # the harness's helper beside a planted solution, called by the harness
        if kind in ("reader", "reader-file"):
            if code not in self.scanned:
                self.scanned.add(code)
                self.scan(code, frame.f_globals)
                self._closure(code, frame)
            if rules.must_reach:  # "reach your float_exp": the reader's own code counts
                info = code_info(code, frame)
                name = frame_name(frame, info)[0] if info.kind != "skip" else code.co_qualname
                self._reach(name)
            return
        if code.co_filename == __file__:
            return  # the watch's own hooks
        if code in _STORAGE_CODES:
            who, where = self.owner(frame.f_back)
            if who == "reader" and rules.no_data:
                self.add("no reaching into storage", "your code reached into a tensor's storage "
                         f"(.{frame.f_locals.get('self')._name})", site_of(where))
            return
        if code is self._init_code:
            self._keep(frame.f_locals.get("self"))
        if kind == "ext":
            back = frame.f_back
            if code.co_filename.startswith("<") and not code.co_filename.startswith("<frozen") \
                    and code not in self.scanned and back is not None and self.owner(back, 6)[0] == "reader":
                self.scanned.add(code)  # an exec'd helper of the reader's
                self.scan(code, frame.f_globals)
            if back is not None and (rules.no_numpy or rules.no_torch) and \
                    self.kind(back.f_code) in ("reader", "reader-file", "ext"):
                module = frame.f_globals.get("__name__") or ""
                top = module.partition(".")[0]
                if (top == "numpy" and rules.no_numpy) or (top == "torch" and rules.no_torch):
                    who, where = self.owner(back, 6)
                    if who == "reader":
                        self._foreign(top, f"{module}.{code.co_name}", where)
            return
        if rules.forbidden or rules.must_reach:
            self._names(frame, code)
        who, where = self.owner(frame.f_back)
        if who != "reader":
            return
        if code in self._private and rules.no_data:
            self.add("no reaching into storage", f"your code called {self._private[code]}, "
                     "the library's own plumbing", site_of(where))
            return
        if kind == "book" and code not in rules.helpers:
            shown = code.co_name if "<locals>" in code.co_qualname else code.co_qualname
            self.add("the checker is not yours to call", f"your code called the checker's "
                     f"{shown} (the checker's objects, references and answers are not for solutions)",
                     site_of(where))
            return
        info = code_info(code, frame)
        if info.kind == "skip":
            return
        name, _ = frame_name(frame, info)
        self.calls.append(Call(name, code, site_of(where)))

    def _names(self, frame: types.FrameType, code: types.CodeType) -> None:
        info = code_info(code, frame)
        name = frame_name(frame, info)[0] if info.kind != "skip" else code.co_qualname
        static = static_name(code, frame.f_globals)
        why = next((w for regex, w in self.rules.forbidden
                    if regex.search(name) or regex.search(static)), None)
        if why is not None:
            shown = name if name == static else f"{name} (the function {static})"
            self.add(why, f"must not {why}; the run reached {shown}", self._reader_site(frame))
        self._reach(name)

    def _reach(self, name: str) -> None:
        for regex, _ in self.rules.must_reach:
            if regex.search(name):
                self.reached.add(regex.pattern)

    def _reader_site(self, frame: types.FrameType | None) -> str:
        while frame is not None and frame.f_code is not self.boundary:
            if self.kind(frame.f_code) in ("reader", "reader-file"):
                return site_of(frame)
            frame = frame.f_back
        return "(below your code)"

    def _foreign(self, top: str, what: str, where) -> None:
        if top == "numpy":
            self.add("no NumPy", f"no NumPy in your code; it uses {what} (NumPy)", site_of(where))
        else:
            self.add("no torch", f"no torch in your code; it uses {what}", site_of(where))

    def _builtin(self, fn: Any, frame: types.FrameType, where) -> None:
        banned = _BANNED_BUILTINS.get(fn) if _hashable(fn) else None
        if banned is not None:
            self.add("no reaching outside your code", f"your code called {banned}", site_of(where))
            return
        if fn in _ATTR_BUILTINS and not self._constant_name(frame):
            self.add("no reaching outside your code", f"your code called {fn.__name__} with a "
                     "name the checker cannot read (write the attribute out: x.name)", site_of(where))
            return
        module = getattr(fn, "__module__", None) or ""
        owner = getattr(fn, "__self__", None)
        owner_module = type(owner).__module__ if owner is not None else ""
        if isinstance(owner, types.ModuleType):
            owner_module = owner.__name__
        for top in ("numpy", "torch"):
            if (module.split(".")[0] == top or owner_module.split(".")[0] == top) and \
                    getattr(self.rules, f"no_{top}"):
                self._foreign(top, getattr(fn, "__qualname__", repr(fn)), where)
                return

    def _constant_name(self, frame: types.FrameType) -> bool:
        """Whether the getattr-like call being made names its attribute with a string constant
        that is neither private nor a storage or introspection name."""
        code = frame.f_code
        table = _CALL_NAMES.get(code)
        if table is None:
            table = _CALL_NAMES[code] = _constant_attr_calls(code)
        name = table.get(frame.f_lasti)
        return name is not None and not name.startswith("_") and name not in STORAGE_NAMES \
            and name not in INTROSPECTION_NAMES

    def _closure(self, code: types.CodeType, frame: types.FrameType) -> None:
        """Values the reader's code holds without naming them as globals: closure cells and
        default arguments (a slot getter grabbed in an earlier cell)."""
        try:
            local = frame.f_locals
        except Exception:  # noqa: BLE001
            return
        for name in code.co_freevars + code.co_varnames[: code.co_argcount + code.co_kwonlyargcount]:
            if name in local and _reaching(local[name]):
                self.add("no reaching outside your code", f"your code holds {name}, a "
                         f"{type(local[name]).__name__} that opens objects from the outside",
                         _code_site(code, code.co_firstlineno))
                return

    # ----- the reader's code, read once ---------------------------------------------------
    def scan(self, code: types.CodeType, glob: Mapping[str, Any]) -> None:
        """Names the reader's code loads that break a rule (with their line)."""
        line = code.co_firstlineno
        rules = self.rules
        instructions = list(dis.get_instructions(code))
        for k, ins in enumerate(instructions):
            if ins.starts_line:
                line = ins.starts_line
            op, name = ins.opname, ins.argval
            if not isinstance(name, str):
                continue
            where = _code_site(code, line)
            if op in ("LOAD_ATTR", "LOAD_METHOD", "STORE_ATTR", "DELETE_ATTR", "LOAD_GLOBAL",
                      "LOAD_NAME", "IMPORT_FROM"):
                if name in STORAGE_NAMES and rules.no_data:
                    self.add("no reaching into storage", f"your code reads .{name}, a tensor's "
                             "storage (no values out of a tensor)", where)
                elif name in INTROSPECTION_NAMES:
                    self.add("no reaching outside your code", f"your code reads {name}, which "
                             "leads out of your code (to frames, closures or the checker)", where)
            if op in ("LOAD_GLOBAL", "LOAD_NAME"):
                value = glob.get(name, getattr(builtins, name, None)) if hasattr(glob, "get") else None
                module = value.__name__ if isinstance(value, types.ModuleType) else \
                    getattr(value, "__module__", None)
                module = module if isinstance(module, str) else ""
                top = module.split(".")[0]
                if isinstance(value, types.ModuleType) and (module in INTERPRETER_MODULES or top in INTERPRETER_MODULES):
                    self.add("no reaching outside your code", f"your code uses the module {module}", where)
                elif _reaching(value):
                    self.add("no reaching outside your code", f"your code uses {name}, a "
                             f"{type(value).__name__} that opens objects from the outside", where)
                elif top == "numpy" and rules.no_numpy:
                    after = instructions[k + 1] if k + 1 < len(instructions) else None
                    shown = f"{name}.{after.argval}" if after is not None and after.opname in (
                        "LOAD_ATTR", "LOAD_METHOD") else name
                    self.add("no NumPy", f"no NumPy in your code; it uses {shown} (NumPy)", where)
                elif top == "torch" and rules.no_torch:
                    self.add("no torch", f"no torch in your code; it uses {name} (torch)", where)
            if op == "IMPORT_NAME":
                top = name.split(".")[0]
                if (top == "numpy" and rules.no_numpy) or (top == "torch" and rules.no_torch):
                    self._foreign_static(top, name, where)
                elif top in INTERPRETER_MODULES:
                    self.add("no reaching outside your code", f"your code imports {name}", where)
        for const in code.co_consts:
            if isinstance(const, types.CodeType) and const not in self.scanned:
                self.scanned.add(const)
                self.reader_codes.add(const)
                self._kinds.pop(const, None)
                self.scan(const, glob)

    def _foreign_static(self, top: str, name: str, where: str) -> None:
        if top == "numpy":
            self.add("no NumPy", f"no NumPy in your code; it imports {name}", where)
        else:
            self.add("no torch", f"no torch in your code; it imports {name}", where)


def static_name(code: types.CodeType, glob: Mapping[str, Any]) -> str:
    """The name of the function itself, whoever calls it under which class: its qualified
    name where it is defined (``NdArrayFloatOps.float_exp``, ``ModuleOps.linear``), or
    ``module.function`` (``module.linear``)."""
    qual = code.co_qualname
    if "." in qual and "<locals>" not in qual:
        return qual
    module = (glob.get("__name__") or "").rsplit(".", 1)[-1]
    return f"{module}.{qual}" if module else qual


_DESCRIPTOR_TYPES = (types.MethodWrapperType, types.WrapperDescriptorType, types.MemberDescriptorType,
                     types.GetSetDescriptorType, types.FrameType, types.TracebackType, types.CodeType,
                     _GuardedSlot)


def _reaching(value: Any) -> bool:
    """A value that opens objects from the outside: a slot or wrapper grabbed off a class
    (``TensorBase.__dict__["primitive"].__get__``), a frame, a traceback, a code object, or a
    ``functools.partial`` of one."""
    import functools

    if isinstance(value, functools.partial):
        value = value.func
    return isinstance(value, _DESCRIPTOR_TYPES)


def _hashable(fn: Any) -> bool:
    try:
        hash(fn)
    except TypeError:
        return False
    return True


_CALL_NAMES: dict[types.CodeType, dict[int, str]] = {}


def _constant_attr_calls(code: types.CodeType) -> dict[int, str]:
    """``{offset of a CALL: attribute name}`` for ``getattr(x, "name"...)`` calls whose name
    is a string constant. The object may be any expression (``hasattr(p.val(), "shape")``);
    the name is the one instruction before the call's ``PRECALL``/``CALL`` (before a plain
    default's load, for ``getattr(x, "name", None)``), and no jump lands between it and the
    call (``n if c else "shape"`` is no constant)."""
    out: dict[int, str] = {}
    instructions = list(dis.get_instructions(code))
    for k, ins in enumerate(instructions):
        if ins.opname != "CALL" or (ins.arg or 0) < 2:
            continue
        j = k - 1
        while j >= 0 and instructions[j].opname in ("PRECALL", "KW_NAMES", "CACHE"):
            j -= 1
        n = j - (ins.arg - 2)  # the name's instruction: after it, one plain load per argument
        if n < 1 or not all(i.opname.startswith("LOAD_") for i in instructions[n + 1: j + 1]):
            continue
        name_ins = instructions[n]
        if any(i.is_jump_target for i in instructions[n: k + 1]):
            continue
        if name_ins.opname == "LOAD_CONST" and isinstance(name_ins.argval, str):
            out[ins.offset] = name_ins.argval
    return out


def freeze(rules: Any, helpers: Sequence[Any] = ()) -> Frozen:
    """The rules as they are now, copied (regexes compiled) for one check."""
    codes: set = set()
    for fn in helpers:
        fn = getattr(fn, "__func__", fn)
        stack = [fn.__code__] if hasattr(fn, "__code__") else []
        while stack:
            c = stack.pop()
            codes.add(c)
            stack += [k for k in c.co_consts if isinstance(k, types.CodeType)]
    return Frozen(
        allowed=None if rules.allowed is None else frozenset(rules.allowed),
        forbidden=tuple((re.compile(p), why) for p, why in dict(rules.forbidden).items()),
        must_reach=tuple((re.compile(p), what) for p, what in dict(rules.must_reach).items()),
        no_data=bool(rules.no_data), no_numpy=bool(rules.no_numpy),
        no_torch=bool(getattr(rules, "no_torch", True)),
        fresh_result=bool(getattr(rules, "fresh_result", False)), helpers=frozenset(codes),
        helper_checks={getattr(fn, "__func__", fn).__code__: check
                       for fn, check in dict(getattr(rules, "helper_checks", {})).items()})

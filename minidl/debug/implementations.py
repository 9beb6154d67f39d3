"""Who implements which op, and which bodies actually ran: the book's ``nm -C``.

The burn book's nn-modules chapter counts symbols in a compiled model: of the names ending in ``ModuleOps<..>>::linear`` only one is in the
binary, ``<Dispatch as ModuleOps<Dispatch>>::linear``; conv2d has 18, layer_norm 16. Python
has no monomorphized symbols, so we ask the two questions behind the count directly:

* :func:`implementations` — for every backend class that exists, does it *define* ``op``
  (its own body) or *inherit* the protocol default? And does Dispatch forward it?
* :func:`coverage` — run a callable and list which ``(class, op)`` bodies ran: on an autodiff
  device ``Dispatch.linear`` runs, ``Autodiff[Flex].linear`` never does.

:func:`module_ops_table` prints the nn-modules chapter's table (op | ModuleOps default? | Dispatch forwards?
| Autodiff / Flex / NdArray override?).
"""

from __future__ import annotations

import ast
import inspect
import textwrap
from collections import Counter
from collections.abc import Sequence

from minidl.backend import Backend, BackendBase, defines, defining_class, is_required, protocol_of
from minidl.debug import _hooks
from minidl.debug.catalog import backend_classes, ensure_loaded
from minidl.debug.names import PROTOCOLS, code_info, def_line, display_path, frame_name
from minidl.debug.table import Table

__trace_hide__ = True

DEFINES = "defines"
INHERITS = "inherits default"
MISSING = "missing (required)"


def _status(cls: type, op: str) -> str:
    if defines(cls, op):
        return DEFINES
    return MISSING if is_required(cls, op) else INHERITS


def _where(cls: type, op: str) -> str:
    owner = defining_class(cls, op)
    if owner is None:
        return ""
    func = getattr(owner.__dict__[op], "__func__", owner.__dict__[op])
    code = getattr(func, "__code__", None)
    where = f"{display_path(code.co_filename)}:{def_line(code)}" if code is not None else ""
    return f"{owner.__name__}.{op}  {where}".rstrip()


def _find(names: Sequence[str], key: str) -> str | None:
    if key in names:
        return key
    for name in names:  # "Autodiff" finds "Autodiff[Flex]"
        if name.startswith(key):
            return name
    return None


class Implementations(Table):
    """The table :func:`implementations` returns, with questions a test or an exercise asks."""

    op: str

    def status(self, backend: str) -> str:
        """``"defines"``, ``"inherits default"`` or ``"missing (required)"`` for a class name
        (a prefix works: ``"Autodiff"`` finds ``Autodiff[Flex]``)."""
        name = _find([str(r[0]) for r in self.rows], backend)
        if name is None:
            raise KeyError(f"no backend class {backend!r} in the table (made so far: {[r[0] for r in self.rows]})")
        return str(self.row(name)["implementation"])

    def defines(self, backend: str) -> bool:
        """Whether the class has its own body for the op."""
        return self.status(backend) == DEFINES

    def inherits(self, backend: str) -> bool:
        """Whether the class runs the protocol default for the op."""
        return self.status(backend) == INHERITS

    @property
    def dispatch_forwards(self) -> bool:
        """Whether ``Dispatch`` forwards the op to the device's backend."""
        return self.forwards


def implementations(op: str) -> Implementations:
    """For every backend class that exists, whether it defines ``op`` or inherits the default.

    Rows: class | implementation (``defines`` / ``inherits default``) | the body that runs
    (class and file:line). Notes: whether Dispatch forwards ``op`` and how many classes have
    their own body — the counterpart of the ``nm -C`` count the burn book runs over a compiled model.
    """
    ensure_loaded()
    proto = protocol_of(op)
    if proto is None:
        raise KeyError(f"no backend op named {op!r}")
    classes = backend_classes()
    rows = [[cls.__name__, _status(cls, op), _where(cls, op)] for cls in classes]
    dispatch = next((c for c in classes if c.__name__ == "Dispatch"), None)
    forwards = dispatch is not None and defines(dispatch, op)
    own = [r[0] for r in rows if r[1] == DEFINES and r[0] != "Dispatch"]
    kind = "required" if is_required(Backend, op) else "has a default"
    notes = [
        f"{proto.__name__}.{op} {kind}; Dispatch {'forwards' if forwards else 'does NOT forward'} it.",
        f"own bodies (besides Dispatch's forwarder): {len(own)} of {len(rows) - (dispatch is not None)}"
        + (f" ({', '.join(own)})" if own else ""),
    ]
    table = Implementations(["class", "implementation", "body that runs"], rows, title=f"who implements {op}", notes=notes)
    table.op = op
    table.forwards = forwards
    return table


def _calls_in(func, receiver: str) -> list[str]:
    """Names ``X`` of ``receiver.X(...)`` calls in ``func``'s source, following one level of
    delegation to a module function called as ``mod.fn(receiver, ...)``."""
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(func)))
    except (OSError, TypeError, SyntaxError):
        return []
    calls = sorted(
        (n for n in ast.walk(tree) if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)),
        key=lambda n: (n.lineno, n.col_offset),
    )
    found: list[str] = []
    for node in calls:  # in source order
        target = node.func.value
        if isinstance(target, ast.Name) and target.id == receiver:
            found.append(node.func.attr)
        elif isinstance(target, ast.Name) and node.args and isinstance(node.args[0], ast.Name) \
                and node.args[0].id == receiver:
            module = func.__globals__.get(target.id)
            inner = getattr(module, node.func.attr, None)
            if inspect.isfunction(inner):
                params = inner.__code__.co_varnames[:1]
                found += _calls_in(inner, params[0]) if params else []
    return list(dict.fromkeys(found))


def default_recipe(op: str) -> list[str]:
    """The ops the protocol default of ``op`` is written with (empty when ``op`` is required)."""
    proto = protocol_of(op)
    if proto is None or is_required(Backend, op):
        return []
    return _calls_in(proto.__dict__[op].__func__, "cls")


def _autodiff_class() -> type | None:
    made = [c for c in backend_classes() if c.__name__.startswith("Autodiff")]
    if made:
        return made[0]
    stack = list(BackendBase.__subclasses__())
    while stack:  # no Autodiff[...] yet: its (abstract) base says the same
        cls = stack.pop()
        stack.extend(cls.__subclasses__())
        if cls.__module__.startswith("minidl.autodiff"):
            return cls
    return None


def module_ops_table(ops: Sequence[str] = ("conv2d", "layer_norm", "linear"), gpu: bool = False) -> Table:
    """The nn-modules chapter's table: op | ModuleOps default? | Dispatch forwards? | Autodiff overrides? |
    Flex overrides? | NdArray overrides?, computed from the classes as they are. ``gpu`` adds
    the GPU backend's column (``Wgpu``, burn's CubeBackend; importing it needs no GPU)."""
    ensure_loaded()
    classes = {c.__name__: c for c in backend_classes()}
    columns = [("Autodiff", _autodiff_class()), ("Flex", classes.get("Flex")), ("NdArray", classes.get("NdArray"))]
    if gpu:
        from minidl.backends.wgpu import Wgpu

        columns.append(("Wgpu", Wgpu))
    dispatch = classes.get("Dispatch")
    rows = []
    for op in ops:
        recipe = default_recipe(op)
        if is_required(Backend, op):
            default = "no (required)"
        else:
            default = "yes: " + ", ".join(recipe) if recipe else "yes"
        row = [op, default, "n/a" if dispatch is None else ("yes" if defines(dispatch, op) else "no")]
        for _, cls in columns:
            row.append("n/a" if cls is None else ("yes" if defines(cls, op) else "no"))
        rows.append(row)
    headers = ["op", "ModuleOps default?", "Dispatch forwards?"] + [f"{n} overrides?" for n, _ in columns]
    return Table(headers, rows, title="ModuleOps: who writes which body")


class Coverage:
    """Which backend op bodies ran during one call (see :func:`coverage`).

    ``calls`` counts runs per ``(class name, op)``; ``bodies`` records whose body ran
    (``"ModuleOps"`` for a default, the defining class otherwise).
    """

    def __init__(self, calls: Counter, bodies: dict, ops: Sequence[str] | None, result: object):
        self.calls = calls
        self.bodies = bodies
        self.ops = list(ops) if ops is not None else None
        self.result = result

    def ran(self, backend: str, op: str) -> bool:
        """Whether ``backend.op`` ran (``"Autodiff"`` matches any ``Autodiff[...]``)."""
        return self.count(backend, op) > 0

    def count(self, backend: str, op: str) -> int:
        """How many times ``backend.op`` ran."""
        return sum(n for (cls, name), n in self.calls.items() if name == op and (cls == backend or cls.startswith(backend)))

    def table(self, ops: Sequence[str] | None = None) -> Table:
        """Rows class | op | body | runs; every existing backend class for each op of ``ops``
        (default: the ops given to :func:`coverage`, else every op that ran)."""
        ops = list(ops) if ops is not None else self.ops
        if ops is None:
            keys = sorted(self.calls, key=lambda k: (k[1], k[0]))
        else:
            names = [c.__name__ for c in backend_classes()]
            names += sorted({cls for cls, _ in self.calls} - set(names))
            keys = [(cls, op) for op in ops for cls in names]
        rows = []
        for cls, op in keys:
            body = self.bodies.get((cls, op)) or _body_of(cls, op)
            body = f"{body} default" if body in PROTOCOLS else body
            n = self.calls.get((cls, op), 0)
            rows.append([f"{cls}.{op}", body, n if n else "never ran"])
        return Table(["op body", "whose body", "runs"], rows, title="which bodies ran")

    def __str__(self) -> str:
        return str(self.table())

    def __repr__(self) -> str:
        return str(self)

    def _repr_html_(self) -> str:
        return self.table()._repr_html_()


def _body_of(cls_name: str, op: str) -> str:
    cls = next((c for c in backend_classes() if c.__name__ == cls_name), None)
    if cls is None:
        return ""
    owner = defining_class(cls, op)
    return "" if owner is None else owner.__name__


def coverage(fn, *args, ops: Sequence[str] | None = None, **kwargs) -> Coverage:
    """Run ``fn(*args, **kwargs)`` and record which ``(backend class, op)`` bodies ran.

    Only classmethods whose runtime ``cls`` is a backend class count, named by that class:
    the ModuleOps default running on Dispatch counts as ``("Dispatch", "linear")``.
    """
    calls: Counter = Counter()
    bodies: dict = {}

    def on_event(frame, event, arg):
        if event != "call":
            return
        info = code_info(frame.f_code, frame)
        if info.kind != "cls":
            return
        name, cls = frame_name(frame, info)
        if cls is not None and issubclass(cls, BackendBase):
            key = (cls.__name__, info.func)
            calls[key] += 1
            bodies.setdefault(key, info.owner)

    _hooks.add(on_event)
    try:
        result = fn(*args, **kwargs)
    finally:
        _hooks.remove(on_event)
    return Coverage(calls, bodies, ops, result)

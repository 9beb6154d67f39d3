"""Build exercise of the storing-and-loading chapter: the safe unpickler of a ``.pt`` file.

The reader writes ``SafeUnpickler``, a :class:`pickle.Unpickler` for the ``data.pkl`` of a
``torch.save``d archive, with the two pieces that make it safe and right (minidl's
``minidl/store/torch_pickle.py``, which mirrors burn-store's ``pytorch/pickle_reader.rs``):

- ``find_class(module, name)``, the allow-list: ``collections.OrderedDict``,
  ``torch._utils._rebuild_tensor_v2`` (answered with the reader's own ``rebuild_tensor``) and
  the storage types ``torch.FloatStorage``, ... (answered with their dtype, from minidl's
  ``STORAGE_DTYPES``); any other name raises, before the ``REDUCE`` that would call it;
- ``rebuild_tensor(storage, storage_offset, size, stride, *rest)``: the storage's bytes as the
  NumPy array of that view (element ``[i, j]`` is element ``storage_offset + i * stride[0] +
  j * stride[1]`` of the storage, in the storage's dtype).

The harness gives ``persistent_load``: each storage reference of the pickle becomes a
:class:`Storage` holding the bytes of ``data/<key>`` and, as its ``dtype``, whatever the
reader's ``find_class`` answered for the storage's type. The checker saves state dicts with
``torch.save`` (transposed views, rows of a larger tensor, float16/float64/int64/bool, bfloat16
(which NumPy lacks: read as float32, the exact widening minidl's reader makes), 0-d tensors), compares what the reader's unpickler builds with minidl's own reader
(``read_torch_file``), and loads a file whose ``data.pkl`` asks for ``io.open`` (the
chapter's payload): the load must be refused at ``find_class``, with nothing called, by an
:class:`UnsafeFileError`. A last file names a module planted for the run, whose import runs
code (it sets a flag): a ``find_class`` that looks the name up before refusing it
(``super().find_class``) imports the module, and importing runs its code.
Two more name a callable inside torch that writes a file (``torch.serialization.save``, and
``torch.save`` by a rename): an allow-list of the whole torch package answers them.
A crafted file holds a view reaching past its storage (:data:`BOUNDS_VIEW`): the load must
raise, as minidl's reader does (``CorruptFileError``), not return memory past the data.

The planted module is :class:`~minidl_book.planted_module.PlantedModule`, in a file of its own:
the watch reads this file's classes (the planted slips below) as the reader's code.

Planted slips, each with its own hint: any other global answered
(``super().find_class``), the torch package trusted whole, a refusal raising another error than ``UnsafeFileError``, the name
looked up (its module imported) before the refusal, ``OrderedDict`` refused, the dtype hard-coded (float32),
``storage_offset`` ignored, the stride ignored (the elements read in order: what burn's
``rebuild_tensor_v2`` does at v0.22.0-pre.2, ``args[3] is stride (unused)``), the stride
given to ``as_strided`` in elements where it takes bytes, ``as_strided`` with no bounds
check (right on every file ``torch.save`` writes).
"""

from __future__ import annotations

import io
import tempfile
import zipfile
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from pickle import Unpickler
from types import FunctionType, ModuleType
from typing import Any

import numpy as np
import torch
from hypothesis import strategies as st

from minidl.store.errors import UnsafeFileError
from minidl.store.torch_pickle import STORAGE_DTYPES
from minidl.store.torch_reader import read_torch_file
from minidl_book.build_check import Rules
from minidl_book.cause_hints import CauseHints
from minidl_book.planted_module import PlantedModule
from minidl_book.watch import INTROSPECTION_NAMES, STORAGE_NAMES

__trace_hide__ = True

__all__ = ["PLANTED", "SafeUnpickler", "Storage", "exercise", "unpickle"]


@dataclass(frozen=True)
class Storage:
    """One storage of the archive, as the harness's ``persistent_load`` hands it over:
    ``data`` the bytes of ``data/<key>``, ``dtype`` what ``find_class`` answered for its type
    (minidl's ``torch_pickle.Storage`` holds the decoded array instead)."""

    key: str
    dtype: Any
    data: bytes


class SafeUnpickler(Unpickler):
    def find_class(self, module, name):
        if (module, name) == ("collections", "OrderedDict"):
            return OrderedDict
        if (module, name) == ("torch._utils", "_rebuild_tensor_v2"):
            return self.rebuild_tensor
        if module == "torch" and name in STORAGE_DTYPES:
            return STORAGE_DTYPES[name]
        raise UnsafeFileError(f"{module}.{name}: refused")

    def rebuild_tensor(self, storage, storage_offset, size, stride, *rest):
        if storage.dtype == "bfloat16":  # no NumPy dtype: a float32's top half
            bits = np.frombuffer(storage.data, np.uint16).astype(np.uint32)
            flat = (bits << 16).view(np.float32)
        else:
            flat = np.frombuffer(storage.data, storage.dtype)
        # element [i, j] of the view is flat[offset + i·stride[0] + j·stride[1]]
        index = storage_offset + sum(
            i * s for i, s in zip(np.indices(size), stride))
        return np.array(flat[index])  # indexing never reads past the storage


# ----- the harness ----------------------------------------------------------------------------
class _TorchPayload:
    """A payload through a name inside torch: unpickling it calls
    ``torch.serialization.save(0, marker)``, which writes the marker file."""

    def __init__(self, marker: Path):
        self.marker = str(marker)

    def __reduce__(self):
        return (torch.save, (0, self.marker))


class _Payload:
    """The chapter's payload: unpickling it calls ``io.open(marker, "w")``."""

    def __init__(self, marker: Path):
        self.marker = str(marker)

    def __reduce__(self):
        return (io.open, (self.marker, "w"))


def _pickled(archive: zipfile.ZipFile) -> tuple[bytes, str]:
    """``data.pkl``'s bytes and the archive's folder prefix (``"file/"``)."""
    name = next(n for n in archive.namelist() if n.endswith("/data.pkl"))
    return archive.read(name), name[: -len("data.pkl")]


def _storages(archive: zipfile.ZipFile, prefix: str):
    """The ``persistent_load`` the harness gives: ``('storage', type, key, location, numel)``
    → one :class:`Storage` per key (a storage two tensors share is one object)."""
    seen: dict[str, Storage] = {}

    def persistent_load(pid):
        _, storage_type, key, _location, _numel = pid
        if key not in seen:
            seen[key] = Storage(str(key), storage_type, archive.read(f"{prefix}data/{key}"))
        return seen[key]

    return persistent_load


def unpickle(solution: type, path: Path, asked: list | None = None,
             refused: list | None = None) -> Any:
    """Load ``path``'s ``data.pkl`` with the class ``solution``; each ``find_class`` call is
    listed in ``asked`` and, when it raised, in ``refused``."""
    asked = [] if asked is None else asked
    refused = [] if refused is None else refused
    with zipfile.ZipFile(path) as archive:
        data, prefix = _pickled(archive)
        unpickler = solution(io.BytesIO(data))
        answer = unpickler.find_class

        def find_class(module, name):
            asked.append(f"{module}.{name}")
            try:
                return answer(module, name)
            except BaseException:
                refused.append(f"{module}.{name}")
                raise

        unpickler.find_class = find_class
        unpickler.persistent_load = _storages(archive, prefix)
        return unpickler.load()


class _Views(SafeUnpickler):
    """The reference, recording each tensor's view: the key is filled in afterwards."""

    def __init__(self, file):
        super().__init__(file)
        self.views: list[tuple] = []

    def rebuild_tensor(self, storage, storage_offset, size, stride, *rest):
        self.views.append((storage, storage_offset, tuple(size), tuple(stride)))
        return len(self.views) - 1  # the state dict then maps each key to its view's number


def views_of(path: Path) -> dict[str, tuple]:
    """key → ``(storage, storage_offset, size, stride)``, as the file's pickle gives them."""
    recorder: list[_Views] = []

    class Recorder(_Views):
        def __init__(self, file):
            super().__init__(file)
            recorder.append(self)

    numbers = unpickle(Recorder, path)
    return {key: recorder[0].views[n] for key, n in numbers.items()}


# ----- the cases ------------------------------------------------------------------------------
class _Text(str):
    """A case's description, printed as it is (not quoted) in a verdict."""

    def __repr__(self) -> str:
        return str(self)


_TORCH = {"float32": torch.float32, "float64": torch.float64, "float16": torch.float16,
          "int64": torch.int64, "int32": torch.int32, "int8": torch.int8,
          "uint8": torch.uint8, "bool": torch.bool, "bfloat16": torch.bfloat16}


def _values(dtype: str, shape: tuple[int, ...], seed: int) -> torch.Tensor:
    rng = np.random.default_rng(seed)
    if dtype == "bool":
        array = rng.random(shape) > 0.5
    elif dtype.startswith(("int", "uint")):
        array = rng.integers(0 if dtype == "uint8" else -100, 100, shape)
    else:
        array = rng.standard_normal(shape)
    return torch.from_numpy(np.asarray(array)).to(_TORCH[dtype])


def tensor_for(dtype: str, kind: str, rows: int, cols: int, seed: int) -> torch.Tensor:
    """``kind``: "plain" ``[rows, cols]``, "vector" ``[cols]``, "transposed" (``.t()`` of ``[cols, rows]``: stride
    ``(1, rows)``), "rows" (``[1:]`` of ``[rows + 1, cols]``: ``storage_offset`` = cols),
    "scalar" (0-d)."""
    if kind == "scalar":
        return _values(dtype, (), seed)
    if kind == "vector":
        return _values(dtype, (cols,), seed)
    if kind == "transposed":
        return _values(dtype, (cols, rows), seed).t()
    if kind == "rows":
        return _values(dtype, (rows + 1, cols), seed)[1:]
    return _values(dtype, (rows, cols), seed)


def _describe(entries: list[tuple]) -> str:
    parts = []
    for key, dtype, kind, rows, cols, _ in entries:
        made = {"plain": f"[{rows}, {cols}]", "scalar": "0-d", "vector": f"[{cols}]",
                "transposed": f"[{cols}, {rows}].t(): stride ({1}, {rows})",
                "rows": f"[{rows + 1}, {cols}][1:]: storage_offset {cols}"}[kind]
        parts.append(f"{key!r}: {dtype} {made}")
    return "torch.save({" + ", ".join(parts) + "})"


def _case(entries: list[tuple]) -> dict:
    return {"file": _Text(_describe(entries)), "_entries": entries, "_payload": None}


def payload_case() -> dict:
    """The chapter's file: a state dict whose ``fc.bias`` unpickles by calling ``io.open``."""
    return {"file": _Text("torch.save({'fc.weight': float32 [5, 96], 'fc.bias': Payload()}): "
                          "data.pkl asks for io.open, then calls it"),
            "_entries": [("fc.weight", "float32", "plain", 5, 96, 0)], "_payload": "call"}


def planted_import_case() -> dict:
    """The payload file with its ``io.open`` renamed to ``opened`` of a module planted for the
    run (:class:`PlantedModule`): importing that module runs its code."""
    return {"file": _Text("the payload file, its data.pkl asking for planted.opened instead: "
                          "a module whose import runs code (it sets a flag)"),
            "_entries": [("fc.weight", "float32", "plain", 5, 96, 0)], "_payload": "import"}


def sibling_case() -> dict:
    """The payload file asking for ``collections._sys`` (the module ``sys``) instead: a name
    of an allowed module that a state dict does not use. An allow-list by module
    (``if module == "collections": return getattr(collections, name)``) answers it."""
    return {"file": _Text("the payload file, its data.pkl asking for collections._sys "
                          "instead: the module sys, reached through an allowed module"),
            "_entries": [("fc.weight", "float32", "plain", 5, 96, 0)], "_payload": "sibling"}


def torch_case(name: str = "torch.serialization.save") -> dict:
    """A state dict whose ``fc.bias`` unpickles by calling ``torch.save`` under ``name``
    (``torch.serialization.save`` as pickle writes it, or ``torch.save``, a rename): a name
    inside the torch package that a state dict does not use. An allow-list of the package
    (``module.startswith("torch")``) answers it, and the pickle writes a file."""
    return {"file": _Text(f"the payload file, its data.pkl asking for {name} instead: a "
                          "callable inside the torch package that writes a file"),
            "_entries": [("fc.weight", "float32", "plain", 5, 96, 0)], "_payload": name}


def _rename_global(path: Path, old: str, new: str) -> None:
    """Rewrite ``path``'s ``data.pkl`` so its ``GLOBAL`` for ``old`` names ``new`` (protocol 2
    writes a global as text, ``c<module>\\n<name>\\n``)."""
    def opcode(qualified: str) -> bytes:
        module, name = qualified.rsplit(".", 1)
        return f"c{module}\n{name}\n".encode()

    with zipfile.ZipFile(path) as archive:
        entries = [(info, archive.read(info)) for info in archive.infolist()]
    with zipfile.ZipFile(path, "w") as archive:
        for info, data in entries:
            if info.filename.endswith("/data.pkl"):
                assert data.count(opcode(old)) == 1, "the payload's GLOBAL"
                data = data.replace(opcode(old), opcode(new))
            archive.writestr(info, data)


#: the crafted view: storage_offset 2, size (2, 3), stride (3, 1) over a storage of 6
#: elements; its last element would be element 2 + 3 + 2 = 7 (a short overrun, so a reader
#: that reads it without a check reads a few bytes past the buffer, not a page fault)
BOUNDS_VIEW = (6, 2, (2, 3), (3, 1))


class _OutOfBounds:
    """A tensor pickled as :data:`BOUNDS_VIEW`, a view reaching past its storage, as a
    crafted file can write it (``torch.save`` never would)."""

    def __reduce__(self):
        numel, offset, size, stride = BOUNDS_VIEW
        storage = torch.arange(float(numel))._typed_storage()
        return (torch._utils._rebuild_tensor_v2,
                (storage, offset, size, stride, False, OrderedDict()))


def bounds_case() -> dict:
    """A crafted file whose ``fc.weight`` is a view reaching past its storage: a right
    ``rebuild_tensor`` refuses it (minidl's reader raises ``CorruptFileError``)."""
    numel, offset, size, stride = BOUNDS_VIEW
    return {"file": _Text(f"a crafted data.pkl: 'fc.weight' a view of a {numel}-element "
                          f"storage with storage_offset {offset}, size {list(size)}, stride "
                          f"{stride}: it reaches past the storage"),
            "_entries": [], "_payload": "bounds"}


def fixed_cases() -> list[dict]:
    """Always tried first: every planted slip fails on them whatever hypothesis draws (the
    first holds no dtype narrower than float32, so a float32 reading of it raises nothing)."""
    return [_case([("bn.running_var", "float64", "vector", 1, 3, 1),
                   ("fc.weight", "float32", "transposed", 3, 4, 2),
                   ("k.weight", "float32", "rows", 2, 4, 3),
                   ("bn.num_batches_tracked", "int64", "scalar", 1, 1, 5)]),
            _case([("emb.weight", "float16", "plain", 2, 3, 4),
                   ("mask", "bool", "transposed", 2, 3, 6)]),
            _case([("fc.weight", "bfloat16", "transposed", 3, 2, 7)]),
            payload_case(), planted_import_case(), sibling_case(), torch_case(),
            torch_case("torch.save"), bounds_case()]


def _cases() -> st.SearchStrategy:
    entry = st.tuples(st.sampled_from(list(_TORCH)),
                      st.sampled_from(["plain", "vector", "transposed", "rows", "scalar"]),
                      st.integers(1, 4), st.integers(1, 4), st.integers(0, 1000))
    return st.lists(entry, min_size=1, max_size=3).map(
        lambda drawn: _case([(f"t{i}", *e) for i, e in enumerate(drawn)]))


def _state_dict(case: dict, marker: Path) -> dict:
    saved = {key: tensor_for(dtype, kind, rows, cols, seed)
             for key, dtype, kind, rows, cols, seed in case["_entries"]}
    if case["_payload"] == "bounds":
        return {"fc.weight": _OutOfBounds()}
    if case["_payload"]:  # the planted-module file renames its global after saving
        torch_named = case["_payload"].startswith("torch")
        saved["fc.bias"] = (_TorchPayload if torch_named else _Payload)(marker)
    return saved


def _close(got: Any) -> None:
    """Close the file a payload that ran left open (no ResourceWarning in a page)."""
    if isinstance(got, Mapping):
        for value in got.values():
            if isinstance(value, io.IOBase):
                value.close()


#: the planted names the reader's code imported during one ``find_failure`` (the import
#: machinery under a lookup also breaks the watch's rules: see :class:`_Exercise`)
_IMPORTED: list[str] = []

# ----- lookups by name ------------------------------------------------------------------------
#: what a lookup by a name from the file may reach: the names a state dict's pickle asks for
LOOKUP_PAIRS = frozenset({("collections", "OrderedDict"), ("torch._utils", "_rebuild_tensor_v2")}
                         | {("torch", name) for name in STORAGE_DTYPES})
#: the lookups off :data:`LOOKUP_PAIRS` the reader's methods made during one ``find_failure``
_LOOKED_UP: list[str] = []


class LookupOffList(Exception):
    """A ``getattr`` in the reader's methods that reached a name off :data:`LOOKUP_PAIRS`."""


def _lookup_ok(obj: Any, name: Any) -> bool:
    if not isinstance(name, str):
        return False
    if isinstance(obj, ModuleType):
        return (obj.__name__, name) in LOOKUP_PAIRS
    return not name.startswith("_") and name not in STORAGE_NAMES | INTROSPECTION_NAMES


def guarded_getattr(obj: Any, name: Any, *default: Any) -> Any:
    """``getattr`` as the reader's methods see it (the Python docs' "Restricting Globals"
    ``getattr(builtins, name)`` after an allow-list): a module's attribute only for a name a
    state dict uses (:data:`LOOKUP_PAIRS`), another object's only when public; any other
    lookup is listed and raises :class:`LookupOffList`."""
    if _lookup_ok(obj, name):
        return getattr(obj, name, *default)
    owner = obj.__name__ if isinstance(obj, ModuleType) else type(obj).__name__
    _LOOKED_UP.append(f"{owner}.{name}")
    raise LookupOffList(f"getattr reached {owner}.{name}, a name off the allow-list")


def guarded_hasattr(obj: Any, name: Any) -> bool:
    """``hasattr`` as the reader's methods see it: False for any name
    :func:`guarded_getattr` would not give."""
    return _lookup_ok(obj, name) and hasattr(obj, name)


def guarded(solution: type) -> type:
    """The reader's class with ``getattr`` and ``hasattr`` in its methods' globals replaced by
    the guards (the same code: the watch still reads it as the reader's)."""
    methods = {}
    for key, value in vars(solution).items():
        if isinstance(value, FunctionType):
            names = dict(value.__globals__, getattr=guarded_getattr, hasattr=guarded_hasattr)
            method = FunctionType(value.__code__, names, value.__name__, value.__defaults__,
                                  value.__closure__)
            method.__kwdefaults__, method.__qualname__ = value.__kwdefaults__, value.__qualname__
            methods[key] = method
    return type(solution.__name__, (solution,), methods) if methods else solution


def unpickle_run(solution, case: dict) -> dict:
    """``torch.save`` the case's state dict, load it with the reader's class and with minidl's
    reader; a payload file records whether its global ran (``_ran``: its marker file exists),
    the planted-module file whether the module was imported (``_imported``)."""
    with tempfile.TemporaryDirectory() as folder:
        folder = Path(folder)
        path, marker = folder / "file.pt", folder / "payload_ran.txt"
        torch.save(_state_dict(case, marker), path)
        out = {"_asked": [], "_refused": [], "_raised": None, "_got": None,
               "_global": "io.open", "_imported": False}
        planted = PlantedModule()
        if case["_payload"] == "import":
            out["_global"] = f"{planted.name}.opened"
            _rename_global(path, "io.open", out["_global"])
        if case["_payload"] == "sibling":
            out["_global"] = "collections._sys"
            _rename_global(path, "io.open", out["_global"])
        if (case["_payload"] or "").startswith("torch"):
            out["_global"] = case["_payload"]
            if out["_global"] != "torch.serialization.save":
                _rename_global(path, "torch.serialization.save", out["_global"])
        if not case["_payload"]:
            out["_want"] = read_torch_file(path)
            out["_views"] = views_of(path)
        try:
            with planted:
                out["_got"] = unpickle(guarded(solution), path, out["_asked"],
                                       out["_refused"])
        except Exception as err:  # noqa: BLE001 - a refusal is the payload file's answer
            if not (case["_payload"] or out["_refused"]):
                raise  # the reader's code failed: reported at the reader's line
            out["_raised"] = err
        out["_imported"] = planted.imported
        if planted.imported:
            _IMPORTED.append(out["_global"])
        out["_ran"] = marker.exists()
        _close(out["_got"])
    return out


# ----- the checks -----------------------------------------------------------------------------
def _lookups_off_list(solution, case, outputs, watch) -> str | None:
    if not _LOOKED_UP:
        return None
    return (f"Your find_class looked up {_LOOKED_UP[0]} by a name from the file (getattr): "
            "a name a state dict does not use got past your allow-list. Compare the whole "
            "pair (module, name) with your list first; look up only a pair on it.")


def _refuses_out_of_bounds(solution, case, outputs, watch) -> str | None:
    if case["_payload"] != "bounds" or outputs["_raised"] is not None:
        return None
    numel, offset, size, stride = BOUNDS_VIEW
    last = offset + sum((n - 1) * s for n, s in zip(size, stride))
    return (f"Your rebuild_tensor returned fc.weight for a view that reaches past its "
            f"storage: storage_offset {offset}, size {list(size)}, stride {stride} end at "
            f"element {last}, and the storage holds {numel}. The missing piece is a bounds "
            "check: the values past the end are memory outside the file's data "
            "(as_strided checks nothing). Raise when offset + Σ (size[d] - 1)·stride[d] "
            "is not below the storage's element count, as minidl's reader does.")


def _refuses_payload(solution, case, outputs, watch) -> str | None:
    if case["_payload"] in (None, "bounds"):
        return None
    wanted, raised = outputs["_global"], outputs["_raised"]
    if outputs["_ran"] and wanted.startswith("torch"):
        return (f"The payload ran: data.pkl asks for {wanted} and your find_class answered "
                "it, so the pickle called it and wrote a file. It is inside the torch "
                "package, and so are torch.hub.load (downloads and runs code) and "
                "torch.utils.cpp_extension.load_inline (compiles it): trust only the exact "
                "(module, name) pairs a state dict uses.")
    if outputs["_ran"]:
        return (f"The payload ran: data.pkl asks for {wanted} (GLOBAL, then REDUCE) and your "
                "find_class returned it, so the pickle called it and created the marker "
                "file. Answer only the names a state dict uses; raise for any other.")
    if outputs["_imported"]:
        return _imported_text(wanted)
    if wanted in outputs["_refused"]:
        if isinstance(raised, UnsafeFileError):
            return None
        return (f"Your find_class refused {wanted} with {type(raised).__name__}; the "
                "exercise asks for UnsafeFileError, the error PytorchStore raises for an "
                "unsafe file and a caller catches by name (except UnsafeFileError). A "
                f"{type(raised).__name__} reads as a broken file or a bug, not a refusal.")
    if raised is None:
        return (f"The file asks for {wanted} and your load returned without an error: "
                f"find_class answered {wanted} instead of refusing it. A file asking for any "
                "other name must be refused whole: raise in find_class.")
    refused = [n for n in outputs["_refused"] if n != wanted]
    if refused:
        return _refused_text(refused[0])
    return (f"The load failed ({type(raised).__name__}), but not in find_class "
            f"for {wanted}: refuse it there, before the pickle can call it.")


def _imported_text(wanted: str) -> str:
    module = wanted.rsplit(".", 1)[0]
    return (f"Your find_class imported the module {module} before refusing {wanted}: the "
            "module's code ran on import (it set a flag). Looking a name up "
            "(super().find_class, importlib) imports its module, and importing runs the "
            "module's code, so a file can run code through a name you then refuse.")


def _refused_text(name: str) -> str:
    return (f"Your find_class refused {name}, which a state dict needs (every tensor's "
            "_rebuild_tensor_v2 call takes an OrderedDict of backward hooks, and each "
            "storage is named by its type, torch.FloatStorage, ...).")


def _needs_refused(solution, case, outputs, watch) -> str | None:
    if case["_payload"] or not outputs["_refused"]:
        return None
    return _refused_text(outputs["_refused"][0])


def _storage_type(storage) -> str:
    return next(n for n, d in STORAGE_DTYPES.items() if d == storage.dtype)


def _flat(storage: Storage) -> np.ndarray:
    """The storage's elements, in order (bfloat16 widened to float32, as the reference)."""
    count = len(storage.data) // (2 if storage.dtype == "bfloat16" else
                                  np.dtype(storage.dtype).itemsize)
    return SafeUnpickler.rebuild_tensor(None, storage, 0, (count,), (1,))


def _diagnosis(key: str, got: np.ndarray, view: tuple) -> str:
    """What a wrong array of ``key`` is: the storage read without the stride, from element 0,
    or with the stride taken as bytes."""
    storage, offset, size, stride = view
    flat = _flat(storage)
    numel = int(np.prod(size))
    in_order = flat[offset:offset + numel]
    if in_order.size == numel and np.array_equal(got, in_order.reshape(size)):
        contiguous = tuple(int(np.prod(size[d + 1:])) for d in range(len(size)))
        return (f" {key} is a view with stride {stride}, not the contiguous {contiguous}: "
                "your values are the storage's elements read in order from the offset. "
                "Element [i, j] is element offset + i·stride[0] + j·stride[1].")
    from_zero = SafeUnpickler.rebuild_tensor(None, storage, 0, size, stride)
    if offset and np.array_equal(got, from_zero):
        return (f" {key} starts at element {offset} of its storage (storage_offset "
                f"{offset}: rows of a larger tensor); your values start at element 0.")
    try:
        as_bytes = np.lib.stride_tricks.as_strided(flat[offset:], size, stride)
    except ValueError:
        as_bytes = None
    if as_bytes is not None and np.array_equal(got, as_bytes):
        return (" Those are the elements as_strided reads when given the stride in "
                "elements: its strides are in bytes (stride × itemsize).")
    return ""


def _number(value: Any) -> str:
    value = value.item()
    return f"{value:.6g}" if isinstance(value, float) else repr(value)


def _matches(solution, case, outputs, watch) -> str | None:
    if case["_payload"]:
        return None
    got, want, views = outputs["_got"], outputs["_want"], outputs["_views"]
    if not isinstance(got, Mapping):
        return (f"The load returned {type(got).__name__}; a state dict unpickles to a dict "
                "of arrays (its tensors are what your rebuild_tensor returned).")
    if sorted(map(str, got)) != sorted(want):
        return f"The load's keys are {sorted(map(str, got))}; the file holds {sorted(want)}."
    for key, expected in want.items():
        array = got[key]
        if not isinstance(array, np.ndarray):
            return (f"{key} is a {type(array).__name__}; rebuild_tensor returns a NumPy "
                    "array.")
        storage = views[key][0]
        if array.dtype != expected.dtype:
            return (f"{key} came back as {array.dtype}; its storage is torch."
                    f"{_storage_type(storage)}, so its bytes are {expected.dtype} elements: "
                    "read them with the dtype your find_class answered for that type "
                    "(storage.dtype).")
        if array.shape != expected.shape:
            return (f"{key} has shape {list(array.shape)}; the file's size says "
                    f"{list(expected.shape)}.")
        if not np.array_equal(array, expected):
            wrong = tuple(int(i) for i in np.argwhere(array != expected)[0])
            return (f"{key}[{', '.join(map(str, wrong))}] is {_number(array[wrong])}; "
                    f"minidl's reader gives {_number(expected[wrong])}."
                    + _diagnosis(key, array, views[key]))
    return None


def _cause(*needles: str):
    return lambda verdict: all(n in verdict.text for n in needles)


#: the watch's words for a lookup it cannot follow: a getattr whose name is not written
#: out, importlib, ``__import__``, a module's ``__dict__`` or ``vars()``, ``sys.modules``
_LOOKUPS = ("called getattr with a name", "called hasattr with a name", "importlib",
            "__import__", "reads __dict__", "called vars()", "the module sys",
            "imports sys", "reads modules")
_LOOKUP_TEXT = "looks its answer up by a name from the file"


def _lookup_text(rule_text: str) -> str | None:
    """The watch's verdict for a lookup by a name from the file (``getattr(collections,
    name)``, the Python docs' "Restricting Globals" pattern; ``importlib.import_module``),
    said as what it is and why the checker refuses it; None for any other rule."""
    if not any(w in rule_text for w in _LOOKUPS):
        return None
    return (f"Rule broken: your code {_LOOKUP_TEXT} outside SafeUnpickler's methods "
            "(importlib, or getattr in a function of its own). The checker keeps such "
            "lookups out: it cannot read which object one reaches, and from a module it "
            "reaches anything (collections._sys is sys); importlib imports, running the "
            "module's code. getattr(collections, name) in find_class, after the "
            "allow-list, is fine.")


HINTS = {
    "torch package": [
        "Of torch, a state dict's pickle asks only for torch._utils._rebuild_tensor_v2 "
        "and the storage types (torch.FloatStorage, ...): compare the whole pair "
        "(module, name) with those and raise UnsafeFileError for the rest of torch.",
    ],
    "any global": [
        "find_class is the only door to a callable: after your three answers, raise "
        "(UnsafeFileError) instead of super().find_class(module, name).",
    ],
    "error type": [
        "Raise UnsafeFileError (imported in the cell) for every name you do not answer: "
        "a caller tells a refused file from a broken one by that type.",
    ],
    "imported first": [
        "Decide from the two strings alone: compare (module, name) with your allow-list "
        "and raise before anything looks the name up; super().find_class imports first.",
    ],
    "refused": [
        "List what data.pkl asks for (pickle_calls above): OrderedDict, "
        "_rebuild_tensor_v2 and a storage type per dtype. Answer all three kinds.",
    ],
    "dtype": [
        "np.frombuffer(storage.data, storage.dtype): storage.dtype is your find_class's "
        "answer for torch.DoubleStorage, torch.HalfStorage, ... (STORAGE_DTYPES[name]).",
    ],
    "stride": [
        "A transposed view's elements are not in order in its storage: index them, "
        "offset + i·stride[0] + j·stride[1] (np.indices(size) gives every i, j).",
    ],
    "offset": [
        "The storage holds the whole tensor the view was cut from: start at element "
        "storage_offset, not at 0.",
    ],
    "pickle module": [
        "The module pickle holds the unsafe loader itself (pickle.loads, and an "
        "Unpickler's own find_class, import any name a file gives), so the checker keeps "
        "it out of your methods. You need none of it: raise UnsafeFileError.",
    ],
    "lookup by name": [
        "Once (module, name) is on your allow-list you know the object: return it "
        "(return OrderedDict), or look the pair up in a dict you write, "
        "{(\"collections\", \"OrderedDict\"): OrderedDict}[module, name].",
    ],
    "lookup off the list": [
        "Decide from the pair (module, name): module == \"collections\" alone lets "
        "collections._sys (the module sys) through. Check both strings, then look up.",
    ],
    "bfloat16": [
        "NumPy has no bfloat16. Its 16 bits are the top half of a float32: read the bytes "
        "as uint16, widen to uint32, shift left by 16 and view as float32 (exact).",
    ],
    "bounds": [
        "A file can say any offset, size and stride. Before reading, check that the "
        "view's last element, offset + Σ (size[d] - 1)·stride[d], is inside the storage "
        "(len(storage.data) // itemsize), and raise if not.",
    ],
    "bytes": [
        "np.lib.stride_tricks.as_strided takes strides in bytes: stride × flat.itemsize "
        "(or index the elements instead: indexing cannot read past the storage).",
    ],
}

_CAUSES = [
    ("lookup off the list", _cause("a name a state dict does not use")),
    ("torch package", _cause("inside the torch package")),
    ("any global", _cause("The payload ran")),
    ("any global", _cause("instead of refusing it")),
    ("imported first", _cause("before refusing")),
    ("error type", _cause("the exercise asks for UnsafeFileError")),
    ("refused", _cause("which a state dict needs")),
    ("dtype", _cause("came back as")),
    ("stride", _cause("read in order from the offset")),
    ("offset", _cause("your values start at element 0")),
    ("bytes", _cause("its strides are in bytes")),
    ("bounds", _cause("reaches past its storage")),
    ("bfloat16", _cause("bfloat16")),
    ("pickle module", lambda v: "your code uses the module pickle" in v.text
     or "your code imports pickle" in v.text),
    ("lookup by name", _cause(_LOOKUP_TEXT)),
]


# ----- planted slips --------------------------------------------------------------------------
class AnyGlobal(SafeUnpickler):
    def find_class(self, module, name):
        if (module, name) == ("torch._utils", "_rebuild_tensor_v2"):
            return self.rebuild_tensor
        if module == "torch" and name in STORAGE_DTYPES:
            return STORAGE_DTYPES[name]
        return super(SafeUnpickler, self).find_class(module, name)  # pickle's: imports any


class TorchTrusted(SafeUnpickler):
    """Trusts the torch package: any ``torch`` / ``torch.*`` name goes to pickle's lookup."""

    def find_class(self, module, name):
        if module == "torch" or module.startswith("torch."):
            if (module, name) == ("torch._utils", "_rebuild_tensor_v2") or (
                    module == "torch" and name in STORAGE_DTYPES):
                return super().find_class(module, name)
            return super(SafeUnpickler, self).find_class(module, name)
        return super().find_class(module, name)


class KeyErrorRefusal(SafeUnpickler):
    def find_class(self, module, name):
        try:
            return super().find_class(module, name)
        except UnsafeFileError:
            raise KeyError(f"{module}.{name}") from None


class LookedUpFirst(SafeUnpickler):
    """Looks the name up (importing its module), then refuses what is not allowed."""

    def find_class(self, module, name):
        super(SafeUnpickler, self).find_class(module, name)  # pickle's lookup: imports
        return super().find_class(module, name)  # then the allow-list


class NoOrderedDict(SafeUnpickler):
    def find_class(self, module, name):
        if (module, name) == ("collections", "OrderedDict"):
            raise UnsafeFileError("collections.OrderedDict refused")
        return super().find_class(module, name)


class Float32Always(SafeUnpickler):
    def rebuild_tensor(self, storage, storage_offset, size, stride, *rest):
        flat = np.frombuffer(storage.data, np.float32)
        index = storage_offset + sum(i * s for i, s in zip(np.indices(size), stride))
        return np.array(flat[index])


class OffsetIgnored(SafeUnpickler):
    def rebuild_tensor(self, storage, storage_offset, size, stride, *rest):
        flat = np.frombuffer(storage.data, storage.dtype)
        return np.array(flat[sum(i * s for i, s in zip(np.indices(size), stride))])


class StrideIgnored(SafeUnpickler):
    """burn's reading: the elements in order from the offset (``args[3]`` unused)."""

    def rebuild_tensor(self, storage, storage_offset, size, stride, *rest):
        flat = np.frombuffer(storage.data, storage.dtype)
        return flat[storage_offset:storage_offset + int(np.prod(size))].reshape(size)


class BFloat16Unread(SafeUnpickler):
    """Reads every storage with ``np.frombuffer``: NumPy has no ``"bfloat16"`` dtype."""

    def rebuild_tensor(self, storage, storage_offset, size, stride, *rest):
        flat = np.frombuffer(storage.data, storage.dtype)
        index = storage_offset + sum(i * s for i, s in zip(np.indices(size), stride))
        return np.array(flat[index])


class AsStridedUnchecked(SafeUnpickler):
    """Right on every view ``torch.save`` writes, but reads a crafted one past its
    storage: ``as_strided`` with no bounds check."""

    def rebuild_tensor(self, storage, storage_offset, size, stride, *rest):
        if storage.dtype == "bfloat16":
            bits = np.frombuffer(storage.data, np.uint16).astype(np.uint32)
            flat = (bits << 16).view(np.float32)
        else:
            flat = np.frombuffer(storage.data, storage.dtype)
        strides = [s * flat.itemsize for s in stride]
        return np.lib.stride_tricks.as_strided(flat[storage_offset:], size, strides).copy()


class StrideAsBytes(SafeUnpickler):
    def rebuild_tensor(self, storage, storage_offset, size, stride, *rest):
        flat = np.frombuffer(storage.data, storage.dtype)
        view = np.lib.stride_tricks.as_strided(flat[storage_offset:], size, stride)
        return view.copy()


#: name → (slip, the verdict kind it gets, the cause whose hint it opens)
PLANTED = {
    "any other global answered": (AnyGlobal, "check", "any global"),
    "the torch package trusted": (TorchTrusted, "check", "torch package"),
    "refused with KeyError": (KeyErrorRefusal, "check", "error type"),
    "name looked up before the refusal": (LookedUpFirst, "check", "imported first"),
    "OrderedDict refused": (NoOrderedDict, "check", "refused"),
    "dtype hard-coded as float32": (Float32Always, "check", "dtype"),
    "storage_offset ignored": (OffsetIgnored, "check", "offset"),
    "stride ignored (burn's reading)": (StrideIgnored, "check", "stride"),
    "as_strided given the stride in elements": (StrideAsBytes, "check", "bytes"),
    "as_strided with no bounds check": (AsStridedUnchecked, "check", "bounds"),
    "bfloat16 read with np.frombuffer": (BFloat16Unread, "error", "bfloat16"),
}


class _Exercise(CauseHints):
    """The import a lookup makes runs Python's import machinery under the reader's
    ``find_class``, which the watch reports as a broken rule (``locals()``) before the checks
    see the planted module's flag: that verdict becomes the flag's. ``getattr`` in the
    class's methods is :func:`guarded_getattr` (``getattr(collections, name)`` after the
    allow-list passes); a lookup the watch cannot follow elsewhere (importlib, a getattr in
    a function of the reader's own) stays refused, said as what it is."""

    def find_failure(self, solution):  # noqa: D102
        _IMPORTED.clear()
        _LOOKED_UP.clear()
        verdict = super().find_failure(solution)
        if verdict is not None and verdict.kind == "rule" and not _IMPORTED:
            head, _, site = verdict.text.partition("\n")
            said = _lookup_text(head)
            if said is not None:  # a lookup by name: say so, then its cause's hint
                verdict.text = said + (f"\n{site}" if site else "")
                self._use_cause("lookup by name")
        if verdict is not None and verdict.kind == "rule" and _IMPORTED:
            site = verdict.text.split("\n", 1)[1] if "\n" in verdict.text else ""
            verdict.kind, verdict.rule = "check", None
            verdict.text = _imported_text(_IMPORTED[0]) + (f"\n{site}" if site else "")
            self._use_cause("imported first")
        return verdict

    def _use_cause(self, name: str) -> None:
        """Open the hint ladder of the cause ``name`` for the verdict just found."""
        self.cause = name
        self.hint_ladder = next(h for n, _, h in self._causes if n == name)
        self.hints_opened = self._opened.setdefault(name, [])


def exercise(max_examples: int = 8) -> CauseHints:
    """The checker for the reader's ``SafeUnpickler`` class."""
    return _Exercise(
        "a safe unpickler for .pt files",
        cases=_cases(),
        run=unpickle_run,
        references=[],
        checks=[_lookups_off_list, _refuses_payload, _refuses_out_of_bounds, _needs_refused,
                _matches],
        rules=Rules(helpers=[guarded_getattr, guarded_hasattr]),
        hints=["find_class answers three kinds of names and raises for the rest; "
               "rebuild_tensor reads storage.data as storage.dtype elements and picks the "
               "view's: offset, then stride per dimension."],
        causes=[(name, test, HINTS[name]) for name, test in _CAUSES],
        reference_solution=SafeUnpickler,
        examples=fixed_cases(),
        max_examples=max_examples,
        order=("file",),
    )

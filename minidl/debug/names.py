"""Readable names for Python frames: the symbol names of this book's debugger.

lldb prints ``<burn_flex::backend::Flex as FloatTensorOps<Flex>>::float_matmul``; we print
short, searchable names built from the *running* code:

==========================  =================================  ===========================
code that runs              example name                       why
==========================  =================================  ===========================
backend op (classmethod)    ``Flex.float_matmul``              the runtime class ``cls``:
                            ``Dispatch.linear``                a ModuleOps default running
                            ``Autodiff[Flex].float_matmul``    on Dispatch is
                                                               ``Dispatch.linear``, as
                                                               burn's ``<Dispatch as
                                                               ModuleOps>::linear``
generic function of ``B``   ``linear.linear[Dispatch]``        burn's
(first parameter ``B``)                                        ``linear::linear::<Dispatch>``
module-level function       ``module.linear``,                 last module component +
                            ``module.linear_impl``             function (burn's
                                                               ``tensor::module::linear``)
method                      ``Linear.forward``                 the runtime type of ``self``
numba kernel                ``kernel gemm_f32 [numba]``        the dispatcher's Python entry
==========================  =================================  ===========================

The module also shortens values for backtraces (``<f32[4,4] flex>``, ``<ad f32[4,2]>``) and
sorts frames into the layers (ARCHITECTURE.md, "The layers") for the path diagrams.
"""

from __future__ import annotations

import linecache
import os
import sysconfig
import types
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from minidl.backend import ops_protocols

__trace_hide__ = True

#: The folder that holds the ``minidl`` package: paths are printed relative to it.
PACKAGE_DIR = Path(__file__).resolve().parent.parent
ROOT_DIR = PACKAGE_DIR.parent

#: Classes whose default methods a backend inherits (the protocol families).
PROTOCOLS = tuple(proto.__name__ for proto in ops_protocols())

_DTYPES = {
    "float16": "f16", "bfloat16": "bf16", "float32": "f32", "float64": "f64", "int8": "i8",
    "int16": "i16", "int32": "i32", "int64": "i64", "uint8": "u8", "bool": "bool",
}

_EXTERNAL_PREFIXES = tuple(
    {os.path.realpath(p) for p in (sysconfig.get_paths().get(k) for k in ("stdlib", "platstdlib", "purelib", "platlib")) if p}
)


def short_dtype(dtype) -> str:
    """``float32`` → ``f32``, ``int64`` → ``i64`` (the names lldb users read in burn)."""
    value = getattr(dtype, "value", None)  # minidl's DType enum: DType.F32.value == "float32"
    name = value if isinstance(value, str) else getattr(dtype, "name", None) or str(dtype)
    return _DTYPES.get(name, name)


def _shape(shape) -> str:
    return "[" + ",".join(str(int(d)) for d in shape) + "]"


def describe(value, tag: str | None = None, width: int = 40) -> str:
    """A short form of ``value`` for a backtrace's argument list.

    Arrays and tensors become ``<dtype[shape] where>``: ``<f32[4,4] flex>`` for a primitive of
    the backend ``tag``, ``<f32[4,4] flex ad>`` for a DispatchTensor on an autodiff device,
    ``<ad f32[4,2]>`` for an AutodiffTensor, ``<Tensor f32[4,4] flex>`` for a Tensor. Classes
    print their name; anything else its ``repr``, cut to ``width`` characters.
    """
    if isinstance(value, np.ndarray):
        where = f" {tag}" if tag else ""
        return f"<{short_dtype(value.dtype)}{_shape(value.shape)}{where}>"
    tname = type(value).__name__
    if tname == "AutodiffTensor":
        return f"<ad {short_dtype(value.dtype)}{_shape(value.shape)}>"
    device = getattr(value, "device", None)
    if device is not None and hasattr(value, "shape") and hasattr(value, "dtype") and hasattr(device, "kind"):
        where = device.kind + (" ad" if device.is_autodiff() else "")
        prefix = "" if tname == "DispatchTensor" else f"{tname} "
        try:
            return f"<{prefix}{short_dtype(value.dtype)}{_shape(value.shape)} {where}>"
        except Exception:  # a half-built tensor: fall back to its type
            return f"<{tname}>"
    if isinstance(value, type):
        return value.__name__
    if isinstance(value, list | tuple) and value and any(hasattr(v, "shape") for v in value):
        inner = ", ".join(describe(v, tag, width) for v in value[:4])
        more = ", …" if len(value) > 4 else ""
        return f"[{inner}{more}]" if isinstance(value, list) else f"({inner}{more})"
    try:
        text = repr(value)
    except Exception:
        text = f"<{tname}>"
    if len(text) > width:
        text = text[: width - 1] + "…"
    return text


def display_path(filename: str) -> str:
    """``minidl/backends/flex/ops.py`` for files of the package; relative to the working
    directory when below it; the name as given otherwise (``<stdin>``, notebook cells)."""
    if filename.startswith("<"):
        return filename
    full = os.path.realpath(filename)
    for base in (str(ROOT_DIR), os.getcwd()):
        if full.startswith(base + os.sep):
            return os.path.relpath(full, base)
    return filename


def def_line(code: types.CodeType) -> int:
    """The line of the ``def`` of ``code`` (``co_firstlineno`` is the first decorator's)."""
    line = code.co_firstlineno
    for offset in range(0, 12):
        text = linecache.getline(code.co_filename, line + offset).lstrip()
        if text.startswith(("def ", "async def ")):
            return line + offset
        if not text.startswith("@") and offset:
            break
    return line


def kernel_name(name: str) -> str:
    """The frame name of a numba kernel: ``kernel gemm_f32 [numba]``."""
    return f"kernel {name} [numba]"


@dataclass(frozen=True)
class CodeInfo:
    """What naming needs to know about one code object (computed once, then cached).

    ``kind`` is ``"cls"`` (classmethod: name from the runtime ``cls``), ``"self"`` (method:
    name from ``type(self)``), ``"generic"`` (function of a backend ``B``), ``"func"``,
    ``"kernel"`` (numba dispatcher entry) or ``"skip"`` (hidden or third-party code).
    """

    kind: str
    func: str  # function name, or the whole static name for "func"
    owner: str  # class that holds the code ("ModuleOps", "Linear"), or the module's short name
    path: str
    line: int
    in_package: bool

    @property
    def is_default(self) -> bool:
        """The code is a protocol default method (``ModuleOps.linear`` and friends)."""
        return self.kind == "cls" and self.owner in PROTOCOLS


_CACHE: dict[types.CodeType, CodeInfo] = {}


def code_info(code: types.CodeType, frame: types.FrameType) -> CodeInfo:
    """Classify ``code`` (running in ``frame``) for naming; cached per code object."""
    info = _CACHE.get(code)
    if info is None:
        info = _classify(code, frame)
        _CACHE[code] = info
    return info


_KERNELS: dict[types.CodeType, CodeInfo] = {}


def kernel_info(code: types.CodeType, frame: types.FrameType) -> CodeInfo:
    """The :class:`CodeInfo` of a numba kernel entered through its dispatcher (the Python
    code of the jitted function, seen on numba's synthesized frame)."""
    info = _KERNELS.get(code)
    if info is None:
        full = os.path.realpath(code.co_filename)
        module = (frame.f_globals.get("__name__") or "").rsplit(".", 1)[-1]
        info = CodeInfo("kernel", code.co_name, module, display_path(code.co_filename), def_line(code),
                        full.startswith(str(PACKAGE_DIR) + os.sep))
        _KERNELS[code] = info
    return info


def _classify(code: types.CodeType, frame: types.FrameType) -> CodeInfo:
    filename = code.co_filename
    full = os.path.realpath(filename) if not filename.startswith("<") else filename
    in_package = full.startswith(str(PACKAGE_DIR) + os.sep)
    path, line = display_path(filename), def_line(code)
    glob = frame.f_globals
    if glob.get("__trace_hide__") or (not in_package and full.startswith(_EXTERNAL_PREFIXES)) \
            or filename.startswith("<frozen"):
        return CodeInfo("skip", code.co_name, "", path, line, in_package)
    module = glob.get("__name__", "") or ""
    short = module.rsplit(".", 1)[-1]
    qual = code.co_qualname
    params = code.co_varnames[: code.co_argcount]
    in_class = "." in qual and "<locals>" not in qual.rsplit(".", 1)[0]
    owner = qual.rsplit(".", 1)[0] if in_class else short
    if in_class and params and params[0] == "cls":
        return CodeInfo("cls", code.co_name, owner, path, line, in_package)
    if in_class and params and params[0] == "self":
        return CodeInfo("self", code.co_name, owner, path, line, in_package)
    if in_class:  # a static method: the class names it well enough
        return CodeInfo("func", qual, owner, path, line, in_package)
    if params and params[0] == "B" and in_package:
        return CodeInfo("generic", f"{short}.{qual}", short, path, line, in_package)
    return CodeInfo("func", f"{short}.{qual}" if short and short != "__main__" else qual, short, path, line, in_package)


def _local(frame: types.FrameType, name: str):
    try:
        return frame.f_locals.get(name)
    except Exception:  # pragma: no cover - f_locals of an odd frame
        return None


def frame_name(frame: types.FrameType, info: CodeInfo) -> tuple[str, object]:
    """The qualified name of a frame, and the backend class it runs for (or ``None``)."""
    if info.kind == "cls":
        cls = _local(frame, "cls")
        owner = getattr(cls, "__name__", info.owner)
        return f"{owner}.{info.func}", cls if isinstance(cls, type) else None
    if info.kind == "self":
        return f"{type(_local(frame, 'self')).__name__}.{info.func}", None
    if info.kind == "generic":
        backend = _local(frame, "B")
        return f"{info.func}[{getattr(backend, '__name__', '?')}]", backend if isinstance(backend, type) else None
    if info.kind == "kernel":
        return kernel_name(info.func), None
    return info.func, None


def backend_tag(cls) -> str | None:
    """The short device word for primitives of ``cls``: ``flex``, ``ndarray`` (``None`` if unknown)."""
    if cls is None:
        return None
    inner = getattr(cls, "inner_backend", None)  # Autodiff[Flex].inner_backend() is Flex
    try:
        inner = inner() if callable(inner) and not isinstance(inner, type) else inner
    except Exception:  # the abstract decorator class has no inner backend
        inner = None
    inner = inner if isinstance(inner, type) else None
    name = getattr(inner or cls, "name", None)
    if isinstance(name, str) and name.isidentifier() and name not in ("backend", "dispatch"):
        return name
    return None


def frame_args(frame: types.FrameType, info: CodeInfo, cls=None) -> str:
    """``name=<short value>, ...`` for the parameters of ``frame`` (not ``cls``/``B``)."""
    code = frame.f_code
    count = code.co_argcount + code.co_kwonlyargcount
    names = list(code.co_varnames[:count])
    flags = code.co_flags
    if flags & 0x04:  # *args
        names.append(code.co_varnames[count])
        count += 1
    if flags & 0x08:  # **kwargs
        names.append(code.co_varnames[count])
    if info.kind in ("cls", "generic") and names:
        names = names[1:]
    if info.kind == "kernel":
        return "…"
    try:
        local = frame.f_locals
    except Exception:  # pragma: no cover
        return "…"
    tag = backend_tag(cls)
    parts = []
    for name in names:
        if name not in local:
            parts.append(f"{name}=<unavailable>")
        elif name == "self":
            parts.append(f"self=<{type(local[name]).__name__}>")
        else:
            parts.append(f"{name}={describe(local[name], tag)}")
    return ", ".join(parts)


def layer_of(name: str, info: CodeInfo, cls=None) -> str:
    """Which layer (ARCHITECTURE.md, "The layers") a frame belongs to (``tensor``, ``dispatch``, ...)."""
    if info.kind == "kernel":
        return "kernel"
    if cls is not None:
        cname = cls.__name__
        module = getattr(cls, "__module__", "")
        if cname == "Dispatch" or module.startswith("minidl.dispatch"):
            return "dispatch"
        if cname.startswith("Autodiff") or module.startswith("minidl.autodiff"):
            return "autodiff"
        return "backend"
    path = info.path.replace(os.sep, "/")
    for prefix, layer in (
        ("minidl/nn/", "nn"), ("minidl/module/", "nn"), ("minidl/tensor/", "tensor"),
        ("minidl/dispatch/", "dispatch"), ("minidl/autodiff/", "autodiff"),
        ("minidl/backends/", "backend"), ("minidl/backend/", "backend"),
    ):
        if path.startswith(prefix):
            return layer
    return "user"

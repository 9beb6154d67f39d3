"""Where Flex's generated fusion kernels live: Python source files under the numba cache folder.

numba can cache a function only if it has a source file (``exec``-built functions cannot be
cached: numba keys its cache by the source file), so every generated kernel is written once to
``$NUMBA_CACHE_DIR/fusion_kernels/<name>.py`` and imported from there; ``cache=True`` then
holds across processes. A kernel's name says what it fused and ends with a hash of its
source, so the same source always lands in the same file and a file is never rewritten
(rewriting would change its timestamp and invalidate numba's cache).
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import sys
from pathlib import Path
from types import ModuleType

from minidl.fusion.events import STREAM_LISTENERS, emit

_LOADED: dict[str, ModuleType] = {}


def kernel_dir() -> Path:
    """``$NUMBA_CACHE_DIR/fusion_kernels`` (minidl's import sets the default)."""
    path = Path(os.environ["NUMBA_CACHE_DIR"]) / "fusion_kernels"
    path.mkdir(parents=True, exist_ok=True)
    return path


def kernel_name(prefix: str, kinds: list[str], source: str) -> str:
    """``<prefix>_<kinds...>_<hash>``: e.g. ``reduce_sum_div_sub_mul_sum_etc_1a2b3c4d``."""
    shown = kinds[:6] + (["etc"] if len(kinds) > 6 else [])
    digest = hashlib.sha1(source.encode()).hexdigest()[:10]
    return "_".join([prefix, *shown, digest])


def load(name: str, source: str) -> tuple[ModuleType, bool]:
    """Import the kernel module ``name`` (writing its file first if it does not exist).

    Returns the module and whether the file was written now (False: found on disk, from an
    earlier run or another process)."""
    module = _LOADED.get(name)
    if module is not None:
        return module, False
    path = kernel_dir() / f"{name}.py"
    created = not path.exists()
    if created:
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(source)
        os.replace(tmp, path)  # atomic: a parallel process sees the whole file or none
    modname = f"minidl_fusion_kernels.{name}"
    spec = importlib.util.spec_from_file_location(modname, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[modname] = module
    spec.loader.exec_module(module)
    _LOADED[name] = module
    if STREAM_LISTENERS:
        emit("kernel", name=name, created=created, path=str(path))
    return module, created

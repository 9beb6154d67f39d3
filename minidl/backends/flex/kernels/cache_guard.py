"""Drop numba's cached kernels of this folder when any of its sources changed.

numba keys a cached function on its own file only (that file's modification time and size).
A kernel that calls a helper in another module (every gemm and conv kernel calls the
intrinsics of ``gemm_micro``, for instance) has that helper compiled into it, so after an
edit of the helper's file alone, or a ``git pull`` that changes only it, numba would load
the old machine code and run it. The guard stamps the cache with a digest of every source
file of the folder; on import, a different digest removes the folder's cached kernels, so
each recompiles once on its next first call (nothing is compiled here).

No burn counterpart: Rust recompiles what depends on a changed module by itself.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

STAMP = "minidl-sources.sha1"


def sources_digest(folder: Path) -> str:
    """SHA-1 over the names and contents of the ``.py`` files of ``folder``, in name order."""
    digest = hashlib.sha1()
    for path in sorted(folder.glob("*.py")):
        digest.update(path.name.encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()


def cache_folder(source_file: Path, cache_root: str) -> Path:
    """Where numba caches the functions of ``source_file``: under ``cache_root``
    (``NUMBA_CACHE_DIR``) in ``<folder name>_<sha1 of the folder path>``, as numba's
    ``_UserProvidedCacheLocator`` names it, or ``__pycache__`` beside the file without one."""
    folder = os.path.dirname(os.path.abspath(source_file))
    if not cache_root:
        return Path(folder) / "__pycache__"
    hashed = hashlib.sha1(folder.encode()).hexdigest()
    return Path(cache_root) / f"{os.path.split(folder)[-1]}_{hashed}"


def guard(folder: Path, cache: Path) -> bool:
    """Remove the cached kernels (``*.nbi``/``*.nbc``) in ``cache`` unless its stamp matches
    the sources of ``folder``, then write the stamp. True when something was removed."""
    digest = sources_digest(folder)
    stamp = cache / STAMP
    try:
        if stamp.read_text() == digest:
            return False
    except OSError:
        pass
    removed = False
    if cache.is_dir():
        for entry in cache.iterdir():
            if entry.suffix in (".nbi", ".nbc"):
                entry.unlink(missing_ok=True)  # another process may be removing it too
                removed = True
    try:
        cache.mkdir(parents=True, exist_ok=True)
        partial = cache / f"{STAMP}.{os.getpid()}"
        partial.write_text(digest)
        partial.replace(stamp)  # atomic: a concurrent reader sees the old stamp or the new
    except OSError:
        pass  # a read-only cache: numba will not write there either
    return removed

"""Writing a file so that it is whole or absent: the one way every store and checkpoint saves.

A save that dies half-way (a full disk, a crash, the notebook's kernel restarted, Ctrl-C)
must never leave a torn file under the final name, nor destroy the file that was there. So
the bytes go to a temporary file in the same directory, are flushed to the disk
(``fsync``), and only then is the temporary renamed over the final name. A rename inside
one directory is atomic on POSIX: a reader sees the old file or the new one, never a mix.
The directory itself is fsynced last, so the rename survives a power cut too.

burn's file recorders do not do this: ``str2writer!`` removes an existing file and writes
the new one in place at its final path, so a failing save there loses the old file.
"""

from __future__ import annotations

import contextlib
import os
import secrets
from pathlib import Path

#: Temporary files of an unfinished save start with ``.`` and end with this.
TEMP_SUFFIX = ".tmp"


def temporary_name(path: Path) -> Path:
    """A fresh hidden name beside ``path`` for the bytes of a save in progress (unique per
    process and call, so two savers never share one)."""
    return path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}{TEMP_SUFFIX}")


def fsync_directory(directory: Path) -> None:
    """Flush ``directory``'s entries (a rename into it) to the disk, where the OS allows it."""
    with contextlib.suppress(OSError):
        fd = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def write_bytes_atomically(path: str | Path, data: bytes) -> Path:
    """Write ``data`` to ``path`` whole or not at all; returns the path.

    On any failure (``OSError`` for a full disk or a permission error, or an interrupt) the
    temporary file is removed and whatever was at ``path`` before is left as it was; the
    error is raised again. The new file gets the usual permissions (``0o666`` less the umask).
    """
    path = Path(path)
    tmp = temporary_name(path)
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    try:
        with os.fdopen(fd, "wb") as file:
            file.write(data)
            file.flush()
            os.fsync(file.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    fsync_directory(path.parent)
    return path


def write_text_atomically(path: str | Path, text: str) -> Path:
    """:func:`write_bytes_atomically` of ``text`` in UTF-8."""
    return write_bytes_atomically(path, text.encode("utf-8"))

"""The manifest that makes a checkpoint complete: written last, naming every file of the
checkpoint with its size and SHA-256 digest.

A checkpoint's files are each written whole or not at all (temporary name, ``fsync``,
rename: :mod:`minidl.store.atomic_file`), but a checkpoint is several files, and a save
killed between two of them leaves a model record with no optimizer state. The manifest
``checkpoint-{epoch}.json`` is written only after all of them, so its presence says "this
epoch is whole", and its sizes and digests catch a file replaced or damaged since.
burn-train's ``FileCheckpointer`` has no such mark (each record is one file there, written
in place); this is minidl's addition.
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

from minidl.store import StoreError
from minidl.store.atomic_file import write_text_atomically

MANIFEST_FORMAT = "minidl-checkpoint"
MANIFEST_VERSION = 1
_MANIFEST_NAME = re.compile(r"checkpoint-(\d+)\.json")


class IncompleteCheckpointError(StoreError):
    """A checkpoint that is missing a file, or whose files are not the ones its manifest
    names; the message says what is wrong and which epoch is the latest complete one."""


def manifest_path(directory: str | Path, epoch: int) -> Path:
    """Where the manifest of ``epoch``'s checkpoint lives."""
    return Path(directory) / f"checkpoint-{epoch}.json"


def digest(data: bytes) -> str:
    """The hex SHA-256 of ``data``."""
    return hashlib.sha256(data).hexdigest()


def write_manifest(directory: str | Path, epoch: int, files: dict[str, bytes]) -> Path:
    """Write the manifest of ``epoch`` naming ``files`` (file name -> the bytes written)."""
    entries = {name: {"bytes": len(data), "sha256": digest(data)} for name, data in sorted(files.items())}
    text = json.dumps({"format": MANIFEST_FORMAT, "version": MANIFEST_VERSION, "epoch": epoch,
                       "files": entries}, indent=2)
    return write_text_atomically(manifest_path(directory, epoch), text + "\n")


def recorded_epochs(directory: str | Path) -> list[int]:
    """The epochs that have a manifest in ``directory``, newest first (complete or not)."""
    directory = Path(directory)
    if not directory.is_dir():
        return []
    found = (_MANIFEST_NAME.fullmatch(p.name) for p in directory.iterdir())
    return sorted((int(m.group(1)) for m in found if m), reverse=True)


def problems(directory: str | Path, epoch: int, expected: list[str]) -> tuple[list[str], dict[str, bytes]]:
    """What is wrong with ``epoch``'s checkpoint (empty when it is complete) and, when
    nothing is, the verified bytes of each file (read once, so what was checked is what
    gets loaded). ``expected`` are the file names a complete checkpoint has."""
    directory = Path(directory)
    manifest = manifest_path(directory, epoch)
    if not manifest.exists():
        missing = [name for name in expected if not (directory / name).exists()]
        present = [name for name in expected if name not in missing]
        what = f"no manifest {manifest.name} (its save never finished)"
        if missing:
            what += f"; missing: {', '.join(missing)}"
        if present:
            what += f"; present but unconfirmed: {', '.join(present)}"
        return [what], {}
    try:
        record = json.loads(manifest.read_text(encoding="utf-8"))
        entries = record["files"]
        if record.get("format") != MANIFEST_FORMAT or record.get("epoch") != epoch:
            return [f"{manifest.name} is not the manifest of epoch {epoch}"], {}
    except (ValueError, KeyError, TypeError) as err:
        return [f"{manifest.name} cannot be read: {err}"], {}
    found: list[str] = []
    if sorted(entries) != sorted(expected):
        found.append(f"{manifest.name} names {sorted(entries)}, expected {sorted(expected)}")
    verified: dict[str, bytes] = {}
    for name, entry in sorted(entries.items()):
        path = directory / name
        if not path.exists():
            found.append(f"missing: {name}")
            continue
        data = path.read_bytes()
        if len(data) != entry["bytes"]:
            found.append(f"{name} has {len(data)} bytes, its manifest says {entry['bytes']}")
        elif digest(data) != entry["sha256"]:
            found.append(f"{name}'s SHA-256 differs from its manifest's (the file changed after the save)")
        else:
            verified[name] = data
    return found, (verified if not found else {})

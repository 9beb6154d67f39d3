"""How burn 0.22 builds each of the 21 tensor puzzles' ops, with the source lines that say so.

The puzzles appendix ends each solution with one line on burn's version of the op (composed in
burn-tensor from other ops, a backend op with a default, a required backend kernel, or none)
and a table of all 21. :data:`BURN_OPS` is that table's data; :func:`verify` checks every
``file:line`` against burn's source at :data:`TAG` (the mirror's bare git), and the tests check
that the chapter's lines and table name the same places.
"""

from __future__ import annotations

import subprocess
from dataclasses import dataclass
from pathlib import Path

#: The burn release the book reads.
TAG = "v0.22.0-pre.2"
#: The bare git mirror of tracel-ai/burn.
MIRROR = Path("/work/.mirror/tracel-ai+burn/repo")

#: Short file name → path in burn's repository (each short name is unique among these).
FILES = {
    "numeric.rs": "crates/burn-tensor/src/tensor/api/numeric.rs",
    "base.rs": "crates/burn-tensor/src/tensor/api/base.rs",
    "bool.rs": "crates/burn-tensor/src/tensor/api/bool.rs",
    "pad.rs": "crates/burn-tensor/src/tensor/api/pad.rs",
    "outer.rs": "crates/burn-tensor/src/tensor/linalg/outer.rs",
    "diag.rs": "crates/burn-tensor/src/tensor/linalg/diag.rs",
    "tensor.rs": "crates/burn-backend/src/backend/ops/tensor.rs",
    "mask.rs": "crates/burn-nn/src/modules/attention/mask.rs",
}

#: The ways burn builds an op.
HOWS = ("composed", "backend default", "backend kernel", "none")


@dataclass(frozen=True)
class BurnOp:
    """burn's op for one puzzle: its name (``""`` when burn has none), how it is built (one of
    :data:`HOWS`), and ``(short file, line, text on that line)`` places, the first one the
    table's."""

    op: str
    how: str
    places: tuple[tuple[str, int, str], ...] = ()

    @property
    def where(self) -> str:
        """``numeric.rs:883``: the table's place, ``""`` for none."""
        return f"{self.places[0][0]}:{self.places[0][1]}" if self.places else ""


BURN_OPS: dict[str, BurnOp] = {
    "ones": BurnOp("ones", "backend default", (
        ("tensor.rs", 72, "fn float_ones("), ("base.rs", 239, "pub fn ones<"))),
    "sum": BurnOp("sum", "backend kernel", (
        ("tensor.rs", 883, "fn float_sum("), ("numeric.rs", 319, "pub fn sum("))),
    "outer": BurnOp("linalg::outer", "composed", (
        ("outer.rs", 20, "pub fn outer<"), ("outer.rs", 75, "x * y"))),
    "diag": BurnOp("linalg::diag", "composed", (
        ("diag.rs", 19, "pub fn diag<"), ("diag.rs", 40, "flat.take::<1, D>(D - 2, indices)"))),
    "eye": BurnOp("eye", "composed", (
        ("numeric.rs", 883, "pub fn eye("), ("numeric.rs", 888, "zeros.scatter(0,"))),
    "triu": BurnOp("triu", "composed", (
        ("numeric.rs", 643, "pub fn triu("), ("bool.rs", 290, "fn tri_mask<"))),
    "cumsum": BurnOp("cumsum", "backend kernel", (
        ("tensor.rs", 962, "fn float_cumsum("), ("numeric.rs", 559, "pub fn cumsum<"))),
    "diff": BurnOp("", "none"),
    "vstack": BurnOp("stack", "composed", (
        ("base.rs", 2299, "pub fn stack<"), ("tensor.rs", 1460, "fn float_cat("))),
    "roll": BurnOp("roll", "composed", (
        ("base.rs", 1112, "pub fn roll<"), ("base.rs", 1088, "Tensor::cat("))),
    "flip": BurnOp("flip", "backend kernel", (
        ("tensor.rs", 410, "fn float_flip("), ("base.rs", 635, "pub fn flip<"))),
    "compress": BurnOp("mask_select", "backend default", (
        ("tensor.rs", 646, "fn float_mask_select("), ("base.rs", 1782, "pub fn mask_select("))),
    "pad_to": BurnOp("pad", "composed", (
        ("pad.rs", 151, "pub fn pad("), ("pad.rs", 190, "padded_tensor.slice_assign("))),
    "sequence_mask": BurnOp("generate_padding_mask", "composed", (
        ("mask.rs", 61, "pub fn generate_padding_mask("), ("mask.rs", 85, "for (index, tokens)"))),
    "bincount": BurnOp("", "none"),
    "scatter_add": BurnOp("scatter", "backend kernel", (
        ("tensor.rs", 449, "fn float_scatter_add("), ("base.rs", 1877, "pub fn scatter("))),
    "flatten": BurnOp("flatten", "composed", (
        ("base.rs", 683, "pub fn flatten<"), ("base.rs", 693, "K::reshape("))),
    "linspace": BurnOp("", "none"),
    "heaviside": BurnOp("", "none"),
    "repeat": BurnOp("repeat_dim", "backend default", (
        ("tensor.rs", 161, "fn float_repeat_dim("), ("base.rs", 2058, "pub fn repeat_dim("))),
    "bucketize": BurnOp("", "none"),
}

#: Words whose absence from burn :func:`verify` also checks (``git grep -i``, all of crates/).
ABSENT = {"diff": "fn diff(", "bincount": "bincount", "linspace": "linspace",
          "heaviside": "heaviside", "bucketize": "bucketize"}


def _source(path: str, mirror: Path, tag: str) -> list[str]:
    out = subprocess.run(["git", "-C", str(mirror), "show", f"{tag}:{path}"],
                         capture_output=True, text=True, check=True)
    return out.stdout.splitlines()


def verify(mirror: Path = MIRROR, tag: str = TAG) -> list[str]:
    """Every place of :data:`BURN_OPS` whose line at ``tag`` lacks its text, and every
    :data:`ABSENT` word found in burn's crates: ``[]`` when the table is right."""
    wrong, files = [], {}
    for name, burn in BURN_OPS.items():
        for short, line, text in burn.places:
            lines = files.setdefault(short, _source(FILES[short], mirror, tag))
            if line > len(lines) or text not in lines[line - 1]:
                wrong.append(f"{name}: {short}:{line} lacks {text!r}")
    for name, word in ABSENT.items():
        found = subprocess.run(["git", "-C", str(mirror), "grep", "-il", "-F", word, tag,
                                "--", "crates/"], capture_output=True, text=True)
        if found.stdout.strip():
            wrong.append(f"{name}: burn has {word!r}: {found.stdout.split()[0]}")
    return wrong


__all__ = ["ABSENT", "BURN_OPS", "FILES", "HOWS", "MIRROR", "TAG", "BurnOp", "verify"]

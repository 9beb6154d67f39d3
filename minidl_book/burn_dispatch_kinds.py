"""The burn-dispatch names the dispatch chapter draws, each with the line of burn's source
that defines it, at the version the chapter reads (``v0.22.0-pre.2``).

burn's ``DispatchTensor`` has no device: it holds a ``kind`` (``DispatchTensorKind``, one
variant per backend, plus ``Autodiff(Box<DispatchTensorKind>)``) and a checkpointing tag,
and ``binary_float_arms!`` matches the two inputs' kinds, with a ``panic!`` for a pair no
arm names. :data:`SOURCE` is the constant list the figure is built from;
:func:`missing` checks it against the mirror of burn's repository when it is on the
machine."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import NamedTuple

__all__ = ["MIRROR", "SOURCE", "TAG", "Cited", "burn_column", "missing", "mirror_present"]

MIRROR = Path("/work/.mirror/tracel-ai+burn/repo")
TAG = "v0.22.0-pre.2"
CRATE = "crates/burn-dispatch/"


class Cited(NamedTuple):
    """A name the figure draws, and where burn defines it: ``file`` (in burn-dispatch),
    ``line`` (1-based) and ``text``, a piece of that line."""

    name: str
    file: str
    line: int
    text: str


#: The figure's burn names, in the order it draws them.
SOURCE: dict[str, Cited] = {c.name: c for c in (
    Cited("DispatchTensor", "src/tensor.rs", 204, "pub struct DispatchTensor {"),
    Cited("checkpointing", "src/tensor.rs", 214,
          "pub checkpointing: Option<CheckpointingStrategy>,"),
    Cited("DispatchTensorKind", "src/tensor.rs", 225, "pub enum DispatchTensorKind {"),
    Cited("Flex", "src/tensor.rs", 256, "Flex(BackendTensor<Flex>),"),
    Cited("NdArray", "src/tensor.rs", 260, "NdArray(BackendTensor<NdArray>),"),
    Cited("Autodiff", "src/tensor.rs", 272, "Autodiff(Box<DispatchTensorKind>),"),
    Cited("BackendTensor::Float", "src/tensor.rs", 24, "Float(B::FloatTensorPrimitive),"),
    Cited("BackendTensor::Autodiff", "src/tensor.rs", 33,
          "Autodiff(FloatTensor<Autodiff<B>>),"),
    # a float result on an autodiff device: Autodiff(Box(Flex(BackendTensor::Autodiff)))
    Cited("autodiff float", "src/macros.rs", 424,
          "DispatchTensorKind::$Backend($crate::BackendTensor::Autodiff($expr))"),
    Cited("arm (Autodiff, Autodiff)", "src/macros.rs", 813,
          "($crate::DispatchTensorKind::Autodiff(lhs_inner), "
          "$crate::DispatchTensorKind::Autodiff(rhs_inner))"),
    Cited("arm (Backend, Backend)", "src/macros.rs", 826,
          "($crate::DispatchTensorKind::$Backend($lhs_inner), "
          "$crate::DispatchTensorKind::$Backend($rhs_inner))"),
    Cited("arm (lhs, rhs): panic", "src/macros.rs", 839,
          '"The provided tensors are not on the same backend.'),
)}


def _split(path: str) -> str:
    """``BackendTensor::Float`` as ``BackendTensor::`` over ``Float(..)``, to fit a box."""
    head, tail = path.rsplit("::", 1)
    return f"{head}::\n{tail}(..)"


def burn_column(lhs: str = "x_plain", rhs: str = "y_ad"):
    """burn's half of the kinds-or-devices figure, for ``lhs * rhs`` with ``lhs`` on the
    plain Flex device and ``rhs`` on its autodiff one: what each input holds (outermost
    first) and the match's arms, the pair's own (the panic) taken. Every name drawn is a
    key of :data:`SOURCE`; ``(inputs, arms)`` as :func:`~minidl_book.dispatch_figures.
    kinds_and_devices` takes them."""
    s = {name: name for name in SOURCE}  # a KeyError if a drawn name is not cited
    inputs = [
        (f"{lhs} (plain)", [f"{s['DispatchTensor']}\n{s['checkpointing']}: None",
                            f"kind: {s['Flex']}(..)", _split(s['BackendTensor::Float'])]),
        (f"{rhs} (autodiff)", [f"{s['DispatchTensor']}\n{s['checkpointing']}: Some",
                               f"kind: {s['Autodiff']}(Box)", f"{s['Flex']}(..)",
                               _split(s['BackendTensor::Autodiff'])]),
    ]
    arms = [
        ("match (lhs.kind, rhs.kind)", "", True),
        ("(Autodiff, Autodiff) => Autodiff<Flex>", "autodiff", False),
        ("(Flex, Flex) => Flex", "plain", False),
        ("(NdArray, NdArray) => NdArray", "plain", False),
        ("(Flex, Autodiff): no arm\n(lhs, rhs) => panic!", "error", True),
    ]
    assert {"arm (Autodiff, Autodiff)", "arm (Backend, Backend)",
            "arm (lhs, rhs): panic", "NdArray"} <= set(s)
    return inputs, arms


def mirror_present() -> bool:
    """Whether burn's repository is mirrored on this machine (a bare git directory)."""
    return (MIRROR / "HEAD").is_file()


def _read(file: str) -> str:
    return subprocess.run(["git", "-C", str(MIRROR), "show", f"{TAG}:{CRATE}{file}"],
                          capture_output=True, text=True, check=True).stdout


def missing(source: dict[str, Cited] | None = None, read=_read) -> list[str]:
    """The names of ``source`` (default :data:`SOURCE`) whose cited line does not hold
    their text at :data:`TAG`, read with ``read(file)`` (default: from the mirror)."""
    files: dict[str, list[str]] = {}
    wrong = []
    for name, cited in (SOURCE if source is None else source).items():
        if cited.file not in files:
            files[cited.file] = read(cited.file).splitlines()
        lines = files[cited.file]
        if not (0 < cited.line <= len(lines) and cited.text in lines[cited.line - 1]):
            wrong.append(name)
    return wrong

"""Build exercise of the storing-and-loading chapter: rename a PyTorch checkpoint's keys.

The PyTorch model names its layers ``encoder.0`` (inside an ``nn.Sequential``) and
``head.proj`` (inside an ``nn.ModuleDict``); the minidl model calls them ``fc1`` and
``fc2``. The reader writes ``remap(store)``, which returns the store with renaming rules
(``with_key_remapping(pattern, replacement)``). The checker saves a freshly drawn PyTorch
model with ``torch.save``, loads the file through the reader's store into the minidl model
(the adapter still transposes the Linear weights) and compares the outputs with PyTorch's.
A rule that misses a tensor fails with the store's own message (``Missing keys``), a rule
that sends a tensor to the wrong layer with its ``Shape mismatch``.
"""

from __future__ import annotations

import torch
from hypothesis import strategies as st

from minidl import Device, Tensor, functional
from minidl.module import Module
from minidl.nn import LinearConfig
from minidl.store import PytorchStore
from minidl_book.build_check import BuildExercise, Reference, Rules
from minidl_book.cause_hints import CauseHints
from minidl_book.harness import remap_run
from minidl_book.strategies import float32_arrays

__all__ = ["PLANTED", "Mlp", "TorchMlp", "exercise", "remap"]


class TorchMlp(torch.nn.Module):
    """The PyTorch side: its names come from a Sequential and a ModuleDict."""

    def __init__(self, d_input: int, d_hidden: int, d_output: int):
        super().__init__()
        self.encoder = torch.nn.Sequential(torch.nn.Linear(d_input, d_hidden), torch.nn.ReLU())
        self.head = torch.nn.ModuleDict({"proj": torch.nn.Linear(d_hidden, d_output)})

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head["proj"](self.encoder(x))


class Mlp(Module):
    """The minidl side: ``fc1`` → relu → ``fc2``."""

    def __init__(self, device: Device, d_input: int, d_hidden: int, d_output: int):
        self.fc1 = LinearConfig(d_input, d_hidden).init(device)
        self.fc2 = LinearConfig(d_hidden, d_output).init(device)

    def forward(self, x: Tensor) -> Tensor:
        return self.fc2(functional.relu(self.fc1(x)))


def remap(store: PytorchStore) -> PytorchStore:
    """``encoder.0.*`` → ``fc1.*`` and ``head.proj.*`` → ``fc2.*``."""
    return (store.with_key_remapping(r"^encoder\.0\.(.*)$", "fc1.$1")
                 .with_key_remapping(r"^head\.proj\.(.*)$", "fc2.$1"))


# ----- planted wrong solutions ---------------------------------------------------------------
def remap_weights_only(store: PytorchStore) -> PytorchStore:
    return (store.with_key_remapping(r"^encoder\.0\.weight$", "fc1.weight")
                 .with_key_remapping(r"^head\.proj\.weight$", "fc2.weight"))


def remap_swapped(store: PytorchStore) -> PytorchStore:
    return (store.with_key_remapping(r"^encoder\.0\.(.*)$", "fc2.$1")
                 .with_key_remapping(r"^head\.proj\.(.*)$", "fc1.$1"))


#: name → (wrong remap, the verdict kind it must get)
PLANTED = {
    "weights only": (remap_weights_only, "error"),
    "layers swapped": (remap_swapped, "value"),  # with equal sizes it loads, and computes wrong
}


# ----- the checker ---------------------------------------------------------------------------
def _cases() -> st.SearchStrategy:
    arrays = float32_arrays(3)

    def case(n, d_in, d_hidden, d_out, seed):
        torch.manual_seed(seed)
        model = TorchMlp(d_in, d_hidden, d_out)

        def target(device, d=(d_in, d_hidden, d_out)):
            return Mlp(device, *d)

        x = arrays(n, d_in)
        about = f"TorchMlp({d_in}, {d_hidden}, {d_out}) drawn after torch.manual_seed({seed})"
        return st.fixed_dictionaries({"model": st.just(about), "x": x, "_torch": st.just(model),
                                      "_target": st.just(target)})

    dims = st.tuples(st.integers(1, 3), st.integers(1, 4), st.integers(1, 4), st.integers(1, 4),
                     st.integers(0, 1000))
    return dims.flatmap(lambda d: case(*d))


def _torch(case: dict) -> dict:
    with torch.no_grad():
        return {"out": case["_torch"](torch.from_numpy(case["x"]))}


def _nothing_renamed(verdict) -> bool:
    """The load saw the file's own names: no rule took effect (most often a
    ``store.with_key_remapping(...)`` whose new store was thrown away)."""
    return (verdict.kind == "error" and "Unexpected keys" in verdict.text
            and "'encoder.0.weight'" in verdict.text and "'head.proj.weight'" in verdict.text)


_KEYS = "print(store.keys()) shows the file's names; the minidl names are fc1.weight, fc1.bias, ..."
_NUDGE = ("One rule per layer is enough: a regex group can carry the rest of the name (weight, "
          "bias) across, as the renaming cells of the chapter do for a Sequential.")
_PATTERN = ("The first rule: r'^encoder\\.0\\.(.*)$' → 'fc1.$1'; head.proj gets the same kind. "
            "Each with_key_remapping call returns a new store: chain them.")
_NEW_STORE = ("None of the file's names was renamed. Each with_key_remapping call returns a NEW "
              "store and leaves the one it was called on as it was: reassign "
              "(store = store.with_key_remapping(...)) or chain the calls.")


def exercise(max_examples: int = 8) -> BuildExercise:
    """The checker for the reader's ``remap(store) -> store``; a failure where no name was
    renamed opens the "returns a new store" hint first."""
    return CauseHints(
        "key remapping for a renamed PyTorch checkpoint",
        cases=_cases(),
        run=remap_run,
        references=[Reference("PyTorch", _torch, rtol=1e-5, atol=1e-6)],
        rules=Rules(must_reach={r"^PytorchStore\.with_key_remapping$": "rename with the store's "
                                "with_key_remapping rules"}),
        hints=[_KEYS, _NUDGE, _PATTERN],
        causes=[("nothing renamed", _nothing_renamed, [_NEW_STORE, _NUDGE, _PATTERN])],
        reference_solution=remap,
        max_examples=max_examples,
        order=("model", "x"),
    )

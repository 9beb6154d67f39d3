"""Build exercise of the train-and-inference chapter: a running variance in PyTorch's convention.

minidl's BatchNorm (like burn's) folds the batch's **biased** variance (divide by ``n``) into
``running_var``; PyTorch folds the **unbiased** one (divide by ``n - 1``). The reader writes
the update PyTorch makes, with tensor ops only. The checker runs it over several generated
batches from a fresh state of ones and compares the result with the ``running_var`` of a
``torch.nn.BatchNorm1d`` that saw the same batches with the same momentum.
"""

from __future__ import annotations

import numpy as np
import torch
from hypothesis import strategies as st

from minidl import Tensor
from minidl_book.build_check import BuildExercise, Reference, Rules
from minidl_book.harness import running_var_run
from minidl_book.strategies import float32_arrays

__all__ = ["PLANTED", "exercise", "running_var_update"]


def running_var_update(running_var: Tensor, batch: Tensor, momentum: float) -> Tensor:
    """PyTorch's update, per channel:
    ``(1 - m) * running_var + m * var(batch, unbiased)``."""
    n, channels = batch.shape
    # var(0) divides by n - 1 (Bessel-corrected, like burn's Tensor::var); var_bias(0) by n
    var = batch.var(0).reshape([channels])
    return running_var * (1.0 - momentum) + var * momentum


# ----- planted wrong solutions ---------------------------------------------------------------
def biased(running_var: Tensor, batch: Tensor, momentum: float) -> Tensor:
    """minidl's (and burn's) own convention: the biased variance."""
    var = batch.var_bias(0).reshape([batch.shape[1]])
    return running_var * (1.0 - momentum) + var * momentum


def momentum_swapped(running_var: Tensor, batch: Tensor, momentum: float) -> Tensor:
    var = batch.var(0).reshape([batch.shape[1]])
    return running_var * momentum + var * (1.0 - momentum)


def kept_dim(running_var: Tensor, batch: Tensor, momentum: float) -> Tensor:
    """Forgets that var(0) keeps the reduced dim: [1, C] instead of [C]."""
    return running_var.unsqueeze_dim(0) * (1.0 - momentum) + batch.var(0) * momentum


def through_numpy(running_var: Tensor, batch: Tensor, momentum: float) -> Tensor:
    var = batch.to_numpy().var(axis=0, ddof=1)
    return running_var * (1.0 - momentum) + Tensor.from_data(var, batch.device) * momentum


#: name → (wrong solution, the verdict kind it must get)
PLANTED = {
    "biased variance": (biased, "value"),
    "momentum swapped": (momentum_swapped, "value"),
    "kept dim": (kept_dim, "shape"),
    "values through NumPy": (through_numpy, "rule"),
}


# ----- the checker ---------------------------------------------------------------------------
def _cases() -> st.SearchStrategy:
    batches = float32_arrays(3)

    dims = st.tuples(st.integers(1, 3), st.integers(2, 5), st.integers(1, 4))
    return dims.flatmap(lambda d: st.fixed_dictionaries(
        {"batches": batches(*d), "momentum": st.sampled_from([0.1, 0.25, 0.5])}))


def _torch(case: dict) -> dict:
    batches = case["batches"]
    bn = torch.nn.BatchNorm1d(batches.shape[2], momentum=case["momentum"])
    bn.train()
    with torch.no_grad():
        for batch in batches:
            bn(torch.from_numpy(np.ascontiguousarray(batch)))
    return {"running_var": bn.running_var}


def exercise(max_examples: int = 15) -> BuildExercise:
    """The checker for the reader's ``running_var_update(running_var, batch, momentum)``."""
    return BuildExercise(
        "a running variance that follows PyTorch's convention",
        cases=_cases(),
        run=running_var_run,
        references=[Reference("torch.nn.BatchNorm1d", _torch, rtol=1e-5, atol=1e-6)],
        rules=Rules(no_data=True, no_numpy=True),
        hints={
            "value": [
                "Your running variance differs from PyTorch's. Which of the two variances "
                "does nn.BatchNorm1d's docstring (quoted above) say it mixes in?",
                "Check which side momentum weighs: the new value is "
                "(1 - momentum) * old + momentum * batch statistic.",
            ],
            "shape": "A reduction over dim 0 keeps that dim with size 1: reshape the batch "
            "statistic to [C] before mixing it with running_var.",
            "error": "running_var has shape [C]; var(0) keeps dim 0, [1, C]: reshape the "
            "batch statistic to [C] before mixing the two.",
            "rule": "Compute with minidl tensor ops only; no values taken out of a tensor.",
        },
        reference_solution=running_var_update,
        max_examples=max_examples,
        order=("momentum", "batches"),
    )

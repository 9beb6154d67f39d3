"""Side-by-side comparison, printed the way the burn book prints burn against PyTorch.

burn's train-vs-inference experiment runs BatchNorm on both sides and prints one line per quantity, then a verdict::

    train_out                n= 12  max|diff|=1.19e-07
    running_mean_1           n=  3  max|diff|=0.00e+00
    running_var_1            n=  3  max|diff|=1.24e-01
    worst=1.24e-01 tol=1e-06 MISMATCH

:func:`report` prints exactly that from ``{name: (ours, theirs)}``; the two sides may be
NumPy arrays, lists, PyTorch tensors or anything with ``to_numpy()``/``__array__``.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from typing import Any, TextIO

import numpy as np

__all__ = ["max_abs_diff", "report", "to_numpy"]


def to_numpy(x: Any) -> np.ndarray:
    """A NumPy copy of ``x`` (PyTorch tensors detached, minidl tensors via ``to_numpy``)."""
    if hasattr(x, "detach") and hasattr(x, "cpu"):  # a torch tensor
        x = x.detach().cpu().numpy()
    elif hasattr(x, "to_numpy") and not isinstance(x, np.ndarray):
        x = x.to_numpy()
    return np.asarray(x)


def max_abs_diff(a: Any, b: Any) -> float:
    """Largest ``|a - b|`` over all elements; ``inf`` when shapes differ or only one is NaN.

    NaN on both sides at the same place counts as equal.
    """
    x, y = to_numpy(a).astype(np.float64), to_numpy(b).astype(np.float64)
    if x.shape != y.shape:
        return float("inf")
    if x.size == 0:
        return 0.0
    with np.errstate(invalid="ignore"):
        d = np.abs(x - y)
    both_nan = np.isnan(x) & np.isnan(y)
    same_inf = np.isinf(x) & (x == y)
    d = np.where(both_nan | same_inf, 0.0, d)
    d = np.where(np.isnan(d), np.inf, d)
    return float(d.max())


def report(
    pairs: Mapping[str, tuple[Any, Any]], tol: float = 1e-6, *, file: TextIO | None = None
) -> float:
    """Print one ``name  n=…  max|diff|=…`` line per pair and a verdict; return the worst diff.

    The verdict line is ``worst=… tol=… OK`` when every difference is at most ``tol``,
    ``MISMATCH`` otherwise. A pair whose shapes differ prints both shapes and counts as
    ``inf``.
    """
    out = sys.stdout if file is None else file
    worst = 0.0
    for name, (a, b) in pairs.items():
        x, y = to_numpy(a), to_numpy(b)
        d = max_abs_diff(x, y)
        worst = max(worst, d)
        line = f"{name:<24} n={x.size:3d}  max|diff|={d:.2e}"
        if x.shape != y.shape:
            line += f"  shapes {x.shape} vs {y.shape}"
        print(line, file=out)
    verdict = "OK" if worst <= tol else "MISMATCH"
    print(f"worst={worst:.2e} tol={tol:g} {verdict}", file=out)
    return worst

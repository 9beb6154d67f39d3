"""When a batched ``lhs @ rhs`` with a shared ``rhs`` should run as one big matmul instead.

A pure port of burn_std's ``MatmulTransformAnalysis`` + ``MatmulTransformPolicy`` (BetterTiling,
the default) at v0.22.0-pre.2, ``crates/burn-std/src/tensor/matmul.rs:46-149``, used by the
default ``linear`` (``minidl/backend/modules/linear.py``) exactly as burn's
``crates/burn-backend/src/backend/ops/modules/linear.rs`` uses it. Shapes only: like burn's
``MatmulTransformAnalysis::from_shapes``, the operands are taken as batch-contiguous.
"""

from __future__ import annotations

from dataclasses import dataclass
from math import prod

#: Accelerated matmul tiles consume rows in chunks of this size (burn_std's ``ROW_TILE``).
ROW_TILE = 32

KEEP = "Keep"


@dataclass(frozen=True)
class MergeBatches:
    """Fold every batch dim of ``lhs`` into its rows: ``[.., b, m, k] @ [k, n]`` runs as one
    ``[b*m, k] @ [k, n]`` matmul against the shared ``rhs``."""

    rows: int


@dataclass(frozen=True)
class MatmulTransformAnalysis:
    """burn_std's ``MatmulTransformAnalysis``: the facts of ``lhs @ rhs`` the policy reads."""

    batches: int  # product of lhs's batch dims
    rows: int  # rows of one batch (m)
    cols: int  # columns of the output (n)
    mergeable: bool  # rhs is shared by every batch (its own batch dims are all 1)

    @classmethod
    def from_shapes(cls, lhs, rhs) -> MatmulTransformAnalysis:
        lhs, rhs = tuple(lhs), tuple(rhs)
        return cls(batches=prod(lhs[:-2]), rows=lhs[-2], cols=rhs[-1],
                   mergeable=all(d == 1 for d in rhs[:-2]))


def _squarer(rows_new: int, rows: int, cols: int) -> bool:
    """Whether a ``rows_new x cols`` output is closer to square than ``rows x cols``."""
    return min(rows_new, cols) * max(rows, cols) > min(rows, cols) * max(rows_new, cols)


def better_tiling(analysis: MatmulTransformAnalysis):
    """``MatmulTransformPolicy::BetterTiling.action``: ``KEEP`` or ``MergeBatches(rows)``."""
    if not analysis.mergeable or analysis.batches == 1:
        return KEEP
    if analysis.rows % ROW_TILE == 0:  # rows already fill the tiles: stay batched
        return KEEP
    rows = analysis.batches * analysis.rows
    if not _squarer(rows, analysis.rows, analysis.cols):  # merging must get squarer
        return KEEP
    return MergeBatches(rows)


def matmul_transform(lhs_shape, rhs_shape):
    """The default policy's action for ``lhs @ rhs`` given their shapes."""
    return better_tiling(MatmulTransformAnalysis.from_shapes(lhs_shape, rhs_shape))

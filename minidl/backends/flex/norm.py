"""Flex's ``layer_norm``: the one ``ModuleOps`` default Flex replaces with a fused kernel
(burn-flex's ``layer_norm`` override; kernel: :mod:`minidl.backends.flex.kernels.norm`).

The default runs ``mean_dim``, ``sub``, ``mul``, ``mean_dim``, ``add_scalar``, ``sqrt``, ``div``,
``mul``, ``add`` — nine ops, eight temporaries. The kernel reads each row twice (mean, then
the biased variance — the default's exact formula) and writes it once. On an autodiff device
this override is not reached: ``Autodiff`` does not override ``layer_norm``, so the default
decomposes into recorded steps there. ``batch_norm`` stays the default on Flex too.
"""

from __future__ import annotations

from minidl.backends.flex.kernels import norm
from minidl.backends.flex.kernels.copy import contiguous


class FlexNormOps:
    """The fused layer_norm."""

    @classmethod
    def layer_norm(cls, x, gamma, beta, epsilon: float):
        """Normalize over the last dim with the biased variance, then ``* gamma + beta``."""
        return norm.layer_norm(contiguous(x), gamma, beta, epsilon)

"""burn-flex: ``Flex``, the CPU backend on numba kernels (see :mod:`.backend`).

Importing this package imports numba but compiles nothing; ``minidl.dispatch`` imports it on
the first op routed to a flex device, so ``import minidl`` never pays for numba.
"""

from __future__ import annotations

from minidl.backends.flex.backend import Flex

__all__ = ["Flex"]

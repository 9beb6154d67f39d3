"""burn-ndarray: ``NdArray``, the plain NumPy backend (the readable reference and test oracle)."""

from __future__ import annotations

from minidl.backends.ndarray.backend import NdArray

__all__ = ["NdArray"]

"""The concrete backends: ``ndarray`` (plain NumPy, the reference) and ``flex`` (numba kernels).

Nothing is imported here, so ``import minidl.backends.ndarray`` never pays for numba;
``minidl.dispatch`` imports each backend on first use of its device.
"""

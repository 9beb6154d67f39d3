"""The concrete backends: ``ndarray`` (plain NumPy, the reference), ``flex`` (numba kernels),
``fusion`` (``Fusion[Flex]``) and ``wgpu`` (WGSL kernels on a GPU through the optional
``wgpu`` package).

Nothing is imported here, so ``import minidl.backends.ndarray`` never pays for numba (nor
``minidl.backends.wgpu`` for wgpu, which it imports on first use of the device);
``minidl.dispatch`` imports each backend on first use of its device.
"""

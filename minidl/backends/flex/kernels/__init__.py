"""Flex compute kernels (numba). Filled in as the kernel modules land; see the table below."""

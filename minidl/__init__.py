"""minidl: a compact deep-learning framework whose architecture mirrors burn 0.22.

Layers, top to bottom (imports only point down): ``nn`` → ``module`` → ``tensor`` →
``dispatch`` → ``autodiff`` → ``backends`` (Flex with numba kernels, NdArray with NumPy) →
``backend`` (the protocol). ``debug`` and ``book`` may look at everything.
"""

from __future__ import annotations

import os as _os
from pathlib import Path as _Path

# numba reads NUMBA_CACHE_DIR when it is first imported: keep compiled kernels inside the
# project folder (ignored by git) unless the user chose another place. The one place the default
# is computed: after `import minidl` the variable is set, and code that needs the folder reads it.
if not _os.environ.get("NUMBA_CACHE_DIR"):
    _os.environ["NUMBA_CACHE_DIR"] = str(_Path(__file__).resolve().parent.parent / ".numba_cache")

# ----- the user-facing names (burn's prelude) ------------------------------------------------
from minidl.autodiff import no_grad  # noqa: E402
from minidl.backend.distribution import Distribution  # noqa: E402
from minidl.backend.dtype import (  # noqa: E402
    DType,
    Kind,
    bool_,
    float16,
    float32,
    float64,
    int32,
    int64,
)
from minidl.backend.limits import TensorTooLargeError  # noqa: E402
from minidl.dispatch import Device  # noqa: E402
from minidl.tensor import Tensor, TensorCheckError, TensorKindError, assert_shape  # noqa: E402
from minidl.tensor import functional as functional  # noqa: E402

__all__ = [
    "DType",
    "Device",
    "Distribution",
    "Kind",
    "Tensor",
    "TensorCheckError",
    "TensorKindError",
    "TensorTooLargeError",
    "assert_shape",
    "bool_",
    "float16",
    "float32",
    "float64",
    "functional",
    "int32",
    "int64",
    "no_grad",
]

# The debug switch (tinygrad's DEBUG): `MINIDL_DEBUG=1 python script.py` logs every route.
# minidl.debug is imported only when asked for, so nothing in minidl depends on it.
if _os.environ.get("MINIDL_DEBUG", "0").strip() not in ("", "0"):
    import minidl.debug  # noqa: E402, F401

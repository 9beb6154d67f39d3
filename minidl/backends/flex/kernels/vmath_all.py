"""Every vectorizable scalar function of :mod:`.vmath` and its siblings, in one namespace: the
import line of fusion's generated kernels, so they run the same formulas as Flex's unary kernels.

Not bit for bit: the functions are inlined into their caller and take its fastmath flags.
Flex's element-wise kernels compile with ``contract`` only (``JIT_EW`` in :mod:`._common`);
fusion's generated kernels with its own ``FASTMATH`` set (``reassoc``, ``contract``, ``arcp``,
``nsz``, in ``minidl/backends/flex/fusion/codegen.py``), so a fused result may differ from Flex's by
a rounding (an ``arcp`` reciprocal, a reassociated sum)."""

from .vmath import fmaximum, vexp, vlog
from .vmath_act import vgelu_tanh, vsigmoid, vtanh
from .vmath_erf import verf, vgelu
from .vmath_pow import vpowf
from .vmath_trig import vcos, vcos_near, vsin, vsin_near

__all__ = ["fmaximum", "vcos", "vcos_near", "verf", "vexp", "vgelu", "vgelu_tanh", "vlog", "vpowf",
           "vsigmoid", "vsin", "vsin_near", "vtanh"]

"""Every vectorizable scalar function of :mod:`.vmath` and its siblings, in one namespace: the
import line of fusion's generated kernels, so they compute what Flex's unary kernels do."""

from .vmath import fmaximum, vexp, vlog
from .vmath_act import vgelu_tanh, vsigmoid, vtanh
from .vmath_erf import verf, vgelu
from .vmath_pow import vpowf
from .vmath_trig import vcos, vcos_near, vsin, vsin_near

__all__ = ["fmaximum", "vcos", "vcos_near", "verf", "vexp", "vgelu", "vgelu_tanh", "vlog", "vpowf",
           "vsigmoid", "vsin", "vsin_near", "vtanh"]

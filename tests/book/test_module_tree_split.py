"""map_rows names a tie a step split ("split"), not a map bug ("changed")."""

import numpy as np

from minidl import Device, Tensor
from minidl.module import Module
from minidl.nn import LinearConfig
from minidl.optim import SgdConfig
from minidl_book.module_tree import draw_map, map_rows


class _Tied(Module):
    def __init__(self, device):
        self.first = LinearConfig(4, 4, bias=False).init(device)
        self.second = LinearConfig(4, 4, bias=False).init(device)
        self.second.weight = self.first.weight

    def forward(self, x):
        return self.second(self.first(x))


def test_step_split_is_named_and_drawn():
    ad = Device.flex().autodiff()
    ad.seed(4)
    tied = _Tied(ad)
    x = Tensor.from_numpy(np.ones((2, 4), dtype=np.float32), ad)
    new = SgdConfig().init().step(0.1, tied, (tied(x) ** 2).mean().backward())
    rel = {r["label"]: r["relation"] for r in map_rows(tied, new)}
    assert rel["first.weight"] == "new" and rel["second.weight"] == "split"
    import matplotlib

    matplotlib.use("Agg")
    draw_map(tied, new)

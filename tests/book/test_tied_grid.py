"""The tied-pair grid of modules_params_config: each of the four steps, run live."""

import numpy as np

from minidl import Device, Tensor
from minidl.module import Module
from minidl.nn import LinearConfig
from minidl_book.tied_grid import tied_variants


class _Tied(Module):
    def __init__(self, device):
        self.first = LinearConfig(3, 3, bias=False).init(device)
        self.second = LinearConfig(3, 3, bias=False).init(device)
        self.second.weight = self.first.weight

    def forward(self, x):
        return self.second(self.first(x))


def test_only_mapping_once_keeps_the_tie():
    ad = Device.flex().autodiff()
    ad.seed(1)
    tied = _Tied(ad)
    x = Tensor.from_numpy(np.ones((2, 3), np.float32), ad)
    before = tied.first.weight.val().to_numpy().copy()
    assert tied_variants(tied, x) == {
        ("per path", "read"): ((True, True), 2),
        ("per path", "taken out"): ((True, False), 2),
        ("once", "read"): ((True, True), 1),
        ("once", "taken out"): ((True, True), 1),
    }
    assert np.array_equal(tied.first.weight.val().to_numpy(), before)

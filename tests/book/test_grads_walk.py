"""grads_along_step: grads empties path by path; a tie's second path finds nothing."""

import matplotlib

matplotlib.use("Agg")

from minidl import Device, Tensor  # noqa: E402
from minidl.module import Module  # noqa: E402
from minidl.nn import LinearConfig  # noqa: E402
from minidl.optim import GradientsParams, SgdConfig  # noqa: E402
from minidl_book.grads_walk import draw_grads_walk, grads_along_step  # noqa: E402


class Pair(Module):
    def __init__(self, device: Device, tie: bool):
        self.first = LinearConfig(2, 2).init(device)
        self.second = LinearConfig(2, 2).init(device)
        if tie:
            self.second.weight = self.first.weight

    def forward(self, x: Tensor) -> Tensor:
        return self.second(self.first(x))


def _grads(model: Module, device: Device) -> GradientsParams:
    loss = (model(Tensor.ones([3, 2], device)) ** 2).mean()
    return GradientsParams.from_grads(loss.backward(), model)


def test_an_untied_model_finds_every_gradient():
    ad = Device.flex().autodiff()
    model = Pair(ad, tie=False)
    grads = _grads(model, ad)
    stepped, rows = grads_along_step(SgdConfig().init(), 0.1, model, grads)
    assert [r["path"] for r in rows] == list(model.parameters())
    assert all(r["found"] for r in rows) and [len(r["left"]) for r in rows] == [3, 2, 1, 0]
    assert len(grads) == 0 and stepped is not model


def test_a_tie_second_path_finds_nothing_and_keeps_its_param():
    ad = Device.flex().autodiff()
    model = Pair(ad, tie=True)
    grads = _grads(model, ad)
    start = list(grads)
    stepped, rows = grads_along_step(SgdConfig().init(), 0.1, model, grads)
    assert len(start) == 3
    assert [r["found"] for r in rows] == [True, True, False, True]
    assert stepped.second.weight is model.second.weight
    assert stepped.first.weight is not stepped.second.weight
    assert "remove" not in vars(grads)  # the spy is gone after the step
    fig = draw_grads_walk(rows, start, title="t")
    labels = [t.get_text() for t in fig.axes[0].get_xticklabels()]
    assert labels[0] == "first.weight (tie)"
    matplotlib.pyplot.close(fig)

"""leaf_grid reads each map's effect off the two trees, so it follows minidl's behaviour."""

import numpy as np

from minidl import Device, Tensor
from minidl.module import Module
from minidl.module.record import flatten_record
from minidl.nn import BatchNormConfig, DropoutConfig, LinearConfig
from minidl.optim import GradientsParams, SgdConfig
from minidl_book import build_map_params
from minidl_book.leaf_grid import COLUMNS, draw_leaf_grid, leaf_grid, map_cells, walk_cells
from minidl_book.module_fields import with_fields


class _Net(Module):
    def __init__(self, device):
        self.first = LinearConfig(4, 4).init(device)
        self.norm = BatchNormConfig(4).init(device)
        self.second = LinearConfig(4, 4).init(device)
        self.drop = DropoutConfig(0.1).init()
        self.width = 4
        self.second.weight = self.first.weight  # the tie

    def forward(self, x):
        return self.drop(self.second(self.norm(self.first(x))))


def _grid(model):
    """The chapter's five rows: the maps and walks the page builds (modes are not among
    them: they are train_and_inference's)."""
    trained = model.train()
    x = Tensor.from_numpy(np.ones((3, 4), dtype=np.float32), trained.first.weight.val().device)
    grads = GradientsParams.from_grads((trained(x) ** 2).mean().backward(), trained)
    rec = _Net(Device.flex()).into_record()
    maps = {"map": lambda m: build_map_params.map_params(m, lambda w: w * 0.5),
            "step": lambda m: SgdConfig().init().step(0.1, m, grads),
            "load": lambda m: m.load_record(rec)}
    walks = {"params": (lambda m: m.parameters(), "listed"),
             "record": (lambda m: flatten_record(m.into_record()), "saved")}
    return leaf_grid(model, maps, walks)


def test_the_key_cells_on_a_plain_tied_model():
    grid = _grid(_Net(Device.flex()))
    assert list(grid) == ["map", "step", "load", "params", "record"]
    assert grid["map"]["tied param"] == ("changed", "tie kept")
    assert grid["map"]["running state"] == ("kept", "shared")
    assert grid["step"]["tied param"] == ("kept", "split, unmoved")
    assert grid["step"]["param"] == ("changed", "new tensor")
    assert grid["step"]["flag"] == grid["load"]["flag"] == ("kept", "on")
    assert grid["load"]["tied param"] == ("changed", "split")
    assert grid["load"]["running state"] == ("changed", "new tensor")
    assert grid["params"]["flag"] == ("skipped", "skipped")
    assert grid["record"]["running state"] == ("read", "saved")
    assert grid["record"]["tied param"] == ("read", "saved again")
    assert all(row["constant"] == ("kept", "same") for name, row in grid.items()
               if name in {"map", "step", "load"})


def test_a_mode_is_read_as_any_other_map():
    """The page has no mode rows, but map_cells reads any map: valid(), freeze() too."""
    plain = _Net(Device.flex())
    assert map_cells(plain, plain.valid())["flag"] == ("changed", "off")
    assert map_cells(plain, plain.valid())["param"] == ("kept", "same Param")
    assert map_cells(plain, plain.freeze().train())["flag"] == ("changed", "off, frozen")
    model = _Net(Device.flex().autodiff())
    assert map_cells(model, model.valid())["param"] == ("changed", "off autodiff")
    assert map_cells(model, model.no_grad())["param"] == ("changed", "grad off")
    lazy = _Net(Device.flex().autodiff())
    assert map_cells(lazy, lazy.no_grad())["param"] == ("changed", "still lazy")


def test_a_map_that_breaks_the_tie_or_changes_a_constant_is_seen():
    model = _Net(Device.flex())
    for param in model.parameters().values():
        param.val()
    split = with_fields(model, {"second": with_fields(model.second, {
        "weight": model.first.weight.map(lambda w: w * 2.0)})})
    assert map_cells(model, split)["tied param"] == ("changed", "split")
    wider = with_fields(model, {"width": 8})
    assert map_cells(model, wider)["constant"] == ("changed", "mixed")  # one of several
    halved_first = with_fields(model, {"first": build_map_params.map_params(
        model.first, lambda w: w * 0.5)})
    assert map_cells(model, halved_first)["param"] == ("changed", "mixed")


def test_a_walk_that_reads_more_or_less_is_seen():
    model = _Net(Device.flex())
    cells = walk_cells(model, ["first.weight", "norm.training"], "seen")
    assert cells["flag"] == ("changed", "mixed")  # one flag of two
    assert cells["tied param"] == ("skipped", "skipped")
    assert walk_cells(model, model.flags(), "seen")["flag"] == ("read", "seen")


def test_draws_every_cell():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    grid = _grid(_Net(Device.flex()))
    fig = draw_leaf_grid(grid, title="t")
    words = {t.get_text() for t in fig.axes[0].texts}
    assert set(COLUMNS) <= words and {"tie kept", "split, unmoved", "split"} <= words
    plt.close(fig)

"""The modes grid colours a cell green when it is what inference wants."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

from minidl_book.modes_grid import GREEN, GREY, ORANGE, cell_colour, modes_grid  # noqa: E402


def test_a_cell_is_green_as_inference_wants_it_orange_as_training_does():
    assert cell_colour("flag", "off") == GREEN
    assert cell_colour("flag", "off, frozen") == GREEN
    assert cell_colour("flag", "on") == ORANGE
    assert cell_colour("grads", "yes") == ORANGE and cell_colour("grads", "no") == GREEN
    assert cell_colour("params\non ad?", "—") == GREY
    assert cell_colour("new\nmodule?", "yes") == GREY


def test_the_grid_draws_one_text_per_cell():
    import matplotlib.pyplot as plt

    rows = {"`valid()`": ("yes", "off", "no", "no", "no", "no"),
            "PyTorch `eval()`": ("no", "off", "—", "yes", "no", "no")}
    fig = modes_grid(rows)
    texts = [t.get_text() for t in fig.axes[0].texts]
    assert "valid()" in texts and "PyTorch eval()" in texts
    assert texts.count("no") == 7
    plt.close(fig)

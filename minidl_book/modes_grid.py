"""The train-and-inference chapter's modes grid: each way to switch a model, one row, each
cell coloured by whether it behaves as inference wants.

It draws the table the chapter measures (burn's ``Module::valid``, ``no_grad``, ``freeze``
and ``set_require_grad``, run in minidl, beside PyTorch's ``eval()``, ``no_grad()`` and a
submodule's ``eval()``): a cell is green when it is what inference wants (flag off, params
off the autodiff device, no gradients, running statistics untouched, nothing dropped),
orange when it is training's behaviour, grey when it is neither (a new module or not, or a
question PyTorch has no answer to).
"""

from __future__ import annotations

#: the grid's columns and, for each, the answer inference wants (None: no preference)
COLUMNS: dict[str, str | None] = {
    "new\nmodule?": None,
    "flag": "off",
    "params\non ad?": "no",
    "grads": "no",
    "BN mean\nmoves": "no",
    "Dropout\ndrops": "no",
}
GREEN, ORANGE, GREY = "#C8E6C9", "#FFCC80", "#EEEEEE"


def cell_colour(column: str, value: str) -> str:
    """The cell's colour: green when ``value`` is what inference wants in ``column``
    (a frozen flag counts as off), orange when it is training's, grey when ``column`` has
    no preference or ``value`` is "—"."""
    wanted = COLUMNS[column]
    if wanted is None or value == "—":
        return GREY
    return GREEN if value.split(",")[0] == wanted else ORANGE


def modes_grid(rows: dict[str, tuple[str, ...]]):
    """The rows (way → one value per column of :data:`COLUMNS`) as a coloured grid; the
    row labels are plain text (backticks dropped)."""
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7.0, 0.6 + 0.34 * len(rows)))
    for row, (way, values) in enumerate(rows.items()):
        y = len(rows) - 1 - row
        ax.text(-0.6, y, way.replace("`", ""), ha="right", va="center", fontsize=8)
        for col, (column, value) in enumerate(zip(COLUMNS, values, strict=True)):
            ax.add_patch(plt.Rectangle((col - 0.48, y - 0.42), 0.96, 0.84, lw=0.6,
                                       ec="white", fc=cell_colour(column, value)))
            ax.text(col, y, value, ha="center", va="center", fontsize=7.5)
    for col, column in enumerate(COLUMNS):
        ax.text(col, len(rows) - 0.35, column, ha="center", va="bottom", fontsize=7.5)
    ax.set_xlim(-3.3, len(COLUMNS) - 0.5)
    ax.set_ylim(-0.55, len(rows) + 0.45)
    ax.axis("off")
    ax.text(-3.3, len(rows) - 0.35, "green: as inference wants it\norange: as training does",
            fontsize=7, va="bottom", color="#424242")
    fig.tight_layout()
    return fig

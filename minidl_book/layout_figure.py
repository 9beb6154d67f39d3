"""The tensors chapter's strides diagram: views of one buffer, each cell labelled with the
buffer position it reads, beside the buffer itself.

A view of ``arange(n)`` holds, in each cell, exactly the offset (in elements) of the buffer
element it reads, so drawing the values is drawing the address arithmetic
``position = offset + sum(index[d] * stride[d])``.
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np

from minidl_book.element_layout import element_offset, element_strides

__all__ = ["draw_address", "draw_broadcast", "draw_kept_dim", "draw_division_line", "draw_float16_line",
           "draw_zip",
           "draw_op_grid", "draw_reduce", "draw_runs", "draw_views", "draw_walks", "element_offset",
           "element_strides"]


def draw_address(buffer: np.ndarray, view: np.ndarray, index: tuple[int, int], name: str):
    """One element's address: the 2-D ``view`` of the 1-D ``buffer`` (values 0..n-1, so a
    cell's value is the position it reads) above the buffer, an arrow from cell ``index`` to
    the position ``offset + i * stride[0] + j * stride[1]``, the sum written out."""
    n, (i, j) = buffer.size, index
    offset, (s0, s1) = element_offset(view, buffer), element_strides(view)
    position = offset + i * s0 + j * s1
    assert int(view[i, j]) == position
    rows, cols = view.shape
    fig = plt.figure(figsize=(9.5, 3.4))
    grid = fig.add_gridspec(2, 1, height_ratios=[rows, 1.2], hspace=0.9)
    top, strip = fig.add_subplot(grid[0]), fig.add_subplot(grid[1])
    for r in range(rows):
        for c in range(cols):
            hit = (r, c) == (i, j)
            top.add_patch(plt.Rectangle((c, rows - 1 - r), 1, 1, ec="white",
                                        color="tab:orange" if hit else "tab:blue",
                                        alpha=0.9 if hit else 0.35))
            top.text(c + 0.5, rows - 0.5 - r, f"[{r}, {c}]", ha="center", va="center",
                     fontsize=9)
    top.set_xlim(-(n - cols) / 2, (n + cols) / 2)
    top.set_ylim(0, rows)
    top.set_aspect("equal")
    top.axis("off")
    top.set_title(f"{name}: shape {list(view.shape)}, offset {offset}, strides ({s0}, {s1})",
                  fontsize=9)
    for k in range(n):
        mine = offset <= k and any(int(v) == k for v in view.ravel())
        colour = "tab:orange" if k == position else ("tab:blue" if mine else "lightgrey")
        strip.add_patch(plt.Rectangle((k, 0), 1, 1, color=colour,
                                      alpha=0.9 if k == position else 0.35, ec="white"))
        strip.text(k + 0.5, 0.5, str(k), ha="center", va="center", fontsize=9)
    strip.set_xlim(0, n)
    strip.set_ylim(0, 1)
    strip.set_aspect("equal")
    strip.axis("off")
    strip.set_title(f"the buffer: [{i}, {j}] sits at offset + {i}·{s0} + {j}·{s1} = "
                    f"{offset} + {i * s0} + {j * s1} = {position}", fontsize=9)
    from matplotlib.patches import ConnectionPatch

    fig.add_artist(ConnectionPatch(xyA=(j + 0.5, rows - 1 - i), coordsA=top.transData,
                                   xyB=(position + 0.5, 1), coordsB=strip.transData,
                                   arrowstyle="-|>", color="tab:orange", lw=1.5))
    return fig


def draw_views(buffer: np.ndarray, views: dict[str, np.ndarray]):
    """Draw ``buffer`` (1-D, values 0..n-1) as a strip and each 2-D view as a grid whose
    cells show the buffer position they read; titles give shape and strides in elements.
    Cells of a view that share a buffer position with the highlighted one are coloured
    alike, so a stride of 0 (one row read five times) shows as a column of one colour."""
    n = buffer.size
    cmap = plt.get_cmap("tab20", n)
    fig = plt.figure(figsize=(9.5, 4.6))
    grid = fig.add_gridspec(2, len(views), height_ratios=[4, 1], hspace=0.55, wspace=0.35)
    for i, (title, view) in enumerate(views.items()):
        ax = fig.add_subplot(grid[0, i])
        rows, cols = view.shape
        for r in range(rows):
            for c in range(cols):
                k = int(view[r, c])
                ax.add_patch(plt.Rectangle((c, 4 - r), 1, 1, color=cmap(k), ec="white"))
                ax.text(c + 0.5, 4.5 - r, str(k), ha="center", va="center", fontsize=9)
        ax.set_xlim(0, 4)
        ax.set_ylim(0, 5)
        ax.set_aspect("equal")
        ax.axis("off")
        ax.set_title(f"{title}\nshape {list(view.shape)}, strides {element_strides(view)}",
                     fontsize=9)
    strip = fig.add_subplot(grid[1, :])
    for k in range(n):
        strip.add_patch(plt.Rectangle((k, 0), 1, 1, color=cmap(k), ec="white"))
        strip.text(k + 0.5, 0.5, str(k), ha="center", va="center", fontsize=9)
    strip.set_xlim(0, n)
    strip.set_ylim(0, 1)
    strip.set_aspect("equal")
    strip.axis("off")
    strip.set_title("the one buffer in memory (12 float32, positions 0-11)", fontsize=9)
    return fig


def draw_walks(buffer: np.ndarray, results: dict[str, np.ndarray]):
    """Each result of a reshape of ``buffer`` (values 0..n-1, so a value is the position it
    reads) drawn in row order, its last dim as a row of cells: a result of rank 1 on one line
    with the step between neighbours written under each gap (red where it is not the first
    step: no single stride reads that walk), a result of rank 3 as blocks of rows. The title
    says view (with the strides NumPy found) or copy, read from ``np.shares_memory``."""
    heights = [(r.shape[-2] if r.ndim == 3 else (1 if r.ndim == 1 else r.shape[0])) * 1.1
               + 0.65 for r in results.values()]  # each panel as tall as its rows
    fig, axes = plt.subplots(len(results), 1, figsize=(9.5, 0.7 * sum(heights) + 0.8),
                             gridspec_kw={"hspace": 0.8, "height_ratios": heights})
    widest = max(r.size + 0.6 * (r.shape[0] - 1 if r.ndim == 3 else 0)
                 for r in results.values())  # one scale for every panel, the widest fits
    for ax, (title, result) in zip(np.atleast_1d(axes), results.items()):
        shared = np.shares_memory(result, buffer)
        verdict = (f"a view, strides {element_strides(result)}" if shared
                   else "a copy (a new buffer)")
        ax.set_title(f"{title}: {verdict}", fontsize=9, loc="left",
                     color="tab:green" if shared else "tab:red")
        rows = result.reshape(-1, result.shape[-1])
        block = result.shape[-2] if result.ndim == 3 else len(rows)
        x0 = 0.0
        for r, row in enumerate(rows):
            if r and r % block == 0:
                x0 += 0.6  # a gap between blocks
            y = -(r % block) * 1.1
            for c, value in enumerate(row):
                ax.add_patch(plt.Rectangle((x0 + c, y), 1, 1, color="tab:blue", alpha=0.3,
                                           ec="white"))
                ax.text(x0 + c + 0.5, y + 0.5, str(int(value)), ha="center", va="center",
                        fontsize=9)
            if result.ndim == 1:
                steps = np.diff(row.astype(int))
                for c, step in enumerate(steps):
                    ax.text(x0 + c + 1, y - 0.35, f"{step:+d}", ha="center", va="center",
                            fontsize=8, color="tab:red" if step != steps[0] else "black")
            if r % block == block - 1:
                x0 += len(row)
        if result.ndim == 3 and shared:
            s0, s1, s2 = element_strides(result)
            ax.text(x0 + 0.8, -0.05, f"{s2:+d} along a row\n{s1:+d} down a row\n"
                    f"{s0:+d} to the next block", fontsize=8, va="center")
        if result.ndim == 2 and shared:
            s0, s1 = element_strides(result)
            ax.text(x0 + 0.8, -0.6, f"{s1:+d} along a row\n{s0:+d} down a row "
                    f"(from offset {element_offset(result, buffer)})", fontsize=8,
                    va="center")
        ax.set_xlim(-0.1, max(13.0, widest) + 0.3)
        ax.set_anchor("W")
        ax.set_ylim(-(block - 1) * 1.1 - 0.7, 1.05)
        ax.set_aspect("equal")
        ax.axis("off")
    return fig


def draw_broadcast(col: np.ndarray, row: np.ndarray, total: np.ndarray,
                   names: tuple[str, str] = ("col", "row"), row_first: bool = False):
    """Draw a ``[r, 1]`` operand, a ``[1, c]`` operand and their ``[r, c]`` sum: each operand
    stretched to the result's shape (its one real cell solid, the repeats pale, as a stride
    of 0 reads them), and the result's cells labelled with the two values they add.
    ``names`` titles the two operands' panels (column's first); ``row_first`` draws the
    sum as ``row + col`` (the row's panel first), for an expression written that way."""
    r, c = total.shape
    fig, axes = plt.subplots(1, 3, figsize=(9.5, 2.6))
    cmap = plt.get_cmap("tab10")
    first, second = names
    panels = [
        (f"{first}\nshape {list(col.shape)}, stretched", lambda i, j: (col[i, 0], i, j == 0)),
        (f"{second}\nshape {list(row.shape)}, stretched", lambda i, j: (row[0, j], j, i == 0)),
        (f"{first} + {second}\nshape {list(total.shape)}", None),
    ]
    if row_first:
        panels = [panels[1], panels[0], (f"{second} + {first}\nshape {list(total.shape)}", None)]
    for k, (ax, (title, cell)) in enumerate(zip(axes, panels, strict=True)):
        for i in range(r):
            for j in range(c):
                if cell is None:
                    colour, alpha = cmap(i), 0.35
                    label = (f"{row[0, j]:g}+{col[i, 0]:g}" if row_first
                             else f"{col[i, 0]:g}+{row[0, j]:g}")
                else:
                    value, hue, real = cell(i, j)
                    colour, alpha, label = cmap(hue + 5 * k), \
                        (0.9 if real else 0.3), f"{value:g}"
                ax.add_patch(plt.Rectangle((j, r - 1 - i), 1, 1, color=colour, alpha=alpha,
                                           ec="white"))
                ax.text(j + 0.5, r - 0.5 - i, label, ha="center", va="center", fontsize=8)
        ax.set_xlim(0, c)
        ax.set_ylim(0, r)
        ax.set_aspect("equal")
        ax.axis("off")
        ax.set_title(title, fontsize=9)
    fig.text(0.5, 0.02, "solid: the operand's own cells; pale: the same cells read again "
             "(stride 0)", ha="center", fontsize=8)
    return fig


def draw_float16_line(low: float = 2044.0, high: float = 2054.0):
    """The float16 numbers between ``low`` and ``high`` (spacing 1 below 2048, 2 above) as
    ticks on a line, with 2049 marked halfway between two of them and the tie's winner."""
    fig, ax = plt.subplots(figsize=(9.5, 1.6))
    values = np.arange(low, high + 1)
    representable = [v for v in values if float(np.float16(v)) == v]
    ax.axhline(0, color="grey", lw=1)
    for v in representable:
        ax.plot([v, v], [-0.25, 0.25], color="tab:blue", lw=2)
        ax.text(v, -0.55, f"{v:g}", ha="center", va="top", fontsize=9)
    ax.plot([2049], [0], "o", color="tab:orange")
    ax.annotate("2049: halfway, rounds to the even 2048", (2049, 0), (2049, 0.9),
                ha="center", fontsize=9, arrowprops={"arrowstyle": "-|>", "color": "tab:orange"})
    ax.text(low, 0.9, "spacing 1", fontsize=8, color="tab:blue")
    ax.text(high, 0.9, "spacing 2", fontsize=8, color="tab:blue", ha="right")
    ax.set_xlim(low - 0.5, high + 0.5)
    ax.set_ylim(-1.3, 1.4)
    ax.axis("off")
    ax.set_title("float16 numbers near 2048", fontsize=9)
    return fig


def draw_op_grid(ops: list[str], backends: dict, required: set[str], totals: str):
    """A grid of ``ops`` (rows) by ``backends`` (columns, name → class): each cell says whether
    the op is required (the backend writes it), a protocol default the backend keeps, or a
    default it overrides with its own body. ``totals`` is the figure's caption line."""
    from minidl.backend import defines

    colours = {"required": "tab:grey", "default": "tab:blue", "overridden": "tab:orange"}
    fig, ax = plt.subplots(figsize=(7.5, 0.32 * len(ops) + 1.2))
    for c, backend in enumerate(backends.values()):
        for r, op in enumerate(ops):
            kind = ("required" if op in required
                    else "overridden" if defines(backend, op) else "default")
            ax.add_patch(plt.Rectangle((c, len(ops) - 1 - r), 1, 1, ec="white",
                                       color=colours[kind], alpha=0.35 if kind != "overridden"
                                       else 0.8))
            ax.text(c + 0.5, len(ops) - 0.5 - r, "default, kept" if kind == "default" else kind,
                    ha="center", va="center", fontsize=8)
    for r, op in enumerate(ops):
        ax.text(-0.1, len(ops) - 0.5 - r, op, ha="right", va="center", fontsize=8,
                family="monospace")
    for c, name in enumerate(backends):
        ax.text(c + 0.5, len(ops) + 0.2, name, ha="center", va="bottom", fontsize=9)
    ax.set_xlim(-2.6, len(backends))
    ax.set_ylim(-0.1, len(ops) + 0.9)
    ax.axis("off")
    ax.set_title(totals, fontsize=9, y=1.05)
    return fig


def draw_division_line(a: int = -7, b: int = 2):
    """``a / b`` on a number line: the two quotients (toward zero: truncation, Rust's and
    minidl's ``/``; toward minus infinity: floor, Python's ``//``) at ``q * b``, and the
    remainder that pairs with each, the arrow from ``q * b`` to ``a``."""
    trunc = int(a / b)
    floor = a // b
    fig, ax = plt.subplots(figsize=(8.5, 2.3))
    lo, hi = min(floor * b, a) - 2, max(trunc * b, a) + 2
    ax.axhline(0, color="black", lw=0.8)
    for x in range(lo, hi + 1):
        ax.plot([x, x], [-0.06, 0.06], color="black", lw=0.8)
        ax.text(x, -0.22, str(x), ha="center", fontsize=9)
    ax.plot([a], [0], "o", color="black")
    ax.text(a, 0.14, f"a = {a}", ha="center", fontsize=9)
    for q, name, color, y in ((trunc, "truncate", "tab:green", 0.55),
                              (floor, "floor", "tab:orange", 0.95)):
        ax.plot([q * b], [0], "s", color=color)
        ax.annotate("", xy=(a, y - 0.12), xytext=(q * b, y - 0.12),
                    arrowprops={"arrowstyle": "->", "color": color, "lw": 1.5})
        ax.text((q * b + a) / 2, y, f"{name}: {a}/{b} → {q},  {q}×{b} = {q * b},  remainder "
                f"{a - q * b:+d}", ha="center", fontsize=9, color=color)
    ax.set_xlim(lo - 0.5, hi + 0.5)
    ax.set_ylim(-0.4, 1.15)
    ax.axis("off")
    ax.set_title(f"{a} = {b} × q + r, two ways: minidl's / truncates, its % floors",
                 fontsize=10, loc="left")
    return fig


def draw_reduce(fn, fn_name: str, shape: tuple, strides: tuple, dim: int,
                show_method: bool = True):
    """reduce_dim's trick on a 2-D row-order view of ``arange`` (a value is the position it
    reads): top, the view, each cell coloured by the output element it feeds; middle, the
    list read_view returns when ``dim`` is moved last (a permute: no copy), cut into runs of
    ``shape[dim]`` consecutive values; bottom, ``fn`` of each run, the output with ``dim``
    kept at size 1. ``show_method=False`` labels the middle row only as the runs (drawn
    above the exercise, it does not tell how to read them)."""
    rows, cols = shape
    other = 1 - dim
    moved_shape, moved_strides = (shape[other], shape[dim]), (strides[other], strides[dim])
    read = [i * moved_strides[0] + j * moved_strides[1]
            for i in range(moved_shape[0]) for j in range(moved_shape[1])]
    runs = [read[k:k + shape[dim]] for k in range(0, len(read), shape[dim])]
    out = [fn(run) for run in runs]
    cmap = plt.get_cmap("tab10")
    fig, ax = plt.subplots(figsize=(7.4, 3.6))
    fig.subplots_adjust(left=0.01, right=0.99)

    def cell(x, y, colour, label, w=1.0):
        ax.add_patch(plt.Rectangle((x, y), w, 0.8, color=colour, alpha=0.35, ec="white",
                                   lw=2))
        ax.text(x + w / 2, y + 0.4, label, ha="center", va="center", fontsize=10)

    for r in range(rows):
        for c in range(cols):
            k = c if dim == 0 else r  # the output element this cell feeds
            cell(c, 4.2 - r * 0.85, cmap(k), str(r * strides[0] + c * strides[1]))
    ax.text(-0.2, 3.8, f"view {list(shape)}, strides {tuple(strides)};\n"
            f"{fn_name} over dim {dim}", ha="right", va="center", fontsize=10)
    for k, run in enumerate(runs):
        for j, v in enumerate(run):
            cell(k * (len(run) + 0.4) + j, 1.3, cmap(k), str(v))
    middle = (f"read_view with dim {dim} last:\nshape {list(moved_shape)}, "
              f"strides {moved_strides}") if show_method else "one run per\noutput element"
    ax.text(-0.2, 1.7, middle, ha="right", va="center", fontsize=10)
    for k, (run, v) in enumerate(zip(runs, out, strict=True)):
        x0 = k * (len(run) + 0.4)
        cell(x0, 0.0, cmap(k), f"{fn_name} = {v}", w=len(run))
        ax.annotate("", xy=(x0 + len(run) / 2, 0.82), xytext=(x0 + len(run) / 2, 1.28),
                    arrowprops={"arrowstyle": "->", "color": "grey"})
    out_shape = [1, cols] if dim == 0 else [rows, 1]
    ax.text(-0.2, 0.4, f"out {out_shape}", ha="right", va="center", fontsize=10)
    width = len(runs) * (shape[dim] + 0.4)
    title = (f"reduce_dim({fn_name}, view, {dim}): move dim {dim} last, read, cut into "
             f"runs of {shape[dim]}") if show_method else (
        f"{fn_name} over dim {dim}: each output element is {fn_name} of one run of "
        f"{shape[dim]} positions")
    ax.set_title(title, fontsize=10)
    ax.set_xlim(-4.6, width)
    ax.set_ylim(-0.1, 5.1)
    ax.axis("off")
    return fig


def draw_runs(shape: tuple, strides: tuple, new_shapes: list[tuple], name: str = ""):
    """reshape_strides' three steps, drawn. Row 1: the old dims, one box each, a dim of size
    1 struck out (nothing steps along it, so its stride means nothing); under each meeting
    of two kept dims, the join test ``strides[d] == shape[d + 1] * strides[d + 1]``. Row 2:
    the runs, on an axis where a dim of size n is log(n) wide, so sizes multiply as widths
    add. Then each new shape cut from the right into the runs: a new dim inside one stretch is
    green, labelled with its stride; one that spans a stretch boundary is red (no single stride
    reads it: a copy). The verdict per row comes from the reference reshape_strides."""
    from minidl_book.build_reshape import reshape_strides

    dims = [(n, s) for n, s in zip(shape, strides, strict=True) if n != 1]
    runs: list[list] = []  # [[(n, s), ...], ...]
    for n, s in dims:
        if runs and runs[-1][-1][1] == n * s:
            runs[-1].append((n, s))
        else:
            runs.append([(n, s)])
    scale = 6.0 / sum(np.log(n) for n, _ in dims)  # the log axis spans 6 units

    def width(n):
        return scale * np.log(n)

    bounds, x = [], 0.0
    for run in runs:
        x += sum(width(n) for n, _ in run)
        bounds.append(x)
    total = bounds[-1]
    cmap = plt.get_cmap("tab10")
    rows = len(new_shapes) + 2
    fig, ax = plt.subplots(figsize=(7.4, 0.8 * rows + 1.0))
    fig.subplots_adjust(left=0.01, right=0.99)

    def box(x0, w, y, colour, label, alpha=0.35, **kw):
        ax.add_patch(plt.Rectangle((x0, y), w, 0.7, color=colour, alpha=alpha, ec="white",
                                   **kw))
        ax.text(x0 + w / 2, y + 0.35, label, ha="center", va="center", fontsize=10)

    def left(y, text):
        ax.text(-0.12, y + 0.35, text, ha="right", va="center", fontsize=10)

    # row 1: every old dim, equal widths; size 1 struck out; the join test between kept dims
    y, w, run_of = rows - 0.55, total / len(shape), {}
    for r, run in enumerate(runs):
        for dim in run:
            run_of[dim] = r
    kept_at = []
    for d, (n, s) in enumerate(zip(shape, strides, strict=True)):
        if n == 1:
            box(d * w, w, y, "grey", f"size 1, stride {s}\ndropped", alpha=0.2, hatch="//")
        else:
            box(d * w, w, y, cmap(run_of[(n, s)]), f"size {n}\nstride {s}")
            kept_at.append((d, n, s))
    for (d0, _, s0), (d1, n1, s1) in zip(kept_at, kept_at[1:]):
        joined = s0 == n1 * s1
        ax.text((d0 + d1 + 1) * w / 2, y - 0.3,
                f"{s0} = {n1} × {s1}\njoin" if joined else f"{s0} ≠ {n1} × {s1}\na jump",
                ha="center", va="center", fontsize=10,
                color="tab:green" if joined else "tab:red")
    step1 = "1. drop size 1" if 1 in shape else "1. the dims"
    left(y, f"{step1}\n{name or 'shape'} {list(shape)}\nstrides {tuple(strides)}")
    # row 2: the runs
    y, x = rows - 2, 0.0
    for r, run in enumerate(runs):
        size = int(np.prod([n for n, _ in run]))
        box(x, bounds[r] - x, y, cmap(r), f"stretch {r + 1}\n{size} elements\nsteps of "
            f"{run[-1][1]}", alpha=0.45)
        x = bounds[r]
    left(y, "2. merge into\nstretches")
    # rows 3...: new shapes, cut from the right
    for k, new in enumerate(new_shapes):
        y, x = rows - 3 - k, 0.0
        found = reshape_strides(tuple(shape), tuple(strides), tuple(new))
        for d, n in enumerate(new):
            if n == 1:
                continue
            end = x + width(n)
            spans = any(x + 1e-9 < b < end - 1e-9 for b in bounds)
            label = f"{n}" if found is None else f"{n}, stride {found[d]}"
            box(x, width(n), y, "tab:red" if spans else "tab:green", label,
                alpha=0.45 if spans else 0.3)
            x = end
        verdict = "copy" if found is None else f"view,\nstrides {found}"
        left(y, ("3. cut from the right\n" if k == 0 else "") + f"→ {list(new)}")
        ax.text(total + 0.1, y + 0.35, verdict, ha="left", va="center", fontsize=10,
                color="tab:red" if found is None else "tab:green")
    for b in bounds[:-1]:
        ax.plot([b, b], [-0.1, rows - 1.25], ls="--", color="grey", lw=1)
    ax.set_xlim(-2.3, total + 1.6)
    ax.set_ylim(-0.2, rows + 0.2)
    ax.axis("off")
    ax.set_title("from row 2: widths ∝ log(size), so sizes multiply as widths add; dashed: "
                 "where a stretch ends", fontsize=10)
    return fig


def draw_arc_count():
    """burn-flex's in-place test, drawn: a FlexTensor's buffer sits in an ``Arc``, each
    handle (a tensor or its clone) is one count. ``x + y`` when ``x``'s buffer has count 1
    (no one else holds it), ``x`` is in row order from offset 0 and ``y`` is contiguous (not
    broadcast; binary.rs:89 with SIMD, :354 without, at v0.22.0-pre.2; two broadcast shapes
    also reuse it, :252): the sum overwrites that buffer and becomes ``z``. After
    ``x.clone()`` the count is 2: ``add`` writes a new buffer, and ``x`` still reads the
    old values."""
    fig, axes = plt.subplots(1, 2, figsize=(7.4, 2.6))
    fig.subplots_adjust(left=0.01, right=0.99, wspace=0.04)
    handle = {"boxstyle": "round,pad=0.3", "fc": "#eef3fb", "ec": "tab:blue"}
    moved = {"boxstyle": "round,pad=0.3", "fc": "#f2f2f2", "ec": "grey", "ls": "--"}

    def buffer(ax, x, y, label, count, color):
        ax.text(x, y, f"{label}\nArc count {count}", ha="center", va="center", fontsize=9,
                bbox={"boxstyle": "square,pad=0.4", "fc": "white", "ec": color, "lw": 2})

    def arrow(ax, start, end, color="tab:blue", style="-"):
        ax.annotate("", xy=end, xytext=start,
                    arrowprops={"arrowstyle": "->", "color": color, "lw": 1.4, "ls": style})

    ax = axes[0]
    ax.text(0.18, 0.80, "x\n(moved into add)", ha="center", va="center", fontsize=9,
            bbox=moved, color="grey")
    buffer(ax, 0.55, 0.45, "buffer [1, 2, 3]\n→ [1+y0, 2+y1, 3+y2]", 1, "tab:green")
    ax.text(0.90, 0.80, "z", ha="center", va="center", fontsize=10, bbox=handle)
    arrow(ax, (0.22, 0.70), (0.45, 0.57), "grey", "--")
    arrow(ax, (0.88, 0.72), (0.68, 0.57))
    ax.text(0.55, 0.06, "count 1, x in row order:\n"
            "add writes the sum in place",
            ha="center", fontsize=9, color="tab:green")
    ax.set_title("let z = x + y;", fontsize=10, family="monospace", loc="left")

    ax = axes[1]
    ax.text(0.12, 0.82, "x", ha="center", va="center", fontsize=10, bbox=handle)
    ax.text(0.42, 0.82, "x.clone()\n(moved into add)", ha="center", va="center",
            fontsize=9, bbox=moved, color="grey")
    buffer(ax, 0.25, 0.40, "buffer [1, 2, 3]\nunchanged", 2, "tab:red")
    buffer(ax, 0.78, 0.40, "new buffer\n[1+y0, 2+y1, 3+y2]", 1, "tab:blue")
    ax.text(0.80, 0.82, "z", ha="center", va="center", fontsize=10, bbox=handle)
    arrow(ax, (0.12, 0.74), (0.18, 0.53))
    arrow(ax, (0.40, 0.71), (0.32, 0.53), "grey", "--")
    arrow(ax, (0.80, 0.75), (0.78, 0.53))
    ax.text(0.50, 0.03, "count 2: x still reads it,\nadd writes a new buffer",
            ha="center", fontsize=9, color="tab:red")
    ax.set_title("let z = x.clone() + y;", fontsize=10, family="monospace", loc="left")
    for ax in axes:
        ax.set_xlim(0, 1)
        ax.set_ylim(0, 1)
        ax.axis("off")
    fig.suptitle("burn-flex: who may write into a buffer is decided by its Arc count",
                 fontsize=10, x=0.02, ha="left", y=1.08)
    return fig


def draw_zip(a, b, out_shape: tuple, a_strides: tuple, b_strides: tuple):
    """An element-wise op's walk: ``a``'s buffer on top, ``b``'s at the bottom, the output's
    new buffer between them. For each output element (row order) an arrow comes from the
    position each operand reads, ``offset + sum(index[d] * strides[d])`` with the operand's
    strides over ``out_shape`` (``a_strides``, ``b_strides``: a stride of 0 repeats).
    ``a`` and ``b`` have ``buffer`` and ``offset`` fields (``build_zip.View``)."""
    indices = list(np.ndindex(*out_shape))
    fig, ax = plt.subplots(figsize=(7.5, 3.4))
    w, h = 1.5, 0.7  # a cell
    levels = {"a": 3.0, "out": 1.5, "b": 0.0}
    strips = {"a": [f"{k}: {v:g}" for k, v in enumerate(a.buffer)],
              "out": ["[" + ", ".join(map(str, i)) + "]" for i in indices],
              "b": [f"{k}: {v:g}" for k, v in enumerate(b.buffer)]}
    colours = {"a": "tab:blue", "out": "tab:green", "b": "tab:orange"}
    widest = max(map(len, strips.values()))
    left = {name: (widest - len(cells)) * w / 2 for name, cells in strips.items()}
    for name, cells in strips.items():
        for k, label in enumerate(cells):
            x0 = left[name] + k * w
            ax.add_patch(plt.Rectangle((x0, levels[name]), w, h, color=colours[name],
                                       alpha=0.3, ec="white", lw=2))
            ax.text(x0 + w / 2, levels[name] + h / 2, label, ha="center", va="center",
                    fontsize=11)
    titles = {"a": f"a.buffer, offset {a.offset}; read as {list(out_shape)} with strides "
                   f"{a_strides}",
              "out": f"the output, a new buffer: shape {list(out_shape)}, row order",
              "b": f"b.buffer, offset {b.offset}; read as {list(out_shape)} with strides "
                   f"{b_strides}"}
    for name, title in titles.items():
        ax.text(left[name] + len(strips[name]) * w + 0.15, levels[name] + h / 2, title,
                va="center", fontsize=10.5, color=colours[name])
    for k, index in enumerate(indices):
        x_out = left["out"] + k * w + w / 2
        for name, view, strides in (("a", a, a_strides), ("b", b, b_strides)):
            pos = view.offset + sum(i * s for i, s in zip(index, strides, strict=True))
            x_in = left[name] + pos * w + w / 2
            y_in, y_out = ((levels["a"], levels["out"] + h) if name == "a"
                           else (levels["b"] + h, levels["out"]))
            ax.annotate("", xy=(x_out, y_out), xytext=(x_in, y_in),
                        arrowprops={"arrowstyle": "-|>", "color": colours[name],
                                    "lw": 1.2, "alpha": 0.8})
    ax.set_xlim(-0.1, widest * w + 6.2)
    ax.set_ylim(-0.1, levels["a"] + h + 0.1)
    ax.set_aspect("equal")
    ax.axis("off")
    return fig


def draw_kept_dim(x: np.ndarray):
    """The two rules at work on ``x - mean over dim 1`` for a ``[2, 3]`` x. Left: the mean
    keeps its dim (``[2, 1]``), so the shapes line up dim by dim and the column stretches
    over the 3. Right: PyTorch's ``mean(1)`` drops it (``[2]``), broadcasting pads ``[2]``
    on the left to ``[1, 2]``, and its 2 meets x's 3: an error."""
    rows, cols = x.shape
    mean = x.mean(axis=1)
    fig, axes = plt.subplots(1, 2, figsize=(7.4, 1.75))
    fig.subplots_adjust(left=0.01, right=0.99, bottom=0.0, top=0.76, wspace=0.05)

    def cell(ax, cx, cy, text, colour="tab:blue", alpha=0.3, ls="-"):
        ax.add_patch(plt.Rectangle((cx, cy), 1, 1, fc=colour, alpha=alpha, ec="white"))
        if ls != "-":
            ax.add_patch(plt.Rectangle((cx, cy), 1, 1, fill=False, ec="grey", ls=ls))
        ax.text(cx + 0.5, cy + 0.5, text, ha="center", va="center", fontsize=9)

    for ax, kept in zip(axes, (True, False), strict=True):
        for r in range(rows):
            for c in range(cols):
                cell(ax, c, rows - 1 - r, f"{x[r, c]:g}")
        ax.text(cols + 0.5, rows / 2, "−", ha="center", va="center", fontsize=14)
        if kept:
            for r in range(rows):
                cell(ax, cols + 1, rows - 1 - r, f"{mean[r]:g}", "tab:orange", 0.45)
                for c in range(1, cols):
                    cell(ax, cols + 1 + c, rows - 1 - r, f"{mean[r]:g}", "tab:orange",
                         0.12, "--")
            ax.set_title("minidl, burn: mean_dim(1) is [2, 1]\n[2, 3] − [2, 1]: "
                         "the 1 stretches", fontsize=9)
            ax.text(cols + 2.5, -0.45, "→ [2, 3]", ha="center", fontsize=9,
                    color="tab:green")
        else:
            for c in range(rows):
                cell(ax, cols + 2 + c, rows - 1, f"{mean[c]:g}", "tab:orange", 0.45)
            ax.set_title("PyTorch: mean(1) is [2], padded to [1, 2]\n[2, 3] − [1, 2]: "
                         "3 meets 2", fontsize=9)
            ax.text(cols + 2.5, -0.45, "error: 3 ≠ 2", ha="center",
                    fontsize=9, color="tab:red")
        ax.set_xlim(-0.2, 2 * cols + 1.2)
        ax.set_ylim(-0.8, rows + 0.1)
        ax.set_aspect("equal")
        ax.axis("off")
    return fig

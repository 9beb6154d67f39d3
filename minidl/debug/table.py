"""A small table that prints as aligned text and renders as HTML in a notebook (no pandas)."""

from __future__ import annotations

from collections.abc import Sequence
from html import escape

__trace_hide__ = True


class Table:
    """Rows of cells under ``headers``; ``str()`` aligns columns, ``_repr_html_`` is a ``<table>``.

    ``title`` is printed above the rows; ``notes`` (lines) below them. Cells are any values,
    shown with ``str``. Index like a list of rows, or use :meth:`column` / :meth:`row`.
    """

    def __init__(self, headers: Sequence[str], rows: Sequence[Sequence[object]], title: str = "",
                 notes: Sequence[str] = ()):
        self.headers = list(headers)
        self.rows = [list(r) for r in rows]
        self.title = title
        self.notes = list(notes)

    def column(self, header: str) -> list[object]:
        """The cells under ``header``."""
        i = self.headers.index(header)
        return [r[i] for r in self.rows]

    def row(self, first: object) -> dict[str, object]:
        """The row whose first cell is ``first``, as ``{header: cell}``."""
        for r in self.rows:
            if r[0] == first:
                return dict(zip(self.headers, r))
        raise KeyError(first)

    def __len__(self) -> int:
        return len(self.rows)

    def __getitem__(self, i: int) -> list[object]:
        return self.rows[i]

    def __iter__(self):
        return iter(self.rows)

    def __str__(self) -> str:
        cells = [self.headers] + [[str(c) for c in r] for r in self.rows]
        widths = [max(len(r[i]) for r in cells) for i in range(len(self.headers))]
        fmt = "  ".join(f"{{:<{w}}}" for w in widths)
        lines = [self.title] if self.title else []
        lines.append(fmt.format(*self.headers).rstrip())
        lines.append("  ".join("-" * w for w in widths))
        lines += [fmt.format(*r).rstrip() for r in cells[1:]]
        lines += self.notes
        return "\n".join(lines)

    def __repr__(self) -> str:
        return str(self)

    def _repr_html_(self) -> str:
        head = "".join(f"<th>{escape(h)}</th>" for h in self.headers)
        body = "".join(
            "<tr>" + "".join(f"<td>{escape(str(c))}</td>" for c in r) + "</tr>" for r in self.rows
        )
        caption = f"<caption>{escape(self.title)}</caption>" if self.title else ""
        notes = "".join(f"<p>{escape(n)}</p>" for n in self.notes)
        # "table" picks up the book theme's table style (cell padding, rules between rows)
        return (f'<table class="minidl-table table">{caption}<thead><tr>{head}</tr></thead>'
                f"<tbody>{body}</tbody></table>{notes}")

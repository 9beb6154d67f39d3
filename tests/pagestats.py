"""What a reader meets on a built chapter page, measured as the reader panel measures it: the
page's readable text (prose, code, outputs, exercise and solution boxes, folded or not), the
code lines shown unfolded, how many of those are test plumbing (``assert``, ``glue(``), and the
length of the first code cell shown unfolded. Stdlib only; the book's budget tests in
tests/test_site.py read the build through it.

A cell counts as shown when its input is neither removed nor folded (tags remove-input,
remove-cell, hide-input, hide-cell).
"""

from __future__ import annotations

import html.parser
from pathlib import Path

SKIP = {"script", "style", "nav", "header", "footer", "noscript", "svg"}
BLOCK = {
    "p",
    "div",
    "section",
    "pre",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "li",
    "tr",
    "table",
    "details",
    "summary",
    "dt",
    "dd",
    "blockquote",
    "aside",
    "figure",
    "figcaption",
    "br",
}


class Text(html.parser.HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.out, self.skip, self.pre, self.stack = [], 0, 0, []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        cls = a.get("class", "") or ""
        self.stack.append(tag)
        if (
            tag in SKIP
            or "bd-sidebar" in cls
            or "headerlink" in cls
            or "prev-next" in cls
            or "bd-header" in cls
            or "toc" in cls.split()
        ):
            self.skip += 1
            self.stack[-1] = ("SKIP", tag)
            return
        if self.skip:
            return
        if tag == "pre":
            self.pre += 1
            kind = "OUTPUT" if "output" in self._ctx() else "CODE"
            self.out.append(f"\n[{kind}]\n")
        elif tag in ("h1", "h2", "h3", "h4"):
            self.out.append("\n\n" + "#" * int(tag[1]) + " ")
        elif tag == "div" and ("exercise" in cls or "solution" in cls or "admonition" in cls):
            label = (
                "SOLUTION" if "solution" in cls else ("EXERCISE" if "exercise" in cls else "BOX")
            )
            self.out.append(f"\n[{label} {cls.split()[0] if cls else ''}]\n")
        elif tag == "img":
            self.out.append(f"[image: {a.get('alt') or a.get('src')}]")
        elif tag in BLOCK:
            self.out.append("\n")
        self._cls = cls

    def _ctx(self):
        return " ".join(str(s) for s in self.stack[-6:]) + " " + getattr(self, "_cls", "")

    def handle_endtag(self, tag):
        while self.stack:
            top = self.stack.pop()
            if isinstance(top, tuple):
                self.skip -= 1
                if top[1] == tag:
                    break
                continue
            if top == tag:
                break
        if self.skip:
            return
        if tag == "pre":
            self.pre -= 1
            self.out.append("\n[/]\n")
        elif tag in BLOCK:
            self.out.append("\n")

    def handle_data(self, data):
        if self.skip:
            return
        if self.pre:
            self.out.append(data)
            return
        core = " ".join(data.split())
        lead = " " if data[:1].isspace() else ""
        trail = " " if data[-1:].isspace() and core else ""
        self.out.append(lead + core + trail)


FOLDED = ("tag_hide-input", "tag_hide-cell", "tag_remove-input", "tag_remove-cell")


class Cells(html.parser.HTMLParser):
    """Collects the text of each code cell's input, with whether the cell is folded."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.cells, self.depth, self.cell_depth, self.in_input, self.input_depth = (
            [],
            0,
            None,
            False,
            None,
        )
        self.folded = False
        self.buf = []

    def handle_starttag(self, tag, attrs):
        if tag != "div":
            return
        self.depth += 1
        cls = dict(attrs).get("class", "") or ""
        names = cls.split()
        if "cell" in names and self.cell_depth is None:
            self.cell_depth, self.folded = self.depth, any(f in names for f in FOLDED)
        elif "cell_input" in names and self.cell_depth is not None:
            self.in_input, self.input_depth, self.buf = True, self.depth, []

    def handle_endtag(self, tag):
        if tag != "div":
            return
        if self.in_input and self.depth == self.input_depth:
            self.cells.append((self.folded, "".join(self.buf)))
            self.in_input = False
        if self.cell_depth is not None and self.depth == self.cell_depth:
            self.cell_depth = None
        self.depth -= 1

    def handle_data(self, data):
        if self.in_input:
            self.buf.append(data)


def stats(path: Path) -> dict:
    p = Cells()
    p.feed(path.read_text(encoding="utf-8"))
    shown = [src for folded, src in p.cells if not folded]
    lines = [ln for src in shown for ln in src.splitlines() if ln.strip()]
    plumbing = [ln for ln in lines if ln.lstrip().startswith("assert") or "glue(" in ln]
    first = next((src for src in shown), "")
    t = Text()
    t.feed(path.read_text(encoding="utf-8"))
    return {
        "kb": len("".join(t.out).encode()) / 1024,
        "cells": len(p.cells),
        "shown": len(shown),
        "code_lines": len(lines),
        "plumbing": len(plumbing),
        "first_cell": len([ln for ln in first.splitlines() if ln.strip()]),
    }

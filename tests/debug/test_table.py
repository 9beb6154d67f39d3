"""debug.Table: aligned text for print, an HTML table the book's theme styles."""

from __future__ import annotations

import re

from minidl.debug import Table


def test_table_html_carries_the_theme_table_class_and_escapes_cells():
    table = Table(["name", "value"], [["<a>", 1], ["b", 2.5]], title="t")
    html = table._repr_html_()
    classes = re.search(r'<table class="([^"]*)"', html).group(1).split()
    assert "table" in classes and "minidl-table" in classes
    assert "&lt;a&gt;" in html and "<a>" not in html
    assert html.count("<tr>") == 3  # the header row and two rows


def test_table_text_aligns_columns():
    lines = str(Table(["a", "long header"], [["xyz", 1]])).splitlines()
    assert lines[0].index("long header") == lines[2].index("1")

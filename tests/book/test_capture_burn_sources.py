"""The capture chapter's "burn's Graph beside minidl's" section: every file:line its Sources
dropdown cites holds the item it names, at v0.22.0-pre.2 and (where the dropdown gives a
main line) on burn's main; graph.rs is the same file on both, as the dropdown says; and the
Rust block uses only the items cited (fast: git reads, nothing executed)."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest
from booktools import chapter_path

BURN = Path("/work/.mirror/tracel-ai+burn/repo")
TAG, MAIN = "v0.22.0-pre.2", "HEAD"
GRAPH = "crates/burn-tensor/src/tensor/api/graph.rs"
BASE = "crates/burn-tensor/src/tensor/api/base.rs"

#: (file, first line, last line, text one of those lines holds, line on main or None)
CITED = [
    (GRAPH, 42, 45, "pub fn capture", None),
    (GRAPH, 42, 45, "F: FnMut() -> T", None),
    (GRAPH, 13, 16, "**stable** buffers", None),
    (GRAPH, 18, 24, "nothing tracking them", None),
    (GRAPH, 128, 128, "pub unsafe fn replay(&mut self) -> &T", None),
    (GRAPH, 135, 137, "self.output = (self.closure)()", None),
    (GRAPH, 142, 146, "pub fn output(&self) -> &T", None),
    (GRAPH, 142, 146, "the same buffer is overwritten each time", None),
    (BASE, 118, 118, "pub fn inplace", 121),
    (BASE, 1385, 1385, "pub fn slice_assign", 1388),
    ("crates/burn-optim/src/optim/grads.rs", 28, 28, "pub fn from_grads", None),
    ("crates/burn-optim/src/optim/module/module_optimizer.rs", 163, 163, "pub fn step", None),
    ("crates/burn-nn/src/loss/cross_entropy.rs", 129, 129, "pub fn forward", None),
]

pytestmark = pytest.mark.skipif(not BURN.exists(), reason="no burn mirror on this machine")


def _lines(rev: str, path: str) -> list[str]:
    out = subprocess.run(["git", "-C", str(BURN), "show", f"{rev}:{path}"],
                         capture_output=True, text=True, check=True).stdout
    return out.splitlines()


def _section() -> str:
    text = chapter_path("chapters/capture").read_text(encoding="utf-8")
    return text[text.index("(cap-burn)="):text.index("## The traps")]


@pytest.mark.parametrize("path, first, last, item, main_line", CITED)
def test_each_cited_line_holds_its_item(path, first, last, item, main_line):
    lines = _lines(TAG, path)[first - 1:last]
    assert any(item in line for line in lines), (path, first, last, item)
    if main_line is not None:
        assert item in _lines(MAIN, path)[main_line - 1], (path, main_line, item)


def test_the_dropdown_cites_these_lines():
    sources = _section().split(":::{dropdown} Sources", 1)[1].split(":::", 1)[0]
    for path, first, last, _, main_line in CITED:
        where = f":{first}" if first == last else f":{first}-{last}"
        assert where in sources and Path(path).name in sources, (path, where)
        if main_line is not None:
            assert f"main `:{main_line}`" in sources or f":{main_line}`" in sources


def test_graph_rs_is_the_same_on_main():
    assert _lines(TAG, GRAPH) == _lines(MAIN, GRAPH)


def test_the_rust_block_uses_the_cited_items():
    rust = _section().split("```rust", 1)[1].split("```", 1)[0]
    for name in ("burn::tensor::capture", "GradientsParams::from_grads", ".backward()",
                 "optim.step(", ".inplace(", ".slice_assign(", "unsafe { graph.replay() }",
                 "graph.output()", "loss_fn.forward("):
        assert name in rust, name
    assert max(len(line) for line in rust.splitlines()) <= 88
    exported = "\n".join(_lines(TAG, "crates/burn-tensor/src/tensor/api/mod.rs"))
    assert re.search(r"pub use graph::\{Graph, capture\};", exported)

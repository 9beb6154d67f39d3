"""The tensors chapter's trimmed WGSL listing names each slot of ``p`` it uses and sends the
reader to the figure of ``p`` (which labels every slot), without the p[index] scheme."""

import re

from minidl.backends.wgpu import shaders
from minidl_book import gpu_lab


def test_every_slot_name_in_the_listing_is_a_slot_of_the_figure():
    source = shaders.map_kernel(("f32", "f32"), "f32", "x0 - x1")
    text = gpu_lab.named(source, 2)
    comment = "\n".join(line for line in text.splitlines() if line.startswith("//"))
    assert "slots of p, drawn below" in comment and "p[" not in comment
    body = text[text.index("fn main"):]
    assert "p[" not in body
    assert set(re.findall(r"\b(off_\w+|strides_\w+)", body)) == {
        "off_a0", "off_a1", "off_out", "strides_a0", "strides_a1", "strides_out"}

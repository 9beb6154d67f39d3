"""The tensors chapter's trimmed WGSL listing says which slot of ``p`` each name it uses is
(a reader found ``off_a0``, ``shape[d]`` and ``strides_a0[d]`` used and never defined)."""

import re

from minidl.backends.wgpu import shaders
from minidl_book import gpu_lab


def test_every_slot_name_in_the_listing_is_tied_to_its_p_index():
    source = shaders.map_kernel(("f32", "f32"), "f32", "x0 - x1")
    text = gpu_lab.named(source, 2)
    comment = "\n".join(line for line in text.splitlines() if line.startswith("//"))
    first = shaders.map_layout(2)[0]
    assert "shape[d] = p[2 + d]" in comment
    assert f"off_a0 = p[{first}]" in comment
    assert f"strides_a0[d] = p[{first + 1} + d]" in comment
    body = text[text.index("fn main"):]
    assert "p[" not in body
    assert set(re.findall(r"\b(off_\w+|strides_\w+)", body)) == {
        "off_a0", "off_a1", "off_out", "strides_a0", "strides_a1", "strides_out"}

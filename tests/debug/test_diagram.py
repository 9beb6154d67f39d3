"""Path diagrams: valid SVG, one box per frame of the path, coloured by layer."""

from __future__ import annotations

import xml.etree.ElementTree as ET

from minidl.debug import merge_paths, path_diagram, trace
from minidl.debug.diagram import COLORS

from .support import backend_name, device, need, tensor

SVG = "{http://www.w3.org/2000/svg}"


def _boxes(svg: str) -> dict[str, str]:
    """First label line of every node → its fill colour."""
    root = ET.fromstring(svg)
    assert root.tag == f"{SVG}svg"
    out = {}
    for g in root.iter(f"{SVG}g"):
        if g.get("class") != "node":
            continue
        shape = next(c for c in g if c.tag in (f"{SVG}rect", f"{SVG}polygon"))
        first = next(g.iter(f"{SVG}tspan")).text
        out[first] = shape.get("fill")
    return out


def _linear_trace(kind):
    dev = device(kind, autodiff=True)
    layer = need("minidl.nn", "LinearConfig")(4, 2).init(dev)
    x = tensor((4, 4), dev)
    return trace(lambda: layer.forward(x), breakpoints=[rf"^{backend_name(kind)}\.float_matmul$"], echo=False)


def test_diagram_is_valid_svg_naming_each_frame_of_the_path(kind):
    t = _linear_trace(kind)
    diagram = path_diagram(t)
    boxes = _boxes(diagram.svg())
    chain = t.chain(kernels=True)
    assert list(boxes) == chain
    assert diagram.names == chain
    assert diagram._repr_svg_().startswith("<svg") and "<svg" in diagram._repr_html_()


def test_boxes_are_coloured_by_layer(kind):
    boxes = _boxes(path_diagram(_linear_trace(kind)).svg())
    inner = backend_name(kind)
    assert boxes["Linear.forward"] == COLORS["nn"][0]
    assert boxes["module.linear"] == COLORS["tensor"][0]
    assert boxes["Dispatch.linear"] == COLORS["dispatch"][0]
    assert boxes[f"Autodiff[{inner}].float_matmul"] == COLORS["autodiff"][0]
    assert boxes[f"{inner}.float_matmul"] == COLORS["backend"][0]
    for name, fill in boxes.items():
        if name.startswith("kernel "):
            assert fill == COLORS["kernel"][0]


def test_legend_names_the_layers_drawn():
    svg = path_diagram(["Linear.forward", "module.linear", "Dispatch.linear", "Flex.float_matmul"]).svg()
    root = ET.fromstring(svg)
    legend = next(g for g in root.iter(f"{SVG}g") if g.get("class") == "legend")
    assert [t.text for t in legend.iter(f"{SVG}text")] == ["nn", "tensor", "dispatch", "backend"]


def test_merged_paths_share_boxes_and_keep_every_frame(kind):
    dev = device(kind, autodiff=True)
    inner = backend_name(kind)
    nn = need("minidl.nn")
    lin = nn.LinearConfig(4, 2).init(dev)
    ln = nn.LayerNormConfig(4).init(dev)
    x = tensor((3, 4), dev)
    t1 = trace(lambda: lin.forward(x), breakpoints=[rf"^{inner}\.float_matmul$"], echo=False)
    t2 = trace(lambda: ln.forward(x), breakpoints=[rf"^{inner}\.float_mean_dim$"], echo=False)
    merged = merge_paths(t1, t2, kernels=False)
    names = set(merged.names)
    assert names == set(t1.chain()) | set(t2.chain())
    assert len(merged.names) == len(names)  # a shared frame is one box
    ET.fromstring(merged.svg())


def test_a_forwarder_and_a_default_of_one_name_get_two_boxes():
    # Dispatch.linear as a protocol default and as a generated forwarder: label what ran
    from minidl.debug.trace import Frame

    def frame(name, note):
        return Frame(0, name, "minidl/x.py", 1, "", "dispatch", note, True, True)

    default = [frame("Flex.float_matmul", ""), frame("Dispatch.linear", "ModuleOps default")]
    forwarded = [frame("Flex.float_matmul", ""), frame("Dispatch.linear", "")]
    merged = merge_paths(default, forwarded, kernels=False)
    assert merged.names.count("Dispatch.linear") == 2 and merged.names.count("Flex.float_matmul") == 1
    labels = list(merged.chart.nodes.values())
    assert "Dispatch.linear\n(ModuleOps default)" in labels and "Dispatch.linear" in labels

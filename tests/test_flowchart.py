"""minidl.debug.flowchart: valid SVG, every label drawn, edges drawn, text escaped, layout."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

import pytest

from minidl.debug.flowchart import Flowchart, from_edges

SVG = "{http://www.w3.org/2000/svg}"


def parse(fc: Flowchart) -> ET.Element:
    root = ET.fromstring(fc.svg())  # raises on invalid XML
    assert root.tag == f"{SVG}svg"
    return root


def node_texts(root: ET.Element) -> dict[str, str]:
    """node id -> its label, lines joined by newlines, as the SVG holds them."""
    out = {}
    for g in root.iter(f"{SVG}g"):
        if g.get("class") == "node":
            spans = g.findall(f"{SVG}text/{SVG}tspan")
            out[g.get("data-id")] = "\n".join(s.text or "" for s in spans)
    return out


def node_boxes(root: ET.Element) -> dict[str, tuple[float, float, float, float]]:
    """node id -> (x, y, w, h) of its rect (boxes only)."""
    out = {}
    for g in root.iter(f"{SVG}g"):
        rect = g.find(f"{SVG}rect")
        if g.get("class") == "node" and rect is not None:
            out[g.get("data-id")] = tuple(float(rect.get(k)) for k in ("x", "y", "width", "height"))
    return out


def nn_modules_call_path() -> Flowchart:
    """The burn book's nn-modules chart: three forwards converging on the backend."""
    fc = Flowchart()
    labels = {
        "lin": "Linear forward",
        "flin": "module linear",
        "conv": "Conv2d forward",
        "fconv": "module conv2d",
        "dlin": "Dispatch linear default",
        "mm": "Dispatch float_matmul and add",
        "dconv": "Dispatch conv2d",
        "ad": "Autodiff or inner backend",
        "be": "Flex or Fusion",
    }
    for k, v in labels.items():
        fc.node(k, v)
    edges = [
        ("lin", "flin"),
        ("conv", "fconv"),
        ("flin", "dlin"),
        ("dlin", "mm"),
        ("fconv", "dconv"),
        ("mm", "ad"),
        ("dconv", "ad"),
        ("ad", "be"),
    ]
    for a, b in edges:
        fc.edge(a, b)
    return fc


def dropout_decision() -> Flowchart:
    """The train-vs-inference chapter's decision: flag on? -> input on an autodiff device? -> drop."""
    fc = Flowchart()
    fc.node("flag", "training flag on?", shape="diamond")
    fc.node("dev", "input on an\nautodiff device?", shape="diamond")
    fc.node("drop", "drop, scale by 1/(1-p)", shape="round")
    fc.node("keep", "return input", shape="round")
    fc.edge("flag", "dev", "yes").edge("flag", "keep", "no")
    fc.edge("dev", "drop", "yes").edge("dev", "keep", "no")
    return fc


def test_svg_is_valid_xml_with_every_label_and_edge():
    fc = nn_modules_call_path()
    root = parse(fc)
    texts = node_texts(root)
    assert texts == fc.nodes  # every node drawn once, with its full label
    paths = [p for p in root.iter(f"{SVG}path") if p.get("class") == "edge"]
    drawn = sorted((p.get("data-from"), p.get("data-to")) for p in paths)
    assert drawn == sorted((a, b) for a, b, _ in fc.edges)
    for p in paths:
        assert p.get("d").startswith("M") and p.get("marker-end", "").startswith("url(#")


def test_layers_flow_top_to_bottom_and_nodes_do_not_overlap():
    root = parse(nn_modules_call_path())
    box = node_boxes(root)
    # longest-path layering: every edge points down, and ad sits below both mm and dconv
    for a, b in [("lin", "flin"), ("flin", "dlin"), ("dlin", "mm"), ("mm", "ad"), ("ad", "be")]:
        assert box[a][1] + box[a][3] <= box[b][1]
    assert box["ad"][1] > box["mm"][1] > box["dconv"][1]
    items = list(box.values())
    for i, (x, y, w, h) in enumerate(items):
        for x2, y2, w2, h2 in items[i + 1 :]:
            assert x + w <= x2 or x2 + w2 <= x or y + h <= y2 or y2 + h2 <= y
    width = float(root.get("width"))
    assert all(x >= 0 and x + w <= width for x, _, w, _ in items)


def test_edge_labels_and_dashes():
    fc = dropout_decision().edge("keep", "flag", dashed=True)  # a back edge (a cycle)
    root = parse(fc)
    labels = ["".join(g.itertext()) for g in root.iter(f"{SVG}g") if g.get("class") == "edge-label"]
    assert sorted(labels) == ["no", "no", "yes", "yes"]
    dashed = [p for p in root.iter(f"{SVG}path") if p.get("stroke-dasharray")]
    assert [(p.get("data-from"), p.get("data-to")) for p in dashed] == [("keep", "flag")]
    assert len(list(root.iter(f"{SVG}polygon"))) == 2  # two diamonds
    assert node_texts(root)["dev"] == "input on an\nautodiff device?"  # two lines


def test_text_is_escaped():
    nasty = 'a < b && c > "d" </svg><script>alert(1)</script>'
    fc = Flowchart().node("x", nasty).edge("x", "y&z", label="<yes>")
    svg = fc.svg()
    assert "<script>" not in svg and "</svg><" not in svg
    root = parse(fc)
    assert node_texts(root) == {"x": nasty, "y&z": "y&z"}
    assert not list(root.iter(f"{SVG}script"))


def test_multiline_monospace_label_keeps_spaces_and_left_aligns():
    label = "frame #4: Flex.float_matmul\nframe #5:   Autodiff[Flex]"
    fc = Flowchart().node("f", label, align="left")
    root = parse(fc)
    text = next(t for t in root.iter(f"{SVG}text"))
    assert text.get("text-anchor") == "start"
    assert text.get("{http://www.w3.org/XML/1998/namespace}space") == "preserve"
    assert node_texts(root)["f"] == label
    wide = node_boxes(parse(Flowchart().node("w", "x" * 60)))["w"][2]
    narrow = node_boxes(parse(Flowchart().node("n", "x" * 6)))["n"][2]
    assert wide > 5 * narrow  # boxes grow with the text


def test_chain_draws_a_call_path_in_order():
    frames = ["Linear.forward", "module.linear", "Dispatch.linear", "Flex.float_matmul"]
    fc = Flowchart.chain(frames)
    root = parse(fc)
    assert list(node_texts(root).values()) == frames
    ys = [b[1] for b in node_boxes(root).values()]
    assert ys == sorted(ys) and len(set(ys)) == len(frames)


def test_left_to_right_direction_and_self_loop():
    fc = from_edges([("a", "b", "go"), ("b", "c"), ("c", "c")], direction="LR")
    root = parse(fc)
    box = node_boxes(root)
    assert box["a"][0] + box["a"][2] <= box["b"][0] <= box["c"][0]
    assert len([p for p in root.iter(f"{SVG}path") if p.get("class") == "edge"]) == 3


def test_notebook_reprs_and_unique_marker_ids():
    a, b = nn_modules_call_path(), dropout_decision()
    assert a._repr_svg_() == a.svg()
    assert a._repr_html_().count("<svg") == 1
    ids = {re.search(r'marker id="([^"]+)"', fc.svg()).group(1) for fc in (a, b)}
    assert len(ids) == 2  # two charts on one page do not share an arrow marker


def test_bad_arguments_are_rejected():
    with pytest.raises(ValueError, match="shape"):
        Flowchart().node("a", shape="hexagon")
    with pytest.raises(ValueError, match="direction"):
        Flowchart("XY")


def _width(fc: Flowchart) -> float:
    return float(parse(fc).get("width"))


def test_a_chart_too_wide_for_the_column_is_wrapped_or_turned_to_fit():
    # a 5-box LR chain of long labels is ~1270 px as asked: its text would show at 7 px
    labels = [f"step {i}: a rather long label that says what happens" for i in range(5)]
    wide = Flowchart.chain(labels, direction="LR", fit=False)
    assert _width(wide) > 1000
    fitted = Flowchart.chain(labels, direction="LR")
    assert _width(fitted) <= 752
    assert node_texts(parse(fitted))["n0"].replace("\n", " ") == labels[0]  # wrapped, whole
    assert fitted.direction == "LR" and fitted.nodes["n0"] == labels[0]  # as built


def test_side_by_side_lanes_are_stacked_in_rows_when_too_wide():
    fc = Flowchart("TB")
    for lane in range(4):
        for step in range(3):
            fc.node(f"l{lane}s{step}", f"lane {lane} frame {step}\nmodule.some_long_name_{step}",
                    align="left")
        fc.edge(f"l{lane}s0", f"l{lane}s1").edge(f"l{lane}s1", f"l{lane}s2")
    assert _width(fc) <= 752
    box = node_boxes(parse(fc))
    assert box["l2s0"][1] > box["l0s2"][1]  # the third lane starts below the first

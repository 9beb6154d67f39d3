"""The real pdb driven non-interactively, and the autodiff graph behind a tensor."""

from __future__ import annotations

import inspect
import xml.etree.ElementTree as ET

import pytest

from minidl.debug import graph, pdb_command, pdb_session

from .support import backend_name, device, need, tensor


def _source(func):
    func = inspect.unwrap(getattr(func, "__func__", func))
    path = inspect.getsourcefile(func)
    return path[path.index("minidl/"):], func.__code__


def test_pdb_stops_at_the_flex_matmul_and_where_shows_the_stack():
    dev = device("flex", autodiff=True)
    Flex = need("minidl.backends.flex", "Flex")
    layer = need("minidl.nn", "LinearConfig")(4, 2).init(dev)
    x = tensor((4, 4), dev)
    text = pdb_session(lambda: layer.forward(x), ["b Flex.float_matmul", "c", "where", "p lhs.shape", "c"])

    rel, code = _source(Flex.float_matmul)
    lines = sorted({ln for _, _, ln in code.co_lines() if ln})
    assert f"Breakpoint 1 at {rel}:" in text
    stop = f"> {rel}("
    assert stop in text and "float_matmul()" in text
    where = text.split("(Pdb) where", 1)[1].split("(Pdb) p lhs.shape", 1)[0]
    order = [where.index(s) for s in ("linear.py", "module.py(", "module_ops.py(", f"{rel}(")]
    assert order == sorted(order)  # outermost first, as pdb prints
    stopped_line = int(where.rsplit(f"> {rel}(", 1)[1].split(")", 1)[0])
    assert stopped_line in lines
    assert "(4, 4)" in text.split("(Pdb) p lhs.shape", 1)[1]


def test_pdb_session_uses_the_stdlib_pdb_where_a_kernel_replaced_pdb_Pdb(monkeypatch):
    import pdb

    class KernelPdb(pdb.Pdb):  # what ipykernel installs: IPython's debugger, a Pdb subclass
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            self.prompt = "ipdb> "

    monkeypatch.setattr(pdb, "Pdb", KernelPdb)

    def add(a, b):
        return a + b

    text = pdb_session(lambda: add(1, 2), ["s", "p a + b", "c"])
    assert "(Pdb) p a + b" in text and "ipdb>" not in text
    assert "3" in text.split("(Pdb) p a + b", 1)[1]


def test_pdb_command_turns_a_shared_default_into_a_conditional_breakpoint():
    need("minidl.backends.ndarray", "NdArray")
    from minidl.dispatch import Dispatch

    line = pdb_command("b Dispatch.linear")
    rel, code = _source(Dispatch.linear)
    assert line.startswith("b ") and f"{rel}:" in line
    assert line.endswith(", cls.__name__ == 'Dispatch'")
    assert pdb_command("c") == "c" and pdb_command("b some_function_in_scope") == "b some_function_in_scope"


def test_graph_of_a_linear_on_autodiff_holds_separate_matmul_reshape_add_steps(kind):
    dev = device(kind, autodiff=True)
    layer = need("minidl.nn", "LinearConfig")(4, 2).init(dev)
    x = tensor((3, 4), dev)
    g = graph(layer.forward(x))
    assert g.ops == ["Matmul", "Reshape", "Add"]
    assert not any(op.startswith("Linear") for op in g.ops)
    root = ET.fromstring(g.svg())
    texts = " ".join(t.text or "" for t in root.iter("{http://www.w3.org/2000/svg}tspan"))
    assert "Matmul" in texts and "Add" in texts and "leaf" in texts
    assert "Matmul" in str(g) and "<svg" in g._repr_html_()


def test_graph_of_a_plain_tensor_is_a_clear_error():
    dev = device("ndarray")
    with pytest.raises(TypeError, match="autodiff"):
        graph(tensor((2, 2), dev))
    assert backend_name("ndarray") == "NdArray"

"""Who defines which op (the ``nm -C`` count of the burn book's nn-modules chapter) and which bodies actually ran."""

from __future__ import annotations

import pytest

from minidl.backend import defines
from minidl.debug import (
    backend_classes,
    coverage,
    default_recipe,
    implementations,
    module_ops_table,
)

from .support import backend_name, device, need, tensor


def test_linear_is_inherited_by_dispatch_and_flex_and_defined_by_autodiff():
    device("flex", autodiff=True)  # makes Autodiff[Flex]
    table = implementations("linear")
    assert table.inherits("Dispatch")
    assert table.defines("Autodiff[Flex]")
    assert table.inherits("Flex")
    assert not table.dispatch_forwards
    assert "does NOT forward" in str(table)


def test_conv2d_is_forwarded_by_dispatch_and_defined_everywhere(kind):
    device(kind, autodiff=True)
    table = implementations("conv2d")
    assert table.dispatch_forwards
    assert table.defines("Dispatch") and table.defines(backend_name(kind))
    assert table.defines(f"Autodiff[{backend_name(kind)}]")


def test_layer_norm_is_fused_by_flex_but_left_to_the_default_by_autodiff():
    device("flex", autodiff=True)
    table = implementations("layer_norm")
    assert table.defines("Flex")
    assert table.inherits("Autodiff[Flex]")
    assert table.dispatch_forwards


def test_every_row_agrees_with_the_protocol_helpers(kind):
    device(kind, autodiff=True)
    for op in ("linear", "conv2d", "layer_norm", "batch_norm", "float_matmul", "embedding"):
        table = implementations(op)
        for cls in backend_classes():
            assert table.defines(cls.__name__) == defines(cls, op), (op, cls.__name__)


def test_unknown_op_is_a_clear_error():
    with pytest.raises(KeyError, match="no backend op named 'linaer'"):
        implementations("linaer")


def test_coverage_shows_autodiffs_linear_never_ran(kind):
    dev = device(kind, autodiff=True)
    inner = backend_name(kind)
    layer = need("minidl.nn", "LinearConfig")(4, 2).init(dev)
    x = tensor((4, 4), dev)
    cov = coverage(lambda: layer.forward(x), ops=["linear", "float_matmul"])
    assert cov.ran("Dispatch", "linear")
    assert not cov.ran(f"Autodiff[{inner}]", "linear")
    assert not cov.ran(inner, "linear")
    assert cov.count(f"Autodiff[{inner}]", "float_matmul") == 1
    assert cov.count(inner, "float_matmul") == 1
    row = cov.table().row(f"Autodiff[{inner}].linear")
    assert row["runs"] == "never ran"
    assert cov.table().row("Dispatch.linear")["whose body"] == "ModuleOps default"
    assert cov.result is not None


def test_module_ops_table_says_who_writes_conv2d_layer_norm_and_linear(kind):
    device(kind, autodiff=True)
    need("minidl.backends.flex", "Flex")
    table = module_ops_table(["conv2d", "layer_norm", "linear"])
    conv, ln, lin = (table.row(op) for op in ("conv2d", "layer_norm", "linear"))
    assert conv["ModuleOps default?"] == "no (required)"
    assert [conv["Dispatch forwards?"], conv["Autodiff overrides?"], conv["Flex overrides?"]] == ["yes"] * 3
    assert ln["ModuleOps default?"].startswith("yes: float_mean_dim, float_sub")
    assert [ln["Dispatch forwards?"], ln["Autodiff overrides?"], ln["Flex overrides?"]] == ["yes", "no", "yes"]
    assert lin["ModuleOps default?"] == "yes: float_matmul, float_reshape, float_add"
    assert [lin["Dispatch forwards?"], lin["Autodiff overrides?"], lin["Flex overrides?"]] == ["no", "yes", "no"]
    NdArray = need("minidl.backends.ndarray", "NdArray")
    for op in ("conv2d", "layer_norm", "linear"):
        assert table.row(op)["NdArray overrides?"] == ("yes" if defines(NdArray, op) else "no")
    assert "<table" in table._repr_html_() and "layer_norm" in str(table)


def test_default_recipe_lists_the_ops_the_default_is_written_with():
    assert default_recipe("conv2d") == []  # required: no default
    recipe = default_recipe("layer_norm")
    assert recipe[0] == "float_mean_dim" and "float_sqrt" in recipe and "float_div" in recipe

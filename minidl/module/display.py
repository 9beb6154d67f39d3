"""How a module prints: a tree with shapes and parameter counts (burn-core ``module/display.rs``).

burn's derived ``Display`` prints every field and a ``params:`` count per module::

    Net {
      fc: Linear {d_input: 4, d_output: 2, bias: true, params: 10}
      dropout: Dropout {prob: 0.5, training: enabled}
      params: 10
    }

Layers print on one line from their ``_display_attrs()`` (burn's ``custom_content``); other
modules print one field per line. Shapes come from ``Param.lazy_shape()``, so printing never
initializes a lazy parameter.
"""

from __future__ import annotations

import html
import math
from typing import Any

from minidl.module.config_enum import ConfigEnum
from minidl.module.param import Param
from minidl.module.running import RunningState
from minidl.module.visitor import ModuleNode, is_module_value

_SIMPLE = (int, float, bool, str, ConfigEnum)


def format_value(value: Any) -> str:
    """A constant as the display shows it (bools lower-case, as Rust prints them)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return f"{value:g}" if math.isfinite(value) else str(value)
    if isinstance(value, tuple | list):
        return "[" + ", ".join(format_value(v) for v in value) + "]"
    return str(value)


def _is_simple(value: Any) -> bool:
    if isinstance(value, tuple | list):
        return all(isinstance(v, _SIMPLE) for v in value)
    return isinstance(value, _SIMPLE)


def _leaf(value: Any) -> str:
    if isinstance(value, Param):
        if value.is_flag():
            return str(value.val())
        shape = list(value.lazy_shape())
        lazy = "" if value.is_initialized() else ", lazy"
        return f"ParamTensor {{rank: {len(shape)}, shape: {shape}, kind: float{lazy}}}"
    if isinstance(value, RunningState):
        return f"RunningState {{shape: {list(value.shape)}}}"
    return format_value(value)


def render(module: ModuleNode, indent: int = 0) -> str:
    """The display text of ``module`` (nested modules indented by two spaces per level)."""
    name = type(module).__name__
    attrs = module._display_attrs()
    if attrs is not None:
        items = [f"{k}: {format_value(v) if not isinstance(v, str) else v}" for k, v in attrs.items()]
        n = module.num_params()
        if n:
            items.append(f"params: {n}")
        return f"{name} {{{', '.join(items)}}}"
    pad = "  " * (indent + 1)
    lines = [f"{name} {{"]
    for field, value in vars(module).items():
        if field.startswith("_") or value is None:
            continue
        if is_module_value(value):
            lines.append(f"{pad}{field}: {_render_value(value, indent + 1)}")
        elif _is_simple(value):
            lines.append(f"{pad}{field}: {format_value(value)}")
    lines.append(f"{pad}params: {module.num_params()}")
    lines.append("  " * indent + "}")
    return "\n".join(lines)


def _render_value(value: Any, indent: int) -> str:
    if isinstance(value, ModuleNode):
        return render(value, indent)
    if isinstance(value, list | tuple | dict):
        items = value.items() if isinstance(value, dict) else enumerate(value)
        kind = "Map" if isinstance(value, dict) else "Vec"
        pad = "  " * (indent + 1)
        lines = [f"{kind}<0..{len(value)}> {{"]
        for key, item in items:
            lines.append(f"{pad}{key}: {_render_value(item, indent + 1)}")
        lines.append("  " * indent + "}")
        return "\n".join(lines)
    return _leaf(value)


def render_html(module: ModuleNode) -> str:
    """The same tree for notebooks, in a ``<pre>`` block."""
    return f"<pre class=\"minidl-module\">{html.escape(render(module))}</pre>"

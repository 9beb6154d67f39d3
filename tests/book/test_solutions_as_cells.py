"""Each build-it's reference solution passes when it is the reader's: compiled from text in a
notebook cell, not imported from ``minidl_book``.

The watch treats ``minidl_book`` code as the checker's, so a reference imported from there can
pass where the same lines typed into a cell are refused (a wrapper of the checker's around the
ops the reader calls once refused every reader's layer_norm, right answers included). Here each
reference is written out to a file outside the package, as Jupyter does with a cell, and run
through its checker.
"""

from __future__ import annotations

import importlib
import inspect
import itertools
import textwrap
from pathlib import Path

import pytest

#: module → the names a reader writes (in order: later ones may use earlier ones).
READER_WRITES = {
    "build_softplus": ["Softplus"],
    "build_record": ["record"],
    "build_matmul_step": ["Matmul"],
    "build_backend": ["Complete"],
    "build_batch_norm": ["batch_norm_forward"],
    "build_layer": ["RmsNorm", "RmsNormConfig"],
    "build_import": ["import_pretrained"],
    "build_apply": ["plan_apply"],
    "build_linear": ["linear"],
    "build_guard": ["guard"],
    "build_default_op": ["log_softmax"],
    "build_layer_norm": ["layer_norm"],
    "build_conv2d": ["conv2d"],
    "build_route": ["routing_device"],
    "build_forwarder": ["write_forwarder"],
    "build_conv2d_backward": ["conv2d_backward"],
    "build_explorer": ["explore"],
    "build_view": ["read_view"],
    "build_broadcast": ["broadcast_strides"],
    "build_zip": ["zip_op"],
    "build_reduce": ["reduce_dim"],
    "build_reshape": ["reshape_strides"],
    "build_param_walk": ["named_params"],
    "build_map_params": ["map_params"],
    "build_backward_walk": ["backward_walk"],
}

_CELLS = itertools.count()


def as_cell(module_name: str, names: list[str], folder: Path) -> object:
    """The names' source run as one notebook cell: its own file, the module's imports."""
    module = importlib.import_module(f"minidl_book.{module_name}")
    source = "\n\n".join(textwrap.dedent(inspect.getsource(getattr(module, n))) for n in names)
    path = folder / f"cell{next(_CELLS)}.py"
    path.write_text(source, encoding="utf-8")
    namespace = {k: v for k, v in vars(module).items() if not k.startswith("__")}
    namespace.update(__name__="__main__", __builtins__=__builtins__)
    exec(compile(source, str(path), "exec"), namespace)
    return namespace[names[-1]]


@pytest.mark.parametrize("module_name", sorted(READER_WRITES))
def test_reference_typed_into_a_cell_passes(module_name, tmp_path):
    module = importlib.import_module(f"minidl_book.{module_name}")
    solution = as_cell(module_name, READER_WRITES[module_name], tmp_path)
    verdict = module.exercise(max_examples=4).find_failure(solution)
    assert verdict is None, verdict.render()

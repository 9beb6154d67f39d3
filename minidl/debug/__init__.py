"""Seeing inside minidl: the lldb and nm of this book.

- :func:`trace` — regex breakpoints over qualified names (``Flex\\.float_matmul``,
  ``Autodiff.*\\.linear$``), backtraces printed like lldb's ``bt`` (``bt(n, width=88)``
  elides or, with ``wrap=True``, wraps long argument lists), numba kernels as frames.
- :func:`implementations` / :func:`module_ops_table` — which backend class defines an op and
  which inherits the protocol default (the nn-modules chapter's ``nm -C`` count over burn's binary); :func:`coverage` — which
  bodies actually ran.
- :func:`graph` — the autodiff steps behind a tensor, as a table and an SVG; ``names=`` (a
  module or ``{name: tensor}``) labels the leaves ``weight``, ``bias``, ... .
- :func:`debug_level` / ``MINIDL_DEBUG`` — leveled output: routes, kernels and times, compiles.
- :func:`path_diagram` / :func:`merge_paths` — a backtrace drawn as a flowchart of its call path.
- :func:`fusion_plan` / :func:`fusion_history` — what a fusion stream recorded, the blocks
  its search chose, the generated kernels' sources, bytes moved with and without fusion.
- :func:`pdb_session` — a genuine, non-interactive ``pdb`` transcript.

The diagrams are drawn by :mod:`minidl.debug.flowchart` (what the chapters share); ``Flowchart``
is re-exported here.
Nothing in minidl imports this package; importing it costs no hook until a tool runs (or
``MINIDL_DEBUG`` asks for output).
"""

from minidl.debug.catalog import backend_classes, known_locations
from minidl.debug.diagram import PathDiagram, merge_paths, path_diagram
from minidl.debug.flowchart import Flowchart
from minidl.debug.fusion import BlockView, FusionPlan, fusion_history, fusion_plan
from minidl.debug.graph import GraphView, graph
from minidl.debug.implementations import (
    Coverage,
    Implementations,
    coverage,
    default_recipe,
    implementations,
    module_ops_table,
)
from minidl.debug.levels import DebugLog, debug_level, get_level, set_level
from minidl.debug.pdbrun import pdb_command, pdb_session
from minidl.debug.table import Table
from minidl.debug.trace import Breakpoint, Frame, Hit, Trace, trace

__all__ = [
    "BlockView",
    "Breakpoint",
    "Coverage",
    "DebugLog",
    "Flowchart",
    "Frame",
    "FusionPlan",
    "GraphView",
    "Hit",
    "Implementations",
    "PathDiagram",
    "Table",
    "Trace",
    "backend_classes",
    "coverage",
    "debug_level",
    "default_recipe",
    "fusion_history",
    "fusion_plan",
    "get_level",
    "graph",
    "implementations",
    "known_locations",
    "merge_paths",
    "module_ops_table",
    "path_diagram",
    "pdb_command",
    "pdb_session",
    "set_level",
    "trace",
]

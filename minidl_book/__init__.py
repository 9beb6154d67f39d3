"""The book's machinery, apart from the library: what the chapters share: think-about-it exercises and side-by-side comparison printers.

- :class:`~minidl_book.exercises.Exercise`: predict first, then check against a live run.
- :func:`~minidl_book.compare.report`: the burn book's ``name  n= 12  max|diff|=1.19e-07`` table.
- :class:`~minidl.debug.flowchart.Flowchart`: the book's diagrams (call paths, decisions) as
  self-contained SVG, in pure Python; it lives in ``minidl.debug``, which draws its path
  diagrams with it, and is re-exported here for the chapters.
- :class:`~minidl_book.build_check.BuildExercise`: build first, then check through the real
  stack (hypothesis cases, PyTorch and central-difference references, rules enforced by
  trace, verdicts at the reader's line). ``build_*`` modules hold each chapter's build
  exercise; :mod:`~minidl_book.puzzles` the tensor puzzles of the appendix.

Nothing in ``minidl`` imports this package; it may look at everything, and it is the only
place that imports torch and hypothesis (declared as the ``book`` extra in ``pyproject.toml``).
"""

from minidl.debug.flowchart import Flowchart
from minidl_book.build_check import BuildExercise, Reference, Rules, Verdict
from minidl_book.compare import max_abs_diff, report
from minidl_book.exercises import Exercise

__all__ = ["BuildExercise", "Exercise", "Flowchart", "Reference", "Rules", "Verdict", "max_abs_diff", "report"]

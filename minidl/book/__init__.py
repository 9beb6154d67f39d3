"""What the chapters share: think-about-it exercises and side-by-side comparison printers.

- :class:`~minidl.book.exercises.Exercise`: predict first, then check against a live run.
- :func:`~minidl.book.compare.report`: the seeds' ``name  n= 12  max|diff|=1.19e-07`` table.
- :class:`~minidl.book.flowchart.Flowchart`: the book's diagrams (call paths, decisions) as
  self-contained SVG, in pure Python; ``minidl.debug`` draws its path diagrams with it.

Nothing in minidl imports this package; it may look at everything.
"""

from minidl.book.compare import max_abs_diff, report
from minidl.book.exercises import Exercise
from minidl.book.flowchart import Flowchart

__all__ = ["Exercise", "Flowchart", "max_abs_diff", "report"]

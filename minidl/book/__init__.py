"""What the chapters share: think-about-it exercises and side-by-side comparison printers.

- :class:`~minidl.book.exercises.Exercise`: predict first, then check against a live run.
- :func:`~minidl.book.compare.report`: the seeds' ``name  n= 12  max|diff|=1.19e-07`` table.
- :class:`~minidl.book.build_check.BuildExercise`: build first, then check through the real
  stack (hypothesis cases, PyTorch and central-difference references, rules enforced by
  trace, verdicts at the reader's line). ``build_*`` modules hold each chapter's build
  exercise; :mod:`~minidl.book.puzzles` the tensor puzzles of the appendix.

Nothing in minidl imports this package; it may look at everything.
"""

from minidl.book.build_check import BuildExercise, Reference, Rules, Verdict
from minidl.book.compare import max_abs_diff, report
from minidl.book.exercises import Exercise

__all__ = ["BuildExercise", "Exercise", "Reference", "Rules", "Verdict", "max_abs_diff", "report"]

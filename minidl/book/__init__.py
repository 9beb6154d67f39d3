"""What the chapters share: think-about-it exercises and side-by-side comparison printers.

- :class:`~minidl.book.exercises.Exercise`: predict first, then check against a live run.
- :func:`~minidl.book.compare.report`: the seeds' ``name  n= 12  max|diff|=1.19e-07`` table.
- :class:`~minidl.book.flowchart.Flowchart`: the book's diagrams (call paths, decisions) as
  self-contained SVG, in pure Python; ``minidl.debug`` draws its path diagrams with it.
- :class:`~minidl.book.build_check.BuildExercise`: build first, then check through the real
  stack (hypothesis cases, PyTorch and central-difference references, rules enforced by
  trace, verdicts at the reader's line). ``build_*`` modules hold each chapter's build
  exercise; :mod:`~minidl.book.puzzles` the tensor puzzles of the appendix.

Nothing in minidl imports this package; it may look at everything.
"""

from minidl.book.compare import max_abs_diff, report
from minidl.book.exercises import Exercise
from minidl.book.flowchart import Flowchart

#: Loaded on first use: build_check imports minidl.debug, which imports this package's
#: flowchart, so an eager import here would be a cycle.
_LAZY = {"BuildExercise", "Reference", "Rules", "Verdict"}


def __getattr__(name: str):
    if name in _LAZY:
        from minidl.book import build_check

        return getattr(build_check, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["BuildExercise", "Exercise", "Flowchart", "Reference", "Rules", "Verdict", "max_abs_diff", "report"]

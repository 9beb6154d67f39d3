"""Tensor puzzles in minidl: small functions written with a stated set of ops, checked by trace.

In the spirit of Sasha Rush's Tensor-Puzzles: each puzzle names the few Tensor ops it may
use (``arange``, broadcasting through ``unsqueeze_dim``, comparisons, arithmetic,
``mask_where``, and sometimes ``sum_dim``, ``@`` or indexing). Unlike the original, the
checker *enforces* that set: it traces which Tensor ops the reader's function called and
names the first one that is not allowed, with the line that called it. Values are checked
against PyTorch on generated inputs (hypothesis, seeded); a wrong shape is reported as a
shape, not as an error from deep inside the library.

``PUZZLES`` maps a name to its :class:`Puzzle`; ``PLANTED`` holds wrong solutions the
appendix shows and the tests check (wrong value, forbidden op, wrong shape, data pulled out).
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
from hypothesis import strategies as st

from minidl import Tensor
from minidl_book.build_check import BuildExercise, Reference, Rules, Verdict
from minidl_book.harness import is_placeholder, tensor_call
from minidl_book.verdict import TODO, op_label

#: What every puzzle may use: creating a range, broadcasting, arithmetic, comparisons, where.
BASE = (
    "arange", "unsqueeze_dim", "reshape", "int", "float", "bool", "mask_where", "mask_fill",
    "__add__", "__radd__", "__sub__", "__rsub__", "__mul__", "__rmul__", "__neg__",
    "__eq__", "__ne__", "__lt__", "__le__", "__gt__", "__ge__", "__and__", "__or__", "__invert__",
)


@dataclass
class Puzzle:
    """One puzzle: its signature and statement, the ops it may use beyond :data:`BASE`, how its
    inputs are generated, the PyTorch answer, and the hidden reference solution."""

    name: str
    signature: str
    statement: str
    extra: tuple[str, ...]
    params: tuple[str, ...]
    cases: st.SearchStrategy
    torch_ref: Callable[..., torch.Tensor]
    solution: Callable[..., Tensor]
    hints: tuple[str | tuple[Any, str], ...] = ()  # (kinds, text): a hint for those verdicts
    without: tuple[str, ...] = ()  # base ops this puzzle takes away (flatten: reshape)

    @property
    def allowed(self) -> tuple[str, ...]:
        """:data:`BASE` plus this puzzle's extra ops, minus the ones it takes away."""
        return tuple(op for op in BASE + self.extra if op not in self.without)

    def exercise(self, max_examples: int = 20) -> BuildExercise:
        """The checker of this puzzle (``max_examples`` generated cases)."""

        def reference(case: dict) -> dict:
            args = [torch.from_numpy(case[p]) if isinstance(case[p], np.ndarray) else case[p]
                    for p in self.params]
            return {"out": self.torch_ref(*args)}

        return PuzzleExercise(
            f"puzzle {self.name}: {self.signature}",
            cases=self.cases,
            run=tensor_call(self.params),
            references=[Reference("PyTorch", reference, rtol=1e-6, atol=1e-6)],
            rules=Rules(allowed=self.allowed, no_data=True, no_numpy=True, fresh_result=True,
                        forbidden={} if "flip" in self.allowed else NO_FLIP,
                        helpers=tuple(earlier(self.name)),
                        helper_checks=helper_checks(self.name)),
            # a hint says how to compute the answer: it opens on a wrong value, shape or an
            # error, never on a rule verdict (the verdict names the op or the loop itself)
            # a shape verdict opens the shape hint first, a value verdict the puzzle's own
            hints=[(("shape",), "shape"),  # PuzzleExercise writes the measured shapes in
                   *[h if isinstance(h, tuple) else (_COMPUTE, h) for h in self.hints]],
            reference_solution=self.solution,
            max_examples=max_examples,
            order=self.params,
            probes=self.probes,
        )

    def probes(self, sizes: Sequence[int] = (4, 8)) -> list[dict]:
        """One case per size: every dim of the signature that is a letter (``[i, j]``) and
        every ``int`` parameter set to the size, the values zeros (the kinds of the smallest
        generated case), for the checker's loop rule."""
        from hypothesis import find, settings

        smallest = find(self.cases, lambda _: True, settings=settings(database=None))
        shapes = dict(re.findall(r"(\w+): (\[[^\]]*\]|int)", self.signature.split("->")[0]))
        out = []
        for n in sizes:
            case = {}
            for p in self.params:
                if shapes[p] == "int":
                    case[p] = n
                else:
                    dims = [int(d) if d.strip().isdigit() else n
                            for d in shapes[p].strip("[]").split(",")]
                    case[p] = np.zeros(dims, dtype=smallest[p].dtype)
            out.append(case)
        return out


_COMPUTE = ("value", "shape", "dtype", "error", "check")
#: The shape advice for a solution that called ``sum_dim`` or ``@`` (shown after the sizes).
SHAPE_HINT = ("sum_dim keeps the summed dim, [1, i] @ [i, j] is [1, j]: drop a size-1 dim "
              "with reshape (or [:, 0] where reshape is refused).")
#: Shape-changing ops whose rule :data:`SHAPE_HINT` states (traced names).
_SHAPE_OPS = frozenset({"sum_dim", "__matmul__", "__rmatmul__", "matmul"})


def shape_hint(expected: Sequence[int], found: Sequence[int], ops: Sequence[str] = ()) -> str:
    """The first hint on a wrong shape: what the verdict measured (yours against the wanted
    shape, the dim that differs), and the sum_dim/@ rule only when the code called them."""
    expected, found = list(expected), list(found)
    text = f"Yours is {found} where {expected} is wanted: "
    if len(expected) == len(found):
        dims = [d for d, (e, f) in enumerate(zip(expected, found)) if e != f]
        text += (f"dim {', '.join(map(str, dims))} differs; which size did your code build "
                 f"{'it' if len(dims) == 1 else 'them'} from?")
    else:
        extra = len(found) - len(expected)
        text += (f"{abs(extra)} dim{'s' if abs(extra) > 1 else ''} too "
                 + ("many; which op added or kept it?" if extra > 0 else
                    "few; which op dropped it?"))
    if _SHAPE_OPS & set(ops):
        text += " " + SHAPE_HINT
    return text


#: No puzzle allows flip, and a negative step (``a[::-1]``) runs ``Tensor.flip`` inside
#: ``t[...]`` (minidl's backends take positive steps only): reached anywhere in the run, it
#: is the solution's.
NO_FLIP = {r"^Tensor\.flip$": "use flip, also not through a negative step (t[::-1] runs it)"}


class PuzzleExercise(BuildExercise):
    """A puzzle's checker: a rule verdict prints the rule and the reader's line, not a failing
    case (the case plays no part in it)."""

    def find_failure(self, solution):  # noqa: D102
        verdict = super().find_failure(solution)
        if verdict is not None and verdict.kind == "shape" and self.hint_ladder:
            ops = [call.name.split(".", 1)[-1] for call in self._last_calls]
            text = shape_hint(verdict.expected or [], verdict.found or [], ops)
            self.hint_ladder[0] = (self.hint_ladder[0][0], text)
            self.hints = [t for _, t in self.hint_ladder]
        if verdict is not None and verdict.kind == "rule":
            verdict.inputs = ""
            _later_puzzle(verdict, self.title.split(":")[0].removeprefix("puzzle "))
        if verdict is not None and verdict.kind == "error" and _TWO_INDICES in verdict.text:
            _two_indices(verdict, self.title.split(":")[0].removeprefix("puzzle "))
        return verdict


_TWO_INDICES = "at most one Int tensor index is supported"


def _two_indices(verdict: Verdict, name: str) -> None:
    """``a[i, j]`` with two int tensors: minidl's error points at gather/select, which no
    puzzle allows; say what a puzzle can do instead."""
    allowed = name in PUZZLES and "__getitem__" in PUZZLES[name].allowed
    head = ("Your code indexed with two int tensors at once (a[rows, cols]): a puzzle allows "
            "one int-tensor index per indexing. Gather with one (a[rows]), then keep the wanted "
            "column with a comparison mask and sum it out." if allowed else
            f"Your code indexed with int tensors (a[i, i]), and t[...] is not one of {name}'s "
            "ops: compare a column of indices with a row of indices and use that bool matrix "
            "as a mask.")
    rest = [line for line in verdict.text.split("\n")[1:] if "raised inside minidl" not in line]
    verdict.text = "\n".join([head, *rest])


def _later_puzzle(verdict: Verdict, name: str) -> None:
    """A call of the book's solution of a puzzle that comes after ``name``: say so, rather
    than the watch's "the checker's objects are not for solutions"."""
    found = re.search(r"called the checker's (\w+)_sol ", verdict.text)
    if (verdict.rule != "the checker is not yours to call" or found is None
            or found.group(1) not in ORDER or name not in ORDER):
        return
    later = found.group(1)
    if ORDER.index(later) > ORDER.index(name):
        site = verdict.text.split("\n", 1)[1] if "\n" in verdict.text else ""
        verdict.text = (f"Rule broken: {later} comes after {name}: a solution may call only "
                        f"the puzzles before it, yours or the book's" + (f"\n{site}" if site else ""))


# ----- input strategies ------------------------------------------------------------------------
def _floats(shape: Sequence[int], lo: int = -5, hi: int = 5) -> st.SearchStrategy:
    """Small integer-valued float32 arrays (exact arithmetic, so a difference is a real one)."""
    n = int(np.prod(shape))
    return st.lists(st.integers(lo, hi), min_size=n, max_size=n).map(
        lambda v: np.array(v, dtype=np.float32).reshape(shape))


def _ints(shape: Sequence[int], lo: int, hi: int) -> st.SearchStrategy:
    n = int(np.prod(shape))
    return st.lists(st.integers(lo, hi), min_size=n, max_size=n).map(
        lambda v: np.array(v, dtype=np.int64).reshape(shape))


def _bools(shape: Sequence[int]) -> st.SearchStrategy:
    n = int(np.prod(shape))
    return st.lists(st.booleans(), min_size=n, max_size=n).map(
        lambda v: np.array(v, dtype=np.bool_).reshape(shape))


_N = st.integers(1, 6)


def vector_cases() -> st.SearchStrategy:
    """Cases of one float vector `a` of 1 to 6 small whole numbers."""
    return _N.flatmap(lambda n: st.fixed_dictionaries({"a": _floats([n])}))


def _two_vecs(same: bool) -> st.SearchStrategy:
    return st.tuples(_N, _N).flatmap(lambda nm: st.fixed_dictionaries(
        {"a": _floats([nm[0]]), "b": _floats([nm[0] if same else nm[1]])}))


def _square() -> st.SearchStrategy:
    return _N.flatmap(lambda n: st.fixed_dictionaries({"a": _floats([n, n])}))


def _matrix() -> st.SearchStrategy:
    return st.tuples(_N, _N).flatmap(lambda s: st.fixed_dictionaries({"a": _floats(list(s))}))


def _cases_with(builder: Callable[[int, int], dict]) -> st.SearchStrategy:
    return st.tuples(_N, _N).flatmap(lambda nm: st.fixed_dictionaries(builder(*nm)))


# ----- the reference solutions (hidden in the appendix) ----------------------------------------
def ones_sol(a: Tensor) -> Tensor:
    return (Tensor.arange(0, a.shape[0], device=a.device) * 0 + 1).float()


def sum_sol(a: Tensor) -> Tensor:
    ones = (a * 0 + 1).unsqueeze_dim(1)
    return (a.unsqueeze_dim(0) @ ones).reshape([1])


def outer_sol(a: Tensor, b: Tensor) -> Tensor:
    return a.unsqueeze_dim(1) * b.unsqueeze_dim(0)


def diag_sol(a: Tensor) -> Tensor:
    i = Tensor.arange(0, a.shape[0], device=a.device)
    on_diagonal = i.unsqueeze_dim(1) == i.unsqueeze_dim(0)
    return a.mask_fill(~on_diagonal, 0.0).sum_dim(1).reshape([a.shape[0]])


def eye_sol(a: Tensor) -> Tensor:
    i = Tensor.arange(0, a.shape[0], device=a.device)
    return (i.unsqueeze_dim(1) == i.unsqueeze_dim(0)).float()


def triu_sol(a: Tensor) -> Tensor:
    i = Tensor.arange(0, a.shape[0], device=a.device)  # row indices
    j = Tensor.arange(0, a.shape[1], device=a.device)  # column indices
    below = i.unsqueeze_dim(1) > j.unsqueeze_dim(0)
    return a.mask_fill(below, 0.0)


def cumsum_sol(a: Tensor) -> Tensor:
    i = Tensor.arange(0, a.shape[0], device=a.device)
    upper = (i.unsqueeze_dim(1) <= i.unsqueeze_dim(0)).float()
    return (a.unsqueeze_dim(0) @ upper).reshape([a.shape[0]])


def diff_sol(a: Tensor) -> Tensor:
    i = Tensor.arange(0, a.shape[0], device=a.device)
    # out[k] = a[k] - a[k-1]: +1 on the diagonal, -1 above it (row k-1, col k)
    shift = (i.unsqueeze_dim(1) == i.unsqueeze_dim(0)).float() \
        - (i.unsqueeze_dim(1) + 1 == i.unsqueeze_dim(0)).float()
    return (a.unsqueeze_dim(0) @ shift).reshape([a.shape[0]])


def vstack_sol(a: Tensor, b: Tensor) -> Tensor:
    row = Tensor.arange(0, 2, device=a.device).unsqueeze_dim(1)
    top = (a.unsqueeze_dim(0) * (row == 0).float())
    return top + b.unsqueeze_dim(0) * (row == 1).float()


def roll_sol(a: Tensor) -> Tensor:
    return a[(Tensor.arange(0, a.shape[0], device=a.device) + 1) % a.shape[0]]


def flip_sol(a: Tensor) -> Tensor:
    n = a.shape[0]
    return a[Tensor.arange(0, n, device=a.device) * -1 + (n - 1)]


def heaviside_sol(a: Tensor, b: Tensor) -> Tensor:
    step = (a > 0).float()
    return step.mask_where(a == 0, b)


def repeat_sol(a: Tensor, d: int) -> Tensor:
    rows = Tensor.arange(0, d, device=a.device).unsqueeze_dim(1).float() * 0
    return rows + a.unsqueeze_dim(0)


def sequence_mask_sol(values: Tensor, length: Tensor) -> Tensor:
    j = Tensor.arange(0, values.shape[1], device=values.device)
    return values.mask_fill(j.unsqueeze_dim(0) >= length.unsqueeze_dim(1), 0.0)


def bincount_sol(a: Tensor, j: int) -> Tensor:
    bins = Tensor.arange(0, j, device=a.device)
    hit = a.unsqueeze_dim(1) == bins.unsqueeze_dim(0)  # [i, j]: a[m] is bin k
    return hit.int().sum_dim(0).reshape([j])


def scatter_add_sol(values: Tensor, link: Tensor, j: int) -> Tensor:
    bins = Tensor.arange(0, j, device=values.device)
    hit = (link.unsqueeze_dim(1) == bins.unsqueeze_dim(0)).float()
    return (values.unsqueeze_dim(0) @ hit).reshape([j])


def pad_to_sol(a: Tensor, j: int) -> Tensor:
    i = Tensor.arange(0, a.shape[0], device=a.device)
    k = Tensor.arange(0, j, device=a.device)
    place = (i.unsqueeze_dim(1) == k.unsqueeze_dim(0)).float()
    return (a.unsqueeze_dim(0) @ place).reshape([j])


def compress_sol(g: Tensor, v: Tensor) -> Tensor:
    i = Tensor.arange(0, v.shape[0], device=v.device)
    position = cumsum_sol(g.float()) - 1  # where each kept v[m] lands
    lands = position.unsqueeze_dim(1) == i.float().unsqueeze_dim(0)
    moves = (lands & g.unsqueeze_dim(1)).float()  # [i, i]: kept v[m] goes to k
    return (v.unsqueeze_dim(0) @ moves).reshape([v.shape[0]])


def flatten_sol(a: Tensor) -> Tensor:
    i, j = a.shape
    k = Tensor.arange(0, i * j, device=a.device)  # one k per output element
    rows = a[k / j]  # [i * j, j]: output k gets a copy of row k / j (int /)
    cols = Tensor.arange(0, j, device=a.device)
    keep = (k % j).unsqueeze_dim(1) == cols.unsqueeze_dim(0)  # its column k % j
    return rows.mask_fill(~keep, 0.0).sum_dim(1)[:, 0]  # sum the 0s out


def linspace_sol(i: Tensor, j: Tensor, n: int) -> Tensor:
    steps = Tensor.arange(0, n, device=i.device).float()
    return i + (j - i) * steps * (1 / max(1, n - 1))


def bucketize_sol(v: Tensor, boundaries: Tensor) -> Tensor:
    above = boundaries.unsqueeze_dim(0) <= v.unsqueeze_dim(1)
    return above.int().sum_dim(1).reshape([v.shape[0]])


# ----- PyTorch's answers -------------------------------------------------------------------------
def _t_diff(a):
    return torch.diff(a, prepend=torch.zeros(1, dtype=a.dtype))


def _t_compress(g, v):
    kept = v[g]
    return torch.cat([kept, torch.zeros(v.shape[0] - kept.shape[0], dtype=v.dtype)])


def _t_pad_to(a, j):
    return torch.cat([a, torch.zeros(max(j - a.shape[0], 0), dtype=a.dtype)])[:j]


def _t_heaviside(a, b):
    return torch.heaviside(a, b)


def _t_linspace(i, j, n):
    return torch.linspace(float(i[0]), float(j[0]), n, dtype=torch.float32)


_MATMUL = ("__matmul__",)
_SUM = ("sum_dim",)
_INDEX = ("__getitem__", "__mod__")

PUZZLES: dict[str, Puzzle] = {p.name: p for p in [
    Puzzle("ones", "ones(a: [i]) -> [i]", "A float vector of ones as long as `a`.", (), ("a",),
           vector_cases(), lambda a: torch.ones_like(a), ones_sol,
           ("A range times zero is all zeros.", "Then add 1, and convert the int tensor with .float().")),
    Puzzle("sum", "sum(a: [i]) -> [1]", "The sum of `a`, without a reduction: use `@`.", _MATMUL,
           ("a",), vector_cases(), lambda a: a.sum().reshape(1), sum_sol,
           ("A [1, i] row times an [i, 1] column of ones is [1, 1].",
            "a * 0 + 1 is a vector of ones; reshape([1]) at the end.")),
    Puzzle("outer", "outer(a: [i], b: [j]) -> [i, j]", "The outer product of two vectors.", (),
           ("a", "b"), _two_vecs(False), torch.outer, outer_sol,
           ("Make `a` a column and `b` a row: broadcasting does the rest.",
            "a.unsqueeze_dim(1) is [i, 1], b.unsqueeze_dim(0) is [1, j].")),
    Puzzle("diag", "diag(a: [i, i]) -> [i]", "The diagonal of a square matrix.", _SUM, ("a",),
           _square(), torch.diag, diag_sol,
           ("Compare a column of indices ([i, 1]) with a row of indices ([1, i]): broadcasting "
           "makes an [i, i] bool matrix; where is it true?",
            "Zero everything off the diagonal with mask_fill, then sum each row: sum_dim keeps the dim.")),
    Puzzle("eye", "eye(a: [i]) -> [i, i]", "The identity matrix with as many rows as `a` has elements.",
           (), ("a",), vector_cases(), lambda a: torch.eye(a.shape[0]), eye_sol,
           ("`i == j` for a column of i and a row of j is a bool matrix.",
            "A bool tensor becomes 0.0 and 1.0 with .float().")),
    Puzzle("triu", "triu(a: [i, j]) -> [i, j]", "`a` with every element below the diagonal set to 0.",
           (), ("a",), _matrix(), torch.triu, triu_sol,
           ("An element is below the diagonal when its row index is larger than its column "
           "index: compare a column of row indices with a row of column indices.",
            "mask_fill(mask, 0.0) writes 0 where the mask is true.")),
    Puzzle("cumsum", "cumsum(a: [i]) -> [i]", "Running sums: `out[k] = a[0] + ... + a[k]`.", _MATMUL,
           ("a",), vector_cases(), lambda a: torch.cumsum(a, 0), cumsum_sol,
           ("Which a[m] reach out[k]? Those with m <= k: a column of m compared with a row "
           "of k is a triangular matrix.",
            "Row a as [1, i], times the [i, i] matrix of (m <= k) as floats.")),
    Puzzle("diff", "diff(a: [i]) -> [i]", "`out[0] = a[0]`, `out[k] = a[k] - a[k-1]`.", _MATMUL,
           ("a",), vector_cases(), _t_diff, diff_sol,
           ("Write the matrix M with out = a @ M: two diagonals, each a column of m compared "
           "with a row of k.",
            "M[m, k] is 1 when m == k and -1 when m + 1 == k.")),
    Puzzle("vstack", "vstack(a: [i], b: [i]) -> [2, i]", "`a` above `b`.", (), ("a", "b"),
           _two_vecs(True), lambda a, b: torch.stack([a, b]), vstack_sol,
           ("A column [0, 1] compared with 0 and with 1 picks a row.",
            "Multiply a (as a row) by (row == 0) and b by (row == 1), then add.")),
    Puzzle("roll", "roll(a: [i]) -> [i]", "`out[k] = a[(k + 1) % i]`.", _INDEX, ("a",), vector_cases(),
           lambda a: torch.roll(a, -1), roll_sol,
           ("Indexing with an int tensor gathers: a[idx].", "idx is (arange + 1) % i.")),
    Puzzle("flip", "flip(a: [i]) -> [i]", "`a` reversed.", _INDEX, ("a",), vector_cases(),
           lambda a: torch.flip(a, [0]), flip_sol,
           ("Index i - 1 - k.", "Build that index from arange with * -1 and +, then a[idx].")),
    Puzzle("heaviside", "heaviside(a: [i], b: [i]) -> [i]",
           "1 where `a > 0`, 0 where `a < 0`, `b` where `a == 0`.", (), ("a", "b"),
           _two_vecs(True), _t_heaviside, heaviside_sol,
           ("mask_where(mask, value) takes value where mask is true.",
            "Start from (a > 0).float(), then take b where a == 0.")),
    Puzzle("repeat", "repeat(a: [i], d: int) -> [d, i]", "`d` copies of `a`, one per row.", (),
           ("a", "d"), _cases_with(lambda n, m: {"a": _floats([n]), "d": st.just(m)}),
           lambda a, d: a.unsqueeze(0).repeat(d, 1), repeat_sol,
           ("A [d, 1] column of zeros plus a [1, i] row.",
            "arange(0, d) as a float column, times 0, plus a.unsqueeze_dim(0).")),
    Puzzle("sequence_mask", "sequence_mask(values: [i, j], length: [i]) -> [i, j]",
           "Row r keeps its first `length[r]` values, the rest become 0.", (), ("values", "length"),
           _cases_with(lambda n, m: {"values": _floats([n, m]), "length": _ints([n], 0, m)}),
           lambda v, n: v * (torch.arange(v.shape[1]).unsqueeze(0) < n.unsqueeze(1)), sequence_mask_sol,
           ("Compare a row of column indices with a column of lengths.",
            "Where the column index is >= the row's length, mask_fill with 0.")),
    Puzzle("bincount", "bincount(a: [i], j: int) -> [j]", "How often each value 0..j-1 occurs in `a`.",
           _SUM, ("a", "j"), _cases_with(lambda n, m: {"a": _ints([n], 0, m - 1), "j": st.just(m)}),
           lambda a, j: torch.bincount(a, minlength=j), bincount_sol,
           ("Compare every element with every bin: an [i, j] bool matrix; count down the columns.",
            "(a as a column == bins as a row).int().sum_dim(0), then reshape([j]).")),
    Puzzle("scatter_add", "scatter_add(values: [i], link: [i], j: int) -> [j]",
           "`out[k]` is the sum of the `values[m]` whose `link[m] == k`.", _MATMUL,
           ("values", "link", "j"),
           _cases_with(lambda n, m: {"values": _floats([n]), "link": _ints([n], 0, m - 1), "j": st.just(m)}),
           lambda v, link, j: torch.zeros(j, dtype=v.dtype).scatter_add(0, link, v), scatter_add_sol,
           ("Like bincount, but weighted: a row of values times the [i, j] hit matrix.",
            "values as [1, i] @ (link column == bins row).float() is [1, j].")),
    Puzzle("pad_to", "pad_to(a: [i], j: int) -> [j]", "`a` cut to `j` elements or padded with 0s.",
           _MATMUL, ("a", "j"), _cases_with(lambda n, m: {"a": _floats([n]), "j": st.just(m)}),
           _t_pad_to, pad_to_sol, ("Element m goes to place k when m == k: a column of m against a row of k is an "
           "[i, j] matrix.",
                                   "a as [1, i] @ that matrix as floats is [1, j]: cut and padded at once.")),
    Puzzle("compress", "compress(g: [i] bool, v: [i]) -> [i]",
           "The `v[m]` with `g[m]` true, moved to the front in order; zeros after them.", _MATMUL,
           ("g", "v"), _N.flatmap(lambda n: st.fixed_dictionaries({"g": _bools([n]), "v": _floats([n])})),
           _t_compress, compress_sol,
           ("Where does a kept v[m] land? At (number of kept elements up to m) - 1: a cumsum.",
            "Compare those places (a column) with a row of output indices, keep only the "
            "rows of kept elements, then v as [1, i] @ that matrix as floats.")),
    Puzzle("flatten", "flatten(a: [i, j]) -> [i * j]", "The rows of `a`, one after the other.",
           ("__getitem__", "__truediv__", "__mod__", "sum_dim"), ("a",), _matrix(),
           lambda a: a.reshape(-1), flatten_sol,
           ("Output k comes from row k / j, column k % j: an int tensor divided by an int "
            "divides whole, toward zero (Tensor has no //).",
            "a[rows] gathers whole rows: keep the one column each output wants, sum it out with "
            "sum_dim(1), and drop that dim with [:, 0] (no reshape here)."),
           without=("reshape",)),
    Puzzle("linspace", "linspace(i: [1], j: [1], n: int) -> [n]",
           "`n` evenly spaced floats from `i[0]` to `j[0]`, both ends included.", (),
           ("i", "j", "n"), st.tuples(_floats([1]), _floats([1]), _N).map(
               lambda t: {"i": t[0], "j": t[1], "n": t[2]}),
           _t_linspace, linspace_sol,
           ("The step is (j - i) times the Python float 1 / (n - 1) (a tensor's / is not "
            "allowed here, not even by a number); a single point (n = 1) is i.",
            "A [1] tensor broadcasts against an [n] one: i + (j - i) * a float range * "
            "(1 / max(1, n - 1)).")),
    Puzzle("bucketize", "bucketize(v: [i], boundaries: [j]) -> [i]",
           "For each `v[m]`, how many boundaries are <= it (boundaries sorted).", _SUM,
           ("v", "boundaries"),
           _cases_with(lambda n, m: {"v": _floats([n]), "boundaries": _floats([m]).map(np.sort)}),
           lambda v, b: torch.bucketize(v, b, right=True), bucketize_sol,
           ("Compare every v with every boundary and count.",
            "(boundaries row <= v column).int().sum_dim(1), then reshape.")),
]}


#: The order of the appendix: a puzzle may call the puzzles before it (their hidden solutions,
#: or the reader's own solutions that passed), and the ops inside such a call do not count.
ORDER = ("ones", "sum", "outer", "diag", "eye", "triu", "cumsum", "diff", "vstack", "roll", "flip",
         "compress", "pad_to", "sequence_mask", "bincount", "scatter_add", "flatten", "linspace",
         "heaviside", "repeat", "bucketize")

#: The reader's solutions that passed their checker (name → function), usable in later puzzles.
SOLVED: dict[str, Callable[..., Tensor]] = {}


def earlier(name: str) -> list[Callable[..., Tensor]]:
    """The functions a solution of ``name`` may call: the hidden solutions of the puzzles
    before it in :data:`ORDER`, and the reader's own solutions of them that passed."""
    before = ORDER[: ORDER.index(name)] if name in ORDER else ()
    return [PUZZLES[p].solution for p in before] + [
        SOLVED[p] for p in before
        if p in SOLVED and _as_stated(p, SOLVED[p]) and _passes(p, SOLVED[p])]


def helper_checks(name: str) -> dict:
    """``{the reader's solved earlier puzzle: its check}``: every call a later solution makes
    to it must get that puzzle's answer (PyTorch's) for the inputs it is given, so a solved
    ``ones`` that reshapes a rank-2 input cannot do a later puzzle's forbidden work."""
    return {fn: _stated(p) for p, fn in SOLVED.items() if fn in earlier(name)}


def _stated(name: str) -> Callable[[dict, object], str | None]:
    puzzle = PUZZLES[name]
    shapes = dict(re.findall(r"(\w+): (\[[^\]]*\]|int)", puzzle.signature.split("->")[0]))

    def check(args: dict, result: object) -> str | None:
        wrong = f"your {name}, called by this solution, must do what the {name} puzzle says"
        for p in puzzle.params:
            value, want = args.get(p), shapes[p]
            rank = None if want == "int" else len(want.strip("[]").split(","))
            if rank is None and type(value) is not int or rank is not None and (
                    type(value) is not Tensor or len(value.shape) != rank):
                got = list(value.shape) if type(value) is Tensor else type(value).__name__
                return f"{wrong}; it was given {p} = {got}, where {name} takes {p}: {want}"
        if type(result) is not Tensor:
            return f"{wrong}; it returned a {type(result).__name__}"
        targs = [torch.from_numpy(np.array(Tensor.to_numpy(args[p]))) if shapes[p] != "int"
                 else args[p] for p in puzzle.params]
        expected = np.asarray(puzzle.torch_ref(*targs))
        found = Tensor.to_numpy(result)
        if found.shape != expected.shape or not np.allclose(found, expected, rtol=1e-6,
                                                            atol=1e-6):
            return (f"{wrong}; for these inputs it returned {list(found.shape)} values that "
                    f"are not {name}'s answer")
        return None

    return check


def _as_stated(name: str, fn: Callable[..., Tensor]) -> bool:
    """Whether ``fn`` takes exactly the parameters of puzzle ``name``, none optional: a solved
    puzzle with an extra parameter (``ones(a, _x=None)``) could do anything when a later
    puzzle passes it, so its ops count as the later puzzle's own."""
    import inspect

    try:
        params = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):
        return False
    return [p.name for p in params] == list(PUZZLES[name].params) and all(
        p.default is p.empty and p.kind is p.POSITIONAL_OR_KEYWORD for p in params)


_PASSED: dict = {}


def _passes(name: str, fn: Callable[..., Tensor]) -> bool:
    """Whether the reader's ``fn`` passes puzzle ``name`` (checked again, once per function: an
    entry put into :data:`SOLVED` by hand is not trusted)."""
    key = (name, getattr(fn, "__code__", None))
    if key not in _PASSED:
        _PASSED[key] = PUZZLES[name].exercise(5).find_failure(fn) is None
    return _PASSED[key]


# ----- planted wrong solutions: what a reader might write, and the verdict it must get ----------
def outer_wrong_value(a: Tensor, b: Tensor) -> Tensor:
    return a.unsqueeze_dim(1) + b.unsqueeze_dim(0)  # + instead of *


def outer_wrong_shape(a: Tensor, b: Tensor) -> Tensor:
    return b.unsqueeze_dim(1) * a.unsqueeze_dim(0)  # [j, i]


def cumsum_forbidden(a: Tensor) -> Tensor:
    i = Tensor.arange(0, a.shape[0], device=a.device)
    upper = (i.unsqueeze_dim(1) <= i.unsqueeze_dim(0)).float()
    return (a.unsqueeze_dim(1) * upper).sum_dim(0).reshape([a.shape[0]])  # sum_dim: not allowed here


def flip_data_out(a: Tensor) -> Tensor:
    return Tensor.from_data(a.tolist()[::-1], a.device)  # values out to Python and back


def diag_wrong_value(a: Tensor) -> Tensor:
    i = Tensor.arange(0, a.shape[0], device=a.device)
    return a.mask_fill(i.unsqueeze_dim(1) > i.unsqueeze_dim(0), 0.0).sum_dim(1).reshape([a.shape[0]])


#: name → (puzzle, wrong solution, the verdict kind it must get)
PLANTED = {
    "outer_wrong_value": ("outer", outer_wrong_value, "value"),
    "outer_wrong_shape": ("outer", outer_wrong_shape, "shape"),
    "cumsum_forbidden": ("cumsum", cumsum_forbidden, "rule"),
    "flip_data_out": ("flip", flip_data_out, "rule"),
    "diag_wrong_value": ("diag", diag_wrong_value, "value"),
}

# ----- what the appendix calls -----------------------------------------------------------------
#: Generated cases per check in the appendix: enough to find a wrong solution, and the whole
#: page stays a few seconds.
PAGE_EXAMPLES = 10

_CHECKERS: dict[str, BuildExercise] = {}


def checker(name: str) -> BuildExercise:
    """The appendix's checker of puzzle ``name`` (one per puzzle, so its hint ladder
    remembers the reader's attempts)."""
    if name not in _CHECKERS:
        _CHECKERS[name] = PUZZLES[name].exercise(PAGE_EXAMPLES)
    return _CHECKERS[name]


def allowed_text(name: str) -> str:
    """``Allowed: the base ops and @, sum_dim`` (the earlier puzzles too: the page's rules say
    so once, not at every check)."""
    extra = [op_label(op) for op in PUZZLES[name].extra]
    return "Allowed: the base ops" + (f" and {', '.join(extra)}" if extra else " only")


def check(solution, name: str | None = None) -> Verdict:
    """Check the reader's function for the puzzle of the same name (or ``name``)."""
    name = name or solution.__name__
    if name not in PUZZLES:
        raise KeyError(f"no puzzle named {name!r}: name your function after the puzzle "
                       f"({', '.join(PUZZLES)})")
    print(allowed_text(name) + ".")
    if is_placeholder(solution):
        verdict = Verdict(False, "todo", f"{TODO} Replace ... with your code.", "")
        print(verdict.text)
        return verdict
    stub = _unsolved_call(solution, name)
    if stub is not None:
        verdict = Verdict(False, "todo", f"{TODO} Your {name} calls {stub}, which is still "
                          f"`...`: solve {stub} first, or import the book's: "
                          f"from minidl_book.puzzles import {stub}_sol", "")
        print(verdict.text)
        return verdict
    ex = checker(name)
    # the rules from the puzzle's definition at every check, with the earlier puzzles solved so far
    ex.rules = dataclasses.replace(PUZZLES[name].exercise(1).rules, helpers=tuple(earlier(name)),
                                   helper_checks=helper_checks(name))
    verdict = ex.check(solution)
    if verdict.ok:
        SOLVED[name] = solution
        print(one_line_note(solution))
    else:
        draw_verdict(verdict, name)
    return verdict


def _unsolved_call(solution: Callable[..., Tensor], name: str) -> str | None:
    """An earlier puzzle ``solution`` calls by name that is still the page's ``...`` stub."""
    before = ORDER[: ORDER.index(name)] if name in ORDER else ()
    glob = getattr(solution, "__globals__", {})
    for used in getattr(getattr(solution, "__code__", None), "co_names", ()):
        if used in before and is_placeholder(glob.get(used)):
            return used
    return None


def one_line_note(solution: Callable[..., Tensor]) -> str:
    """Tensor-Puzzles' challenge, as a note on a solution that passed: one line of body under
    80 columns. The body is read with ``ast``: a body on the ``def`` line counts as its one
    line, a docstring and comments do not count."""
    body = _body_lines(solution)
    if not body:
        return ""
    if len(body) == 1 and len(body[0]) < 80:
        return "★ One line under 80 columns: Tensor-Puzzles' challenge met."
    if len(body) == 1:
        return (f"(Tensor-Puzzles' challenge: one line under 80 columns; yours is one line "
                f"of {len(body[0])} columns.)")
    return (f"(Tensor-Puzzles' challenge: one line under 80 columns; yours has {len(body)} "
            "lines of body.)")


def _body_lines(solution: Callable[..., Tensor]) -> list[str]:
    """The stripped lines of code in ``solution``'s body (``[]`` when its source is not found)."""
    import ast
    import inspect
    import textwrap

    try:
        source = textwrap.dedent(inspect.getsource(solution))
        tree = ast.parse(source)
    except (OSError, TypeError, SyntaxError):
        return []
    defs = [n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
    if not defs:
        return []
    body = defs[0].body
    if (len(body) > 1 and isinstance(body[0], ast.Expr)
            and isinstance(body[0].value, ast.Constant) and isinstance(body[0].value.value, str)):
        body = body[1:]  # the docstring
    lines = source.splitlines()[body[0].lineno - 1: body[-1].end_lineno]
    lines[0] = lines[0][body[0].col_offset:]  # a body on the def line starts after the colon
    return [ln.strip() for ln in lines if ln.strip() and not ln.strip().startswith("#")]


def draw_verdict(verdict: Verdict, name: str) -> None:
    """Draw a value or shape verdict's failing case as grids: inputs, target, yours."""
    from minidl_book.puzzle_draw import grids, show, verdict_panels

    drawn = verdict_panels(verdict)
    if drawn is not None:
        panels, differ = drawn
        show(grids(panels, f"{name}: the failing case (outlined: where yours differs)", differ))


def solution(name: str) -> None:
    """Print the hidden reference solution of ``name``, renamed to ``name`` (the book's tests
    check that every reference solution passes its checker)."""
    import inspect

    sol = PUZZLES[name].solution
    print(inspect.getsource(sol).rstrip().replace(f"def {sol.__name__}(", f"def {name}(", 1))
    failed = PUZZLES[name].exercise(PAGE_EXAMPLES).find_failure(sol)
    if failed is not None:  # the book's own answer must pass: a broken checker
        raise RuntimeError(f"puzzle {name}: the reference solution fails: {failed.text}")


__all__ = ["BASE", "ORDER", "PAGE_EXAMPLES", "PLANTED", "PUZZLES", "SOLVED", "Puzzle", "allowed_text",
           "check", "checker", "earlier", "solution"]

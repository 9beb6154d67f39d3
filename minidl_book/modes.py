"""Helpers of the train-and-inference chapter: its data, its small models, its printers.

- :func:`T` and :func:`vec`: a float32 tensor from an array; floats printed as burn prints an
  ``f32`` (the fewest digits that read back), so burn's printed digits can be compared.
- :func:`batch`: batch ``k`` of burn's BatchNorm experiment (4 samples × 3 features).
- :func:`mini_model`: ``Linear(4, 8) → Dropout(0.5) → Linear(8, 1)``, the chapter's model.
- :func:`mode_state`: what a mode method leaves in a model (flag, frozen mark, weight's
  device, wish for gradients) and whether its dropout then drops an autodiff input.
- :func:`running_mean`: a BatchNorm's running mean, every update folded in, as burn prints it.
- :func:`as_bool`, :func:`as_number` and the comparisons built on them: the chapter's
  exercises read ``"False"``, ``"4/3"`` or ``"1"`` as the reader means them.
- :func:`running_state_timeline`, :func:`clone_picture`: the two RunningState pictures;
  :func:`statistics_used`: which statistics an inference read;
  :func:`column_stats_picture`: per-column statistics.
"""

from __future__ import annotations

import re

import numpy as np
import torch

from minidl import Device, Tensor
from minidl.nn import DropoutConfig, LinearConfig, Sequential
from minidl_book.exercises import Exercise, _parts_of
from minidl_book.verdict import TODO

__all__ = ["PairExercise", "ReadExercise", "read_pair", "T", "as_bool", "as_number", "as_pair", "batch",
           "clone_picture", "running_mean",
           "close_number", "column_stats_picture", "is_pair", "mini_model", "mode_state",
           "random_batch", "running_state_demo", "running_state_timeline", "same_bool", "still_zero",
           "same_int", "statistics_used", "vec"]


def T(array, device: Device) -> Tensor:
    """A float32 minidl tensor holding ``array`` on ``device``."""
    return Tensor.from_numpy(np.ascontiguousarray(array, dtype=np.float32), device)


def vec(values, decimals: int | None = None) -> str:
    """Floats of a minidl tensor, a torch tensor or an array, as burn prints an f32.

    Each float32 gets the fewest digits that read back to it (Rust's ``{:?}``);
    ``decimals`` rounds instead, as the PyTorch scripts beside burn print.
    """
    if isinstance(values, torch.Tensor):
        values = values.detach().numpy()
    elif isinstance(values, Tensor):
        values = values.to_numpy()
    flat = np.asarray(values, dtype=np.float32).ravel()
    if decimals is not None:
        return "[" + ", ".join(f"{v:.{decimals}f}" for v in flat) + "]"
    shortest = (np.format_float_positional(v, unique=True, trim="0") for v in flat)
    return "[" + ", ".join(shortest) + "]"


def batch(k: int) -> np.ndarray:
    """Batch k of burn's BatchNorm experiment: x[i, j] = 2 sin(3i + j + k + 1) + j, 4 × 3.

    burn's experiment never prints its batches (of its outputs, only the first row);
    this formula is consistent with every digit it printed.
    """
    i, j = np.arange(4)[:, None], np.arange(3)[None, :]
    return (2 * np.sin(3 * i + j + k + 1) + j).astype(np.float32)


def running_mean(layer) -> str:
    """A BatchNorm's running mean with every update folded in (burn's
    ``RunningState::value_sync``), printed as burn prints floats."""
    return vec(layer.running_mean.value_sync())


SCALE, OFFSET = np.array([1.0, 1.5, 0.8]), np.array([0.1, 1.0, 2.0])


def random_batch(k: int, n: int = 4) -> np.ndarray:
    """Random batch k: n samples of 3 features (spread SCALE, offset OFFSET), reproducible."""
    normal = np.random.default_rng(100 + k).standard_normal((n, 3))
    return (normal * SCALE + OFFSET).astype(np.float32)


def mini_model(device: Device) -> Sequential:
    """Linear(4, 8) → Dropout(0.5) → Linear(8, 1), its Linears built on ``device``."""
    return Sequential(
        LinearConfig(4, 8).init(device),
        DropoutConfig(0.5).init(),
        LinearConfig(8, 1).init(device),
    )


def mode_state(model: Sequential) -> tuple[bool, bool, bool, bool, bool]:
    """(flag on, frozen, first weight on autodiff, weight wants grad, dropout drops).

    "drops" runs the model's dropout on ``ones(1, 1000)`` on the autodiff device.
    """
    flag, weight = model[1].training.val(), model[0].weight
    ones = Tensor.ones((1, 1000), Device.flex().autodiff())
    drops = bool((model[1](ones).to_numpy() == 0).any())
    return (flag.is_enabled(), flag.is_frozen(), weight.val().device.is_autodiff(),
            weight.require_grad, drops)


# --- the chapter's exercises: answers read as a reader writes them --------------------

_TRUE, _FALSE = {"true", "yes", "y", "moves", "1"}, {"false", "no", "n", "0"}
#: phrases a "does it move?" half is written in (``"it moves"``): their yes/no reading
_MOVES = {"moves": True, "moved": True, "it moves": True, "it moved": True,
          "yes it moves": True, "does not move": False, "doesn't move": False,
          "it does not move": False, "it doesn't move": False, "stays": False,
          "no it does not move": False}


def as_bool(value) -> bool:
    """``True``/``False`` as a bool or a word (``"False"``, ``"no"``, ``"it moves"``), also
    with its reason after it (``"True (it moves)"``) or as a phrase about the running mean
    (``"the running mean moves"``, ``"it updates"``, ``"it does not move"``); anything else
    raises ``ValueError`` (unreadable, not wrong).

    ``bool("False")`` is ``True``, so a string is read as the word it is.
    """
    if isinstance(value, bool | np.bool_):
        return bool(value)
    if isinstance(value, int | np.integer) and value in (0, 1):
        return bool(value)
    if isinstance(value, str):
        word = " ".join(re.sub(r"[^\w' ]", " ", value.lower()).split())
        if word in _TRUE | _FALSE:
            return word in _TRUE
        if word in _MOVES:
            return _MOVES[word]
        first, _, rest = word.partition(" ")
        said = first in _TRUE if first in _TRUE | _FALSE else None
        implied = _moves_phrase(rest if said is not None else word)
        if said is not None and implied is not None and said != implied:
            raise ValueError(f"{value!r} says both {said} and {implied}; answer one")
        if said is not None or implied is not None:
            return said if said is not None else implied
    raise ValueError(f"not a yes/no answer: {value!r}")


_MOVE_VERBS = re.compile(r"\b(move[sd]?|moving|update[sd]?|updating|change[sd]?|changing|"
                         r"shift(s|ed)?|drift(s|ed)?)\b")
_STAYS = re.compile(r"\b(stays?|stayed|unchanged|still zeros?|remains?|untouched)\b")
_NEGATION = re.compile(r"\b(not|no|never|doesn't|didn't|won't|nothing)\b")


def _moves_phrase(text: str) -> bool | None:
    """A phrase about the running mean: "the mean moves" → True, "it does not update" or
    "it stays zero" → False; a phrase naming neither → None."""
    if not text:
        return None
    if _STAYS.search(text):
        return bool(_NEGATION.search(text))  # "it does not stay zero": it moves
    if _MOVE_VERBS.search(text):
        return not _NEGATION.search(text)
    return None


_SHARED = re.compile(r"\b(shared?|shares|same (state|statistics|arc|pointer))\b")
_NONZERO = re.compile(r"\b(non ?zeros?|not (all )?zeros?|not zero)\b")
_ZERO = re.compile(r"\b(all )?zeros?\b")


def _still_zero_phrase(text: str) -> bool | None:
    """A phrase answering "is it still all zeros?": "it moved", "it updates" → False
    (moving means no longer zero); "it stays zero", "unchanged", "it does not move",
    "still zeros", "zero" → True; "nonzero", "not zero" → False; neither → None."""
    moves = _moves_phrase(text)
    if moves is not None:
        return not moves
    if _NONZERO.search(text):
        return False
    if _ZERO.search(text):
        return not _NEGATION.search(text)
    return None


def read_still_zero(prediction) -> bool:
    """An answer to "is the original's running mean still all zeros?" as a bool:
    ``True``/``False``/``"no"`` as themselves, a phrase by what it says about zeros
    (``"it moved"`` is False, ``"it stays zero"`` True: the opposite polarity to the
    "does it move?" half of the mixed exercise), or a word and its reason
    (``"False, it moved"``, ``"shared, so False"``), which must agree; "shared" says it
    moved. Anything else raises ``ValueError``."""
    if not isinstance(prediction, str):
        return as_bool(prediction)
    text = " ".join(re.sub(r"[^\w' ]", " ", prediction.lower()).split())
    words = (_TRUE - {"moves"}) | _FALSE
    if text in words:
        return text in _TRUE
    first, _, rest = text.partition(" ")
    said = first in _TRUE if first in words and rest else None
    if said is None:  # "shared, so False": the one True/False word, wherever it stands
        named = {w for w in text.split() if w in ("true", "false")}
        if len(named) == 1:
            said = named == {"true"}
            rest = " ".join(w for w in text.split() if w not in named)
    reason = rest if said is not None else text  # the answer word is no negation
    implied = _still_zero_phrase(reason)
    if implied is None and _SHARED.search(reason):
        implied = bool(_NEGATION.search(reason))  # shared: the clone's forward moved it
    if said is not None and implied is not None and said != implied:
        meaning = {True: "still zero", False: "it moved"}
        raise ValueError(f"{prediction!r} says both: its True/False word says "
                         f"{meaning[said]}, {rest!r} says {meaning[implied]}; answer one")
    if said is None and implied is None:
        raise ValueError(f"not a True/False answer: {prediction!r}; answer True or False")
    return said if said is not None else implied


def still_zero(prediction, truth) -> bool:
    """Whether ``prediction`` answers "is the original's running mean still all zeros?"
    as ``truth`` does (read by :func:`read_still_zero`)."""
    return read_still_zero(prediction) == truth


_VULGAR = {"½": "1/2", "⅓": "1/3", "⅔": "2/3", "¼": "1/4", "¾": "3/4", "⅕": "1/5",
           "⅙": "1/6", "⅛": "1/8"}


def _expression(text: str, symbols: dict[str, float]) -> float | None:
    """``"n/(n-1)"`` with ``symbols={"n": 4}`` → 4/3: + - * / ** ``sqrt`` and brackets
    over numbers and the named symbols only; anything else → None."""
    import ast
    import math
    import operator

    ops = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
           ast.Div: operator.truediv}

    def walk(node):
        if isinstance(node, ast.Expression):
            return walk(node.body)
        if isinstance(node, ast.Constant) and isinstance(node.value, int | float):
            return float(node.value)
        if isinstance(node, ast.Name) and node.id in symbols:
            return float(symbols[node.id])
        if isinstance(node, ast.BinOp) and type(node.op) in ops:
            return ops[type(node.op)](walk(node.left), walk(node.right))
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            return -walk(node.operand)
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Pow):
            return walk(node.left) ** walk(node.right)
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                and node.func.id == "sqrt" and len(node.args) == 1):
            return math.sqrt(walk(node.args[0]))  # "sqrt(16/9)"
        raise ValueError(node)

    try:
        return walk(ast.parse(text.strip(), mode="eval"))
    except (SyntaxError, ValueError, ZeroDivisionError, OverflowError, TypeError):
        return None


#: a clause giving a symbol its value after an expression: "where n = 4", ", with n=4"
_WHERE = re.compile(r"[,;]?\s*\b(?:where|with|for|when|at|if)\s+([a-z])\s*=\s*(\d+(?:\.\d+)?)"
                    r"\s*\)?\s*$", re.I)
#: a remark in words after the answer, no digits: ", PyTorch larger", " (Bessel)"
_REMARK = re.compile(r"(\s*[,;:]\s*[a-z][a-z' .-]*|\s*\(\s*[a-z][a-z' .-]{2,}\))\s*$", re.I)


def as_number(value, symbols: dict[str, float] | None = None) -> float:
    """A number, also written as a string the book's other exercises read (``"4/3"``,
    ``"1.333"``, ``"one"``, ``"4,000"``), after a leading hedge (``"about 4000"``), as a
    ratio (``"4:3"``, ``"4 over 3"``), a mixed number (``"1 1/3"``, ``"1⅓"``), ``"4 / 3"``, or as the last
    side of a worked line (``"n/(n-1) = 4/3"``); ``Fraction(4, 3)``; with ``symbols``, an
    expression in them (``"n/(n-1)"``). Anything else raises ``ValueError`` saying it is
    not a number."""
    from minidl_book.exercises import _number_of

    if isinstance(value, str):
        where = _WHERE.search(value)  # "n/(n-1) where n=4": n is 4
        if where:
            symbols = {**(symbols or {}), where.group(1): float(where.group(2))}
            value = value[:where.start()]
        value = _REMARK.sub("", value)  # "4/3, PyTorch larger", "4/3 (Bessel)": 4/3
        if re.search(r"\S\s*(=|\u2248)", value):  # "n/(n-1) = 4/3", "4/3 ≈ 1.33"
            value = re.split(r"=|\u2248", value)[-1]
        value = re.sub(r"(\d)\s*(\.\.\.|\u2026)\s*$", r"\1", value)  # "1.333...": 1.333
        percent = re.fullmatch(r"\s*(?:(?:about|around|roughly|~|\u2248)\s*)?"
                               r"(\d+(?:\.\d+)?)\s*%\s*", value, re.I)  # "133%"
        if percent:
            return float(percent.group(1)) / 100
        value = re.sub(r"^\s*(\d+)\s*:\s*(\d+)\s*$", r"\1/\2", value)  # "4:3"
        text = re.sub(r"^\s*(about|around|roughly|approximately|approx\.?|~|\u2248)\s*", "",
                      value, flags=re.I)
        spoken = re.fullmatch(r"\s*(.+?)\s+(?:over|divided by)\s+(.+?)\s*", text, re.I)
        if spoken:  # "4 over 3", "n over n-1": each side whole
            top, bottom = spoken.groups()
            text = (f"{top}/{bottom}" if re.fullmatch(r"[\d.]+", top + bottom)
                    else f"({top})/({bottom})")
        for glyph, fraction in _VULGAR.items():  # "1⅓" → "1 1/3"
            text = text.replace(glyph, f" {fraction}")
        mixed = re.fullmatch(r"\s*(\d+)\s+(\d+)\s*/\s*(\d+)\s*", text)  # "1 1/3"
        if mixed and int(mixed.group(3)):
            whole, num, den = (int(g) for g in mixed.groups())
            return whole + num / den
        text = re.sub(r"^\s*(\d+(?:\.\d+)?)\s*/\s*(\d+(?:\.\d+)?)\s*$", r"\1/\2", text)
        number = _number_of(text)
        if number is None:
            number = _expression(text, symbols or {})
        if number is None:
            raise ValueError(f"{value!r} is not a number the checker can read; write it in "
                             "digits (4000, 1.33, 4/3) or as a number word (one)")
        return float(number)
    if isinstance(value, bool):
        raise ValueError("a bool is not a number here")
    return float(value)


def same_bool(prediction, truth) -> bool:
    return as_bool(prediction) == truth


def same_int(prediction, truth) -> bool:
    number = as_number(prediction)
    return number == int(number) and int(number) == truth


def close_number(rtol: float = 0.0, atol: float = 0.0, **symbols: float):
    """Within ``atol + rtol * |truth|``; ``atol=5e-3`` takes a 2-decimal answer (1.33).
    ``symbols`` (``n=4``) are the question's named quantities: ``"n/(n-1)"`` is read with
    them."""
    def compare(prediction, truth) -> bool:
        return abs(as_number(prediction, symbols) - truth) <= atol + rtol * abs(truth)

    return compare


def as_pair(prediction):
    """A ``(zeros, moves)`` answer as a tuple: a tuple or list of two, or one string the
    book's tuple reading splits in two (``"4000, True"``, ``"(4000, yes)"``, ``"4000 yes"``);
    else None."""
    if isinstance(prediction, str):
        text = prediction
        prediction = _parts_of(text)
        if len(prediction) == 1:  # "4000 yes", "(about 4000 moves)": the last word
            head, _, last = text.strip().strip("()[]{} ").rpartition(" ")
            prediction = (head, last) if head.strip() else prediction
    if isinstance(prediction, tuple | list) and len(prediction) == 2:
        return tuple(prediction)
    return None


def is_pair(prediction) -> bool:
    """Whether the answer has the only shape a ``(zeros, moves)`` answer has."""
    return as_pair(prediction) is not None


_HALF = re.compile(r"\s*(about |around |roughly |~\s*)?half( of (them|the outputs|\d+))?\s*",
                   re.I)


def zeros_and_moves(prediction, truth, tolerance: int = 400,
                    centre: float | None = None,
                    total: int | None = None) -> tuple[bool | None, bool | None]:
    """Which half of a ``(zeros, moves)`` prediction is right (each half on its own); the
    count is ``None`` when it cannot be read as a number. The count is right within
    ``tolerance`` of ``centre`` (the count a reader reasons to, p · n) when given, else of
    the measured one; with ``total``, a share (``"50%"``, ``0.5``) is that share of it.
    The running-mean half is ``None`` when it cannot be read."""
    pair = as_pair(prediction)
    if pair is None:
        raise ValueError("write the answer as a pair (zeros, moves), e.g. (0, False)")
    zeros, moves = pair
    if total is not None and isinstance(zeros, str) and _HALF.fullmatch(zeros):
        zeros = total / 2  # "half", "about half of them"
    if isinstance(zeros, str):  # "4k", "4.0k": thousands
        thousands = re.fullmatch(r"\s*(?:about |~\s*)?(\d+(?:\.\d+)?)\s*k\s*", zeros, re.I)
        zeros = float(thousands.group(1)) * 1000 if thousands else zeros
    try:
        count = as_number(zeros)
        share = isinstance(zeros, str) and "%" in zeros
        if total is not None and (share or 0 < count < 1):  # "50%", 0.5: of the total
            count *= total
        count_ok = abs(count - (truth[0] if centre is None else centre)) <= tolerance
    except (TypeError, ValueError):
        count_ok = None  # unreadable, not wrong
    try:
        moves_ok = as_bool(moves) == truth[1]
    except ValueError:
        moves_ok = None  # unreadable, not wrong
    return count_ok, moves_ok


class ReadExercise(Exercise):
    """An :class:`Exercise` that first reads the answer with ``read`` (which raises
    ``ValueError`` on an answer it cannot read): an unreadable answer is told so, and not
    judged, instead of being called wrong."""

    def __init__(self, question: str, truth, *, read, **kwargs) -> None:
        self._read = read
        super().__init__(question, truth, **kwargs)

    def unreadable(self, prediction) -> str | None:
        """Why ``prediction`` cannot be read, or None when it can."""
        try:
            self._read(prediction)
        except ValueError as err:
            return str(err)
        return None

    def check(self, prediction=...) -> bool:
        why = None if prediction is Ellipsis else self.unreadable(prediction)
        if why:
            print(f"{TODO} Could not read {prediction!r}, so it was not judged: {why}")
            return False
        return super().check(prediction)


def read_pair(prediction, total: int | None = None) -> None:
    """Raise ``ValueError`` naming the half of a ``(zeros, moves)`` answer that cannot be
    read (or saying it is no pair)."""
    if not is_pair(prediction):
        raise ValueError("it is not a pair; write (zeros, moves), e.g. (0, False) or "
                         "\"0, no\"")
    count_ok, moves_ok = zeros_and_moves(prediction, (0, True), 10**9, 0, total)
    if count_ok is None:
        raise ValueError("the zero count is not a number; write it in digits, e.g. 4000")
    if moves_ok is None:
        raise ValueError("the running-mean half is not a yes/no; write True or False")


class PairExercise(ReadExercise):
    """An :class:`Exercise` whose ``(zeros, moves)`` answer says which half is wrong, or
    which half it could not read."""

    def __init__(self, question: str, truth, *, hint: str = "", tolerance: int = 400,
                 centre: float | None = None, total: int | None = None) -> None:
        self.tolerance, self.centre, self.total = tolerance, centre, total
        super().__init__(
            question, truth, hint=hint, read=lambda p: read_pair(p, total),
            compare=lambda p, t: all(x is True for x in zeros_and_moves(
                p, t, tolerance, centre, total)))

    def check(self, prediction=...) -> bool:
        ok = super().check(prediction)
        if not ok and prediction is not Ellipsis and self.unreadable(prediction) is None:
            count_ok, moves_ok = zeros_and_moves(prediction, self.measure(), self.tolerance,
                                                 self.centre, self.total)
            right = {True: "right", False: "not right"}
            print(f"  The zero count is {right[count_ok]}; the running-mean half is "
                  f"{right[moves_ok]}.")
        return ok


# --- pictures and tables ------------------------------------------------------------


def running_state_timeline(events: list[tuple[str, str, str]], width: float = 8.0,
                           pending_label: str = "pending\n(this thread)"):
    """A two-row strip: the folded value and the pending one(s) of a RunningState, per
    event; a green arrow where pending values were folded in.

    ``events``: (event, folded, pending) labels, as measured by the chapter.
    """
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(width, 1.9))
    for col, (event, folded, pending) in enumerate(events):
        ax.text(col, 2.05, event, ha="center", va="bottom", fontsize=8)
        for row, (text, colour) in enumerate(((pending, "#FFE0B2"), (folded, "#C8E6C9"))):
            face = colour if text != "-" else "#F5F5F5"
            ax.add_patch(plt.Rectangle((col - 0.42, row + 0.1), 0.84, 0.8, fc=face,
                                       ec="#616161", lw=0.8))
            ax.text(col, row + 0.5, text, ha="center", va="center", fontsize=8)
        if col and events[col - 1][2] != "-" and events[col][1] != events[col - 1][1]:
            ax.annotate("", xy=(col - 0.3, 1.5), xytext=(col - 0.7, 0.5),
                        arrowprops={"arrowstyle": "->", "color": "#2E7D32"})
    ax.text(-0.55, 1.5, "value()\nreads", ha="right", va="center", fontsize=8)
    ax.text(-0.55, 0.5, pending_label, ha="right", va="center", fontsize=8)
    ax.set_xlim(-1.5, len(events) - 0.5)
    ax.set_ylim(0, 2.5)
    ax.axis("off")
    fig.tight_layout()
    return fig


def running_state_demo() -> list[tuple[str, str, str]]:
    """A live minidl ``RunningState`` (one number, 0) fed by two threads, main and a worker
    "A": after each call, (call, folded value, pending values by thread). Shows burn's
    rules: ``update`` on a thread that has a value pending folds every thread's pending
    value (their average); ``value()`` folds nothing; ``value_sync()`` folds only when the
    calling thread has one pending; ``valid()`` (``fresh()``) folds everything."""
    from concurrent.futures import ThreadPoolExecutor

    from minidl.module import RunningState

    plain = Device.flex()
    state = RunningState(T([0.0], plain))
    names: dict[int, str] = {}

    def num(t: Tensor) -> str:
        return f"{float(t.to_numpy()[0]):g}"

    def seen(call: str, read: Tensor | None = None) -> tuple[str, str, str]:
        from minidl.module.running import current_thread_id

        names.setdefault(current_thread_id(), "main")
        pending = "\n".join(f"{names.get(k, 'A')}: {num(v)}"
                             for k, v in state._pending.items())
        call = f"{call}\n→ {num(read)}" if read is not None else call
        return call, num(state._value), pending or "-"

    with ThreadPoolExecutor(max_workers=1) as worker:  # one thread "A" for both calls
        def on_a(v: float) -> None:
            state.update(T([v], plain))

        events = [seen("start")]
        worker.submit(on_a, 2.0).result()
        events.append(seen("A: update(2)"))
        state.update(T([4.0], plain))
        events.append(seen("main: update(4)"))
        events.append(seen("main: value()", state.value()))
        worker.submit(on_a, 6.0).result()
        events.append(seen("A: update(6)"))
        events.append(seen("main:\nvalue_sync()", state.value_sync()))
        fresh = state.fresh()
        events.append(("valid()", num(fresh.value()), "-"))
    return events


def clone_picture():
    """PyTorch's deepcopy: two statistics; minidl's (burn's) clone(): one shared box."""
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(7.4, 1.8))
    for ax, title, shared in ((axes[0], "PyTorch: copy.deepcopy(bn)", False),
                              (axes[1], "burn, minidl: bn.clone()", True)):
        for x, name in ((0.2, "bn"), (0.8, "the copy")):
            ax.text(x, 0.85, name, ha="center", va="center", fontsize=8,
                    bbox={"boxstyle": "round", "fc": "#E3F2FD", "ec": "#1565C0"})
        targets = (0.5, 0.5) if shared else (0.2, 0.8)
        labels = ["one RunningState\n(Arc<Mutex<…>>)"] if shared else [
            "running_mean", "running_mean\n(a copy)"]
        for x, label in zip(sorted(set(targets)), labels, strict=True):
            ax.text(x, 0.2, label, ha="center", va="center", fontsize=8,
                    bbox={"boxstyle": "square", "fc": "#FFF3E0", "ec": "#E65100"})
        for x0, x1 in zip((0.2, 0.8), targets, strict=True):
            ax.annotate("", xy=(x1, 0.36), xytext=(x0, 0.72),
                        arrowprops={"arrowstyle": "->", "color": "#424242"})
        ax.set_title(title, fontsize=9)
        ax.set_xlim(0, 1)
        ax.set_ylim(0, 1)
        ax.axis("off")
    fig.tight_layout()
    return fig




def column_stats_picture(x: np.ndarray):
    """A [batch × C] grid with each column's mean and biased variance under it: BatchNorm's
    statistics are per column (per channel), over the batch's rows."""
    import matplotlib.pyplot as plt

    n, c = x.shape
    colours = ["#E3F2FD", "#FFF3E0", "#E8F5E9", "#F3E5F5"]
    fig, ax = plt.subplots(figsize=(4.2, 0.42 * (n + 3)))
    for j in range(c):
        for i in range(n):
            ax.add_patch(plt.Rectangle((j, n + 1 - i), 0.94, 0.9, fc=colours[j % 4],
                                       ec="#757575", lw=0.6))
            ax.text(j + 0.47, n + 1.45 - i, f"{x[i, j]:.2f}", ha="center", va="center",
                    fontsize=7)
        ax.text(j + 0.47, n + 2.25, f"channel {j}", ha="center", fontsize=7)
        for row, (value, name) in enumerate(((x[:, j].mean(), "mean"),
                                             (x[:, j].var(), "var (÷ n)"))):
            ax.text(j + 0.47, 0.9 - row * 0.8, f"{value:.3f}", ha="center", va="center",
                    fontsize=7, weight="bold")
            if j == 0:
                ax.text(-0.1, 0.9 - row * 0.8, name, ha="right", va="center", fontsize=7)
    ax.text(-0.1, n / 2 + 1.5, f"batch\n({n} rows)", ha="right", va="center", fontsize=7)
    ax.plot([0, c - 0.06], [1.45, 1.45], color="#424242", lw=0.8)
    ax.set_xlim(-1.3, c)
    ax.set_ylim(-0.2, n + 2.6)
    ax.axis("off")
    fig.tight_layout()
    return fig


def statistics_used(output: np.ndarray, x: np.ndarray, epsilon: float = 1e-5,
                    momentum: float = 0.1, ddof: int = 0) -> tuple[str, str]:
    """Which running mean and variance an inference of ``x`` normalised its first row with,
    after one training forward of ``x`` on a fresh layer (gamma 1, beta 0): each
    ``"initial"`` or ``"folded"`` (one update; the variance folded divides by n - ddof:
    burn's BatchNorm folds the biased one, ``ddof=0``, PyTorch's the unbiased one)."""
    means = {"initial": np.zeros(x.shape[1]), "folded": momentum * x.mean(0)}
    variances = {"initial": np.ones(x.shape[1]),
                 "folded": 1 - momentum + momentum * x.var(0, ddof=ddof)}
    [found] = [(m, v) for m, mean in means.items() for v, var in variances.items()
               if np.allclose(output[0], (x[0] - mean) / np.sqrt(var + epsilon), rtol=1e-5)]
    return found

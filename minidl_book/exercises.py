"""Think-about-it exercises: predict first, then check against a live run.

The burn book ends its sections with questions the reader answers before reading on ("a
``Linear(256, 64)`` on a fresh device: what is the largest weight it can draw?"). In this
book such a question is executable. An :class:`Exercise` holds the question, a *callable*
that runs the experiment (never a stored answer: if the library changes, the answer
changes with it), a way to compare, and a hint. The reader writes a prediction in a cell;
:meth:`Exercise.check` runs the experiment live and says right or wrong, with the hint
when wrong, never the answer. The solution stays hidden in the built book until opened.

The pattern a chapter copies (MyST Markdown notebook; ``glue`` puts live numbers into the
solution's prose)::

    ```{exercise} Kaiming bound of Linear(256, 64)
    :label: ex-mod-kaiming

    `Linear(256, 64)` draws its weight from U(-a, a). What is a?
    ```

    ```{code-cell} ipython3
    :tags: [hide-input]

    ex_kaiming = Exercise(
        "Kaiming bound a of Linear(256, 64)",
        truth=lambda: kaiming_bound(fan_in=256, gain=1 / np.sqrt(3)),  # the experiment
        compare="close", rtol=1e-3,
        hint="The default gain is 1/sqrt(3); the bound is sqrt(3)*gain/sqrt(fan_in).",
    )
    ex_kaiming.glue("mod_kaiming_a")  # the live answer, for the solution below
    ```

    ```{code-cell} ipython3
    prediction = ...  # ← replace ... with your prediction, then run the cell
    ex_kaiming.check(prediction);  # the ; keeps the returned True/False off the page
    ```

    ```{solution} ex-mod-kaiming
    :class: dropdown

    a = {glue:text}`mod_kaiming_a:.4f`, that is 1/sqrt(256) ...
    ```

``{solution}`` with ``:class: dropdown`` (sphinx-exercise + sphinx-togglebutton) renders
hidden until the reader clicks it. ``hide-input`` folds the cell that defines the exercise,
so its experiment does not give the answer away at a glance. When the solution is code rather than prose, put
``ex.solution()`` in a cell tagged ``hide-output``: the site shows the call and hides what
it prints until opened. A prediction of ``...`` (the placeholder a chapter ships with) only
prints "write your prediction first", so the book builds and the tests pass without one.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from fractions import Fraction
from typing import Any

import numpy as np

from minidl_book.verdict import RIGHT, TODO, WRONG

__all__ = ["NOT_PLAIN", "Exercise", "NotPlain", "plain_answer", "word"]


Compare = Callable[[Any, Any], bool]

#: What check() says to an answer it will not compare (an object of the reader's own kind).
NOT_PLAIN = "write a number, a word, True/False or a tuple of them"


class NotPlain(TypeError):
    """The prediction is not a plain answer (see :func:`plain_answer`)."""


def _torch_types() -> tuple[type, type] | None:
    import sys

    torch = sys.modules.get("torch")
    return None if torch is None else (torch.Tensor, torch.Size)


def plain_answer(x: Any, depth: int = 0) -> Any:
    """The prediction as a plain value, or :class:`NotPlain`.

    Plain: ``bool``, ``int``, ``float``, ``str``, ``None`` (exactly those types, never a
    subclass that could redefine ``==``), a ``Fraction`` (→ its int or float), tuples/lists (→ tuple), sets (→ frozenset) and
    dicts (→ a new dict) of those, a numeric NumPy array (→ a copy), a NumPy scalar (→ its Python value), a torch
    ``Size`` (→ tuple) or tensor, a minidl ``Tensor`` (→ a NumPy copy), a NumPy or torch dtype
    or NumPy scalar type (→ its name: ``np.float32`` → ``"float32"``). Nothing of the
    reader's own kind reaches a comparison, so no ``__eq__`` or ``__array__`` of theirs runs.
    """
    if depth > 20:
        raise NotPlain("nested too deep")
    kind = type(x)
    if x is None or kind in (bool, int, float, str):
        return x
    if kind is Fraction:  # Fraction(4, 3): the number "4/3" written as a string is read as
        return int(x) if x.denominator == 1 else float(x)
    if isinstance(x, np.generic) and kind.__module__ == "numpy":
        value = x.item()
        if value is None or type(value) in (bool, int, float, complex):
            return value
        raise NotPlain(f"a NumPy {kind.__name__}")
    if kind in (tuple, list):
        return tuple(plain_answer(v, depth + 1) for v in x)
    if kind in (set, frozenset):
        return frozenset(plain_answer(v, depth + 1) for v in x)
    if kind is dict:  # {"loss": "float64", "weight": "float32"}: for a comparison that reads it
        return {plain_answer(k, depth + 1): plain_answer(v, depth + 1) for k, v in x.items()}
    if kind is np.ndarray:
        if x.dtype.kind not in "biuf":
            raise NotPlain(f"an array of {x.dtype}")
        return np.array(x, copy=True)
    torch_types = _torch_types()
    if torch_types is not None and kind is torch_types[1]:
        return tuple(int(v) for v in tuple.__iter__(x))
    if torch_types is not None and kind is torch_types[0]:
        return plain_answer(x.detach().cpu().numpy(), depth + 1)
    from minidl import Tensor

    if kind is Tensor:
        return plain_answer(Tensor.to_numpy(x), depth + 1)
    if isinstance(x, np.dtype):  # a dtype answers "which dtype?" by its name
        return x.name
    if isinstance(x, type) and issubclass(x, np.generic) and x.__module__ == "numpy":
        try:  # np.float32 → "float32" (an abstract np.floating has no dtype)
            return np.dtype(x).name
        except TypeError:
            pass
    if kind.__name__ == "dtype" and kind.__module__ == "torch":
        return str(x).removeprefix("torch.")  # torch.float32 → "float32"
    raise NotPlain(f"a {kind.__name__}")


def _truth_plain(x: Any) -> Any:
    """The experiment's answer made plain where it can be (it is ours: anything else stays)."""
    try:
        return plain_answer(x)
    except NotPlain:
        return x


_PUNCT = " \t\n.,;:!?'\"`()[]{}"


def word(text: str) -> str:
    """A word answer as it compares: case-folded, spaces collapsed, ``_``/``-`` as spaces,
    outer punctuation and brackets and a leading article dropped (``"(B)"`` → ``"b"``,
    ``"The  Same"`` → ``"same"``)."""
    w = " ".join(text.replace("_", " ").replace("-", " ").casefold().split()).strip(_PUNCT)
    for article in ("the ", "a ", "an "):
        if w.startswith(article) and len(w) > len(article):
            w = w[len(article):]
    return w.strip(_PUNCT)


def _is_number(x: Any) -> bool:
    return type(x) in (int, float)


_NUMBER_TEXT = re.compile(
    r"^[+-]?(\d{1,3}([, _\u00a0\u2009\u202f]\d{3})+|\d[\d_]*)?(\.\d+)?([eE][+-]?\d+)?(/\d+)?$"
)
_UNIT = re.compile(r"^(.*?\d)\s*([^\W\d_]+\.?|%|×|µs)$")  # "24576 bytes", "3 ops", "1.5x"
_NUMBER_WORDS = {
    w: i
    for i, w in enumerate(
        "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen"
        " fifteen sixteen seventeen eighteen nineteen twenty".split()
    )
} | {"once": 1, "twice": 2, "thrice": 3}  # "how many times?": "never" is 0, "once" 1


def _parts_of(text: str) -> tuple[str, ...]:
    """``"(2, 3, 4)"``, ``"[6, 16]"``, ``"6x16"``, ``"6 × 16"``, ``"2050 and 2048"`` → the
    parts of a flat tuple written as one string."""
    inner = text.strip().strip("()[]{} ")
    parts = re.split(r"\s*[,;]\s*(?:and\s+)?|\s+and\s+|(?<=\d)\s*[x×]\s*(?=\d)", inner)
    return tuple(part.strip() for part in parts if part.strip())


#: Words that turn an answer around: "not memory" names memory and means the other.
_NEGATIONS = ("not", "no", "never", "neither", "nor", "without", "instead of", "rather than")


def _options_in(question: str) -> tuple[str, ...]:
    """The answers a question offers in quotes (``is it `"slower"`, `"level"` or
    `"faster"`?`` → ``("slower", "level", "faster")``), as words; two or more, else none."""
    found = re.findall(r'[`"\u201c]+([^`"\u201d\n]{1,40}?)[`"\u201d]+', question)
    words = tuple(dict.fromkeys(word(f) for f in found if re.search(r"[a-zA-Z]", f)))
    return words if len(words) >= 2 else ()


#: Words that answer "how many?" with zero.
_NONE_WORDS = frozenset(("never", "none", "no", "nothing", "not once", "no times"))


#: A number, then its explanation after a colon, a dash or a parenthesis.
_EXPLAINED = re.compile(r"^([^:(\u2014\u2013]*?\S)\s*(?::|\s[-\u2014\u2013]\s?|\u2014|\()\s*(.+)$", re.S)


def _number_of(text: str) -> int | float | None:
    """``"10"``, ``" 24,576 "``, ``"24 576"``, ``"24576 bytes"``, ``"1.33"``, ``"4/3"``,
    ``"three"``, ``"zero times"``, ``"never"``, ``"2: the first and the third"`` → the number they write (a number typed as a string is the same answer; a unit
    after it is the reader's, not a different number); anything else → None."""
    t = text.strip()
    explained = _EXPLAINED.match(t)  # "2: the first and the third", "6 (relu is two)"
    if (explained and re.search(r"[^\W\d_]", explained.group(2))
            and not re.search(r"\b(or|not|no|nor)\b", explained.group(2), re.I)):
        return _number_of(explained.group(1))
    w = word(t)
    if w.endswith(" of them") and w != "all of them":  # "none of them", "9 of them"
        return _number_of(w.removesuffix(" of them"))
    if w in _NONE_WORDS:
        return 0
    first, _, rest = w.partition(" ")
    if first == "all" and rest:  # "all 9", "all nine": the count, said as everything
        return _number_of(rest.removeprefix("of them").strip(" :,") or "")
    if first in _NUMBER_WORDS and (not rest or rest.isalpha()):  # "three", "zero times"
        return _NUMBER_WORDS[first]
    unit = _UNIT.match(t)
    if unit:
        t = unit.group(1).strip()
    if not t or not _NUMBER_TEXT.match(t) or not any(c.isdigit() for c in t):
        return None
    t = re.sub(r"[, _\u00a0\u2009\u202f]", "", t)
    try:
        if "/" in t:
            num, den = t.split("/")
            return float(num) / float(den)
        return int(t) if re.fullmatch(r"[+-]?\d+", t) else float(t)
    except (ValueError, ZeroDivisionError):
        return None


#: Words that carry no answer: "the same number of" says what "same" says.
_FILLER = frozenset("the a an about roughly approximately exactly just number of it is its".split())


def _gist(text: str) -> str:
    """A word answer without its filler words (``"about the same"`` → ``"same"``); the answer
    itself when it is nothing but filler."""
    words = word(text).split()
    kept = [w for w in words if w not in _FILLER]
    return " ".join(kept or words)


def _words_of(text: str) -> tuple[str, ...]:
    """``"b, c"`` / ``"b and c"`` / ``"b c"`` → ``("b", "c")``: a set answer written as one
    string. Commas, semicolons or "and" separate names of several words
    (``"running mean, running var"``); only a string with none of them splits at spaces."""
    parts = [p for p in re.split(r",|;|\band\b", text) if word(p)]
    if len(parts) <= 1:
        parts = re.split(r"\s+", text)
    return tuple(p for p in (word(p) for p in parts) if p)


def _bool_said(text: str) -> bool | None:
    """``"True"``, ``"no"``, ``"False: b.bias drew first"``, ``"false (it drew first)"``,
    ``"False, because..."`` → the boolean said first (an explanation after a colon, a
    comma, a dash or a parenthesis is the reader's, unless it names the other answer);
    anything else → None."""
    said = {"true": True, "yes": True, "false": False, "no": False}
    w = word(text)
    if w in said:
        return said[w]
    head = re.match(r"^\s*([A-Za-z]+)\s*(?::|,|\(|\s[-\u2014\u2013]\s|\u2014)\s*(.+)$",
                    text, re.S)
    if head is None or word(head.group(1)) not in said:
        return None
    answer = said[word(head.group(1))]
    others = ("false", "no") if answer else ("true", "yes")
    rest = f" {word(re.sub(r'[^A-Za-z]+', ' ', head.group(2)))} "
    return None if any(f" {o} " in rest for o in others) else answer


class _Compare:
    """The comparison ``check`` runs: the truth's type decides, the prediction is plain."""

    def __init__(self, mode: str, rtol: float, atol: float, synonyms: Mapping[str, Any],
                 options: tuple[str, ...] = ()):
        self.mode, self.rtol, self.atol = mode, rtol, atol
        self.options = options
        self.synonyms = {word(k): {word(v) for v in vs} | {word(k)} for k, vs in synonyms.items()}

    @property
    def tolerance(self) -> str:
        return f"within rtol {self.rtol:g}, atol {self.atol:g}" if self.mode == "close" else ""

    def words_equal(self, p: str, t: str) -> bool:
        alts = self.synonyms.get(word(t), {word(t)})
        return word(p) in alts or _gist(p) in {_gist(a) for a in alts} or self.names_one(p, t)

    def names_one(self, p: str, t: str) -> bool:
        """The question offered its answers as quoted words and the prediction names the
        truth's and no other (``"bound by memory"`` for ``"memory"`` of ``"memory"`` or
        ``"compute"``), without a negation."""
        if word(t) not in self.options:
            return False
        # punctuation that ends or opens a word is no part of it: "same: 48 B each"
        said = " ".join(w.strip(".,;:!?\"'`()") for w in word(p).split())
        said = f" {said} "
        if any(f" {n} " in said for n in _NEGATIONS) or "n't" in said:
            return False
        named = {o for o in self.options if f" {o} " in said}
        return named == {word(t)}

    def numbers_equal(self, p: Any, t: Any) -> bool:
        if self.mode == "close":
            return bool(np.isclose(float(p), float(t), rtol=self.rtol, atol=self.atol))
        if type(t) is int and type(p) is int:
            return p == t
        return bool(np.isclose(float(p), float(t), rtol=1e-9, atol=0.0))

    def as_set(self, p: Any, t: Any) -> bool:
        if isinstance(p, str):
            p = _words_of(p)
            letters = all(isinstance(v, str) and len(word(v)) == 1 for v in t)
            if letters and len(p) == 1 and len(p[0]) > 1 and p[0].isalpha():
                p = tuple(p[0])  # "ab" for the letters (a) and (b)
        elif not isinstance(p, tuple | frozenset):
            p = (p,)
        want = {self.key(v) for v in t}
        got = {self.key(v) for v in p}
        return want == got

    def key(self, v: Any) -> Any:
        if isinstance(v, str):
            w = word(v)
            for canonical, alts in self.synonyms.items():
                if w in alts:
                    return ("w", canonical)
            return ("w", w)
        if type(v) is bool:
            return ("b", v)
        if _is_number(v):
            return ("n", round(float(v), 9))
        return ("o", v)

    def __call__(self, p: Any, t: Any) -> bool:
        t = _truth_plain(t)
        if self.mode == "set" or isinstance(t, frozenset):
            if isinstance(t, tuple | frozenset):
                return self.as_set(p, t)
        if t is None:
            return p is None
        if type(t) is bool:
            if isinstance(p, str):
                return _bool_said(p) == t
            return type(p) in (bool, int) and p in (0, 1) and bool(p) == t  # 1 for True
        if _is_number(t) or type(t) is complex:
            if p is None and type(t) is int and t == 0:  # a count: None says what "none" does
                return True
            if isinstance(p, str):
                p = _number_of(p)
            return _is_number(p) and self.numbers_equal(p, t)
        if isinstance(t, str):
            return isinstance(p, str) and self.words_equal(p, t)
        if isinstance(t, tuple):
            if isinstance(p, np.ndarray):
                p = plain_answer(p.tolist())  # nested rows as tuples too
            if isinstance(p, str) and all(not isinstance(v, tuple) for v in t):
                p = _parts_of(p)
            return isinstance(p, tuple) and len(p) == len(t) and all(
                self(pv, tv) for pv, tv in zip(p, t))
        if isinstance(t, np.ndarray):
            if isinstance(p, tuple):
                p = np.asarray(p)  # plain numbers only: no object of the reader's runs here
            if not isinstance(p, np.ndarray) or p.dtype.kind not in "biuf" or p.shape != t.shape:
                return False
            if self.mode == "close" or t.dtype.kind == "f":
                rtol = self.rtol if self.mode == "close" else 1e-9
                atol = self.atol if self.mode == "close" else 0.0
                return bool(np.allclose(p.astype(np.float64), t.astype(np.float64), rtol=rtol, atol=atol))
            return bool(np.array_equal(p, t))
        return bool(t == p)  # the truth's own kind decides (p is plain: none of the reader's code)


def exact(prediction: Any, truth: Any) -> bool:
    """Equal, the truth's type deciding: words case- and space-insensitive, lists and tuples
    alike, floats to 1e-9."""
    return _Compare("exact", 0.0, 0.0, {})(plain_answer(prediction), truth)


def close(rtol: float = 1e-2, atol: float = 0.0) -> Compare:
    """A comparison of numbers (or arrays of one shape) within ``rtol``/``atol``."""
    cmp = _Compare("close", rtol, atol, {})

    def compare(prediction: Any, truth: Any) -> bool:
        return cmp(plain_answer(prediction), truth)

    compare.__name__ = f"close(rtol={rtol:g}, atol={atol:g})"
    return compare


class Exercise:
    """A think-about-it question whose answer is measured live when the reader checks.

    Args:
        question: the question, shown when the exercise is displayed.
        truth: a callable with no arguments that runs the experiment and returns the
            answer. It runs at every :meth:`check`, so the answer cannot go stale.
        compare: ``"exact"`` (default), ``"close"`` (numbers or arrays within
            ``rtol``/``atol``), ``"set"`` (a collection whose order does not matter; a
            question with "which of" and a collection for an answer compares so by itself)
            or a callable ``(prediction, truth) -> bool`` (it gets the prediction made
            plain: tuples for lists, Python numbers, NumPy copies of arrays).
        rtol, atol: tolerances for ``compare="close"``.
        hint: printed when the prediction is wrong. It must not give the answer away.
        explanation: printed by :meth:`solution` after the measured answer.
        synonyms: other words that count as a word answer (``{"same": ["equal"]}``); words
            already compare case- and space-insensitively, without a leading article.
    """

    def __init__(
        self,
        question: str,
        truth: Callable[[], Any],
        *,
        compare: str | Compare = "exact",
        rtol: float = 1e-2,
        atol: float = 0.0,
        hint: str = "",
        explanation: str = "",
        synonyms: Mapping[str, Sequence[str]] | None = None,
    ) -> None:
        if not callable(truth):
            raise TypeError(
                "Exercise truth must be a callable that runs the experiment "
                f"(e.g. lambda: ...), got {type(truth).__name__}"
            )
        synonyms = dict(synonyms or {})
        self._custom: Compare | None = None
        if compare in ("exact", "close", "set"):
            mode = compare
        elif callable(compare):
            mode, self._custom = "exact", compare
        else:
            raise ValueError(f"compare must be 'exact', 'close', 'set' or a callable, got {compare!r}")
        # "Which of ...?" with a collection for an answer: order does not matter
        self._which = compare == "exact" and "which of" in question.casefold()
        self._cmp = _Compare(mode, rtol, atol, synonyms, options=_options_in(question))
        self.compare = compare
        self.question = question
        self.truth = truth
        self.hint = hint
        self.explanation = explanation

    def measure(self) -> Any:
        """Run the experiment now and return its answer."""
        return self.truth()

    def _judge(self, prediction: Any, truth: Any) -> tuple[bool, str]:
        """``(right, why not)``: the prediction made plain, then the comparison (the truth's
        type decides); an answer that is not plain or a comparison that raises is wrong, with
        the reason."""
        try:
            p = plain_answer(prediction)
        except NotPlain as err:
            return False, f"{err} is not an answer the checker compares: {NOT_PLAIN}."
        try:
            if self._custom is not None:
                result = self._custom(p, truth)
                if type(result) not in (bool, np.bool_):
                    return False, f"the comparison gave {type(result).__name__}, not True/False"
                return bool(result), ""
            cmp = self._cmp
            t = _truth_plain(truth)
            if self._which and isinstance(t, tuple | frozenset):
                return cmp.as_set(p, t), ""
            return cmp(p, truth), ""
        except Exception as err:  # noqa: BLE001 - any failure to compare is a verdict, not a crash
            return False, f"the answer could not be compared ({type(err).__name__}: {err}): {NOT_PLAIN}."

    def accepts(self, prediction: Any, truth: Any = Ellipsis) -> bool:
        """Whether :meth:`check` would accept ``prediction`` against ``truth`` (a live run when
        omitted), printing nothing: a chapter's hidden cell asserts with it that a right answer
        written another way passes and a plausible wrong one does not."""
        return self._judge(prediction, self.measure() if truth is Ellipsis else truth)[0]

    def check(self, prediction: Any = ...) -> bool:
        """Compare ``prediction`` with a live run; print ✓ or ✗ (+ hint); return whether right.

        ``...`` (Ellipsis) means "no prediction yet": it prints a reminder and returns
        ``False`` without running anything, so a chapter builds with the placeholder.
        Only plain answers are compared (numbers, words, True/False, None, tuples, lists and
        sets of them, numeric arrays); words compare case- and space-insensitively, a
        "which of" question (or ``compare="set"``) as a set, numbers within the tolerance.
        """
        if prediction is Ellipsis:
            print(
                f"{TODO} Write your prediction first: replace ... with it and run the cell again."
            )
            return False
        ok, why = self._judge(prediction, self.measure())
        shown = _shown(prediction)
        tolerance = f" ({self._cmp.tolerance})" if self._cmp.tolerance and self._custom is None else ""
        if ok:
            print(f"{RIGHT} Right: {shown} matches what the experiment measured{tolerance}.")
        else:
            print(f"{WRONG} Not quite: {shown} is not what the experiment gives{tolerance}.")
            if why:
                print(f"  Why: {why}")
            if self.hint:
                print(f"  Hint: {self.hint}")
        return ok

    def assert_solution(self, stated: Any) -> None:
        """Fail the build when a solution's stated answer is not what the experiment gives.

        A chapter writes the answer its ``{solution}`` states (``ex.assert_solution(4)``) in a
        ``remove-input`` cell after the solution, so a solution that says 4 while the run
        gives 5 stops the build. The comparison is the one :meth:`check` uses.
        """
        truth = self.measure()
        ok, why = self._judge(stated, truth)
        if not ok:
            raise AssertionError(
                f"{self.question!r}: the solution states {stated!r}, the experiment gives {truth!r}"
                + (f" ({why})" if why else "")
            )

    def solution(self) -> Any:
        """Run the experiment, print its answer and the explanation, return the answer."""
        truth = self.measure()
        print(f"Measured just now: {truth!r}")
        if self.explanation:
            print(self.explanation)
        return truth

    def glue(self, name: str) -> None:
        """Run the experiment and ``glue`` the answer under ``name`` for the chapter's prose.

        Use ``{glue:text}`name:.4f``` in a ``{solution}`` block. Nothing is displayed and
        nothing is returned, so the answer does not show up next to the question.
        """
        from myst_nb import glue  # only chapters need myst-nb

        glue(name, self.measure(), display=False)

    def _repr_markdown_(self) -> str:
        return f"**Think about it.** {self.question}"

    def __repr__(self) -> str:
        return f"Exercise({self.question!r})"


def _shown(prediction: Any) -> str:
    """The prediction for the message: its repr when plain, else only its type (a reader's
    object's ``__repr__`` does not run either)."""
    try:
        plain_answer(prediction)
    except NotPlain:
        return f"a {type(prediction).__name__} object"
    text = repr(prediction)
    return text if len(text) <= 200 else text[:197] + "..."

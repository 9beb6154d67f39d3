"""The store chapter's models and helpers: a small CNN with one of each layer a PyTorch import
has to handle (Conv2d, BatchNorm with running statistics, LayerNorm, Linear), its PyTorch twin
under the same field names, and the few helpers the chapter's hidden checks use."""

from __future__ import annotations

import io
import pickletools
import re
import tempfile
import textwrap
import zipfile

import numpy as np
import torch

from minidl import Device, Tensor
from minidl.module import Module, config
from minidl.nn import (
    BatchNormConfig,
    Conv2dConfig,
    LayerNormConfig,
    LinearConfig,
    LinearLayout,
    PaddingConfig2d,
)
from minidl.tensor.functional import relu


@config
class NetConfig:
    """Conv2d(3→channels, 3×3, pad 1) → BatchNorm → ReLU → flatten → LayerNorm → Linear."""

    channels: int = 6
    classes: int = 5

    def init(self, device: Device) -> Net:
        return Net(device, self.channels, self.classes)


class Net(Module):
    """The model; input ``[batch, 3, 4, 4]``."""

    def __init__(self, device: Device, channels: int = 6, classes: int = 5):
        padding = PaddingConfig2d.Explicit(1, 1, 1, 1)
        self.conv = Conv2dConfig((3, channels), (3, 3)).with_padding(padding).init(device)
        self.bn = BatchNormConfig(channels).init(device)
        self.ln = LayerNormConfig(channels * 16).init(device)
        self.fc = LinearConfig(channels * 16, classes).init(device)

    def forward(self, x: Tensor) -> Tensor:
        x = relu(self.bn(self.conv(x))).flatten(1)
        return self.fc(self.ln(x))


class TorchNet(torch.nn.Module):
    """The PyTorch twin: the same layers under the same names."""

    def __init__(self, channels: int = 6, classes: int = 5):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, channels, 3, padding=1)
        self.bn = torch.nn.BatchNorm2d(channels)
        self.ln = torch.nn.LayerNorm(channels * 16)
        self.fc = torch.nn.Linear(channels * 16, classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = torch.relu(self.bn(self.conv(x))).flatten(1)
        return self.fc(self.ln(x))


class FcNet(Module):
    """One ``Linear(d_in, d_out)`` called ``fc`` in the given layout (the LinearLayout.Col
    pitfall: square by default, the case no shape check can catch)."""

    def __init__(self, device: Device, layout: LinearLayout = LinearLayout.Row,
                 d_in: int = 3, d_out: int = 3):
        self.fc = LinearConfig(d_in, d_out).with_layout(layout).init(device)

    def forward(self, x: Tensor) -> Tensor:
        return self.fc(x)


def batches(n: int = 3) -> list[np.ndarray]:
    """``n`` fixed input batches ``[4, 3, 4, 4]``."""
    return [np.random.default_rng(k).standard_normal((4, 3, 4, 4)).astype(np.float32)
            for k in range(n)]


def T(array, device: Device) -> Tensor:
    """A float32 minidl tensor holding ``array`` on ``device``."""
    return Tensor.from_numpy(np.ascontiguousarray(array, dtype=np.float32), device)


def trained_twin(inputs: list[np.ndarray]) -> TorchNet:
    """A TorchNet with non-default norm parameters and BatchNorm running statistics from a few
    training-mode forwards, so that a wrong mapping cannot hide behind ones and zeros."""
    torch.manual_seed(0)
    net = TorchNet()
    with torch.no_grad():
        for norm in (net.bn, net.ln):
            norm.weight.uniform_(0.5, 1.5)
            norm.bias.normal_()
        net.train()
        for batch in inputs:
            net(torch.from_numpy(batch))
    return net.eval()


def fingerprint(module: Module) -> dict:
    """Per tensor: ``"lazy"`` or the bytes of its value (reads nothing lazy)."""
    out = {}
    for path, p in module.parameters().items():
        out[path] = p.val().to_numpy().tobytes() if p.is_initialized() else "lazy"
    for path, s in module.running_states().items():
        out[path] = s.value().to_numpy().tobytes()
    return out


def state_arrays(module: Module) -> dict[str, np.ndarray]:
    """Every param and running state by path, as NumPy arrays."""
    out = {path: p.val().to_numpy() for path, p in module.parameters().items()}
    out.update({path: s.value_sync().to_numpy() for path, s in module.running_states().items()})
    return out


def bit_exact(a: Module, b: Module) -> bool:
    """Same paths, dtypes and bytes for every param and running state."""
    sa, sb = state_arrays(a), state_arrays(b)
    return sa.keys() == sb.keys() and all(
        sa[k].dtype == sb[k].dtype and sa[k].tobytes() == sb[k].tobytes() for k in sa)


def sequential_twin(torch_net: TorchNet) -> tuple[torch.nn.Sequential, dict[str, int]]:
    """The same network as an ``nn.Sequential`` holding ``torch_net``'s values, and the
    position of each named layer in it (parameter-less layers count too)."""
    nn = torch.nn
    seq = nn.Sequential(nn.Conv2d(3, 6, 3, padding=1), nn.BatchNorm2d(6), nn.ReLU(),
                        nn.Flatten(), nn.LayerNorm(96), nn.Linear(96, 5))
    positions = {"conv": 0, "bn": 1, "ln": 4, "fc": 5}
    renamed = {}
    for key, value in torch_net.state_dict().items():
        layer, rest = key.split(".", 1)
        renamed[f"{positions[layer]}.{rest}"] = value
    seq.load_state_dict(renamed)
    return seq, positions


def count(prediction, truth) -> bool:
    """A count, read as the book's default checker reads numbers: ``10``, ``"10"``, ``10.0``,
    ``"ten"``, ``"10 tensors"`` alike."""
    from minidl_book.exercises import _number_of

    if isinstance(prediction, str):
        prediction = _number_of(prediction)
    return type(prediction) in (int, float) and prediction == truth


_FILLERS = frozenset("the its their a".split())


def _sum_of(text: str) -> int | float | None:
    """A written-out sum's total: ``"8 params + 2 buffers"``, ``"2+4+2+2"``, ``"8 params,
    2 buffers"``, ``"the two weights and two biases"``; None when ``text`` is no sum."""
    from minidl_book.exercises import _number_of

    if re.fullmatch(r"\s*\d{1,3}(,\d{3})+\s*", text):  # "24,576" is one number
        return None
    parts = re.split(r"\+|,|\band\b", text.casefold())
    if len(parts) < 2:
        return None
    total = 0
    for part in parts:
        words = [w for w in re.findall(r"[\w.]+", part) if w not in _FILLERS]
        n = _number_of(words[0]) if words else None
        if n is None:
            return None
        total += n
    return total


def _stated_total(text: str) -> int | float | None:
    """The total a written count states: a number (:func:`_number_of`), a sum, ``"8 + 2 =
    10"`` (the total after ``=`` decides), or a number or label with its breakdown,
    ``"10 (8 params + 2 buffers)"``, ``"4 layers: 2+4+2+2"`` (the breakdown's sum decides;
    a bare number before it must agree with it)."""
    from minidl_book.exercises import _number_of

    t = text.strip().rstrip(".")
    head, eq, tail = t.rpartition("=")
    if eq and _number_of(tail) is not None:
        return _number_of(tail)
    said = _number_then_why(t)
    if said is not None:
        return said or None
    split = re.match(r"^([^:(\u2014]*?)\s*(?::|\(|\u2014)\s*(.+?)\)?$", t)
    if split:
        broken = _sum_of(split.group(2))
        if broken is not None:
            label = split.group(1)
            bare = _number_of(label) if not re.search(r"[a-z]", label.casefold()) else None
            return broken if bare in (None, broken) else None
        aside = _aside_total(split.group(1), split.group(2))
        if aside is False:
            return None
        return aside if aside is not None else _number_of(t)
    total = _sum_of(t)
    return total if total is not None else _number_of(t)


_HEDGE = re.compile(r"\b(or|maybe|perhaps|possibly|probably|unless)\b", re.I)


def _number_then_why(t: str):
    """``"10, since num_batches_tracked is not saved"``, ``"4, one per random param"`` → the
    number: a bare count, a comma, then prose that explains it. False: the prose hedges
    (``"10, or 11"``, ``"10, 11 with the counter"``) or its breakdown disagrees; None: the
    text is not of that form (``"8 params, 2 buffers"``, ``"2, 4, 2, 2"`` stay sums)."""
    from minidl_book.exercises import _number_of

    head, comma, why = t.partition(",")
    n = _number_of(head) if re.fullmatch(r"\s*(\d+(\.\d+)?|[a-z]+)\s*", head, re.I) else None
    if not comma or n is None or not re.search(r"[a-z]{3}", why.casefold()):
        return None
    if _HEDGE.search(why):
        return False
    broken = _sum_of(why)
    if broken is not None:
        return n if broken == n else False
    aside = _aside_total(head, why)
    return n if aside is None else aside


_NEGATED_NUMBER = re.compile(
    r"[\s,;:\u2014\u2013-]*\(?\s*\b(?:not|rather than|instead of)\s+([\w.]+)\s*\)?")


def _drop_negated(text: str) -> str:
    """``"10 — not 11"`` → ``"10"``: a number the answer rules out is no part of it."""
    from minidl_book.exercises import _number_of

    return _NEGATED_NUMBER.sub(
        lambda m: "" if _number_of(m.group(1)) is not None else m.group(0), text)


def _numbers_in(text: str) -> list[float]:
    from minidl_book.exercises import _NUMBER_WORDS

    found = [float(n) for n in re.findall(r"\d+(?:\.\d+)?", text)]
    return found + [_NUMBER_WORDS[w] for w in re.findall(r"[a-z]+", text.casefold())
                    if w in _NUMBER_WORDS]


def _aside_total(label: str, aside: str):
    """``"once per param: 4"`` → 4; ``"10 (with num_batches_tracked 11)"`` → False: an aside
    naming a second count at least as large is a hedge, not a breakdown; None: no number."""
    lab, asd = _numbers_in(label), _numbers_in(aside)
    if not asd:
        return None
    if not lab or (re.search(r"[a-z]", label.casefold()) and len(asd) == 1
                   and len(aside.split()) == 1):  # "once per param: 4"
        return asd[0] if len(set(asd)) == 1 else None
    if len(set(lab)) == 1 and (set(asd) == set(lab) or max(asd) < lab[0] or re.search(
            r"[\u00d7*]|\bx\b|\bper\b|\beach\b|\btimes\b", aside)):
        return lab[0]  # "10: conv 2, ...": parts of it
    return False  # a second count as large as the answer: a hedge


def count_or_sum(prediction, truth) -> bool:
    """:func:`count`, and a sum written out: ``"8 params + 2 running stats"``, ``"8 params and
    2 buffers"``, ``"2+2+2+2+2"``, ``"8 + 2 = 10"``, ``"10 (8 params + 2 buffers)"``,
    ``"4 layers: 2+4+2+2"`` (see :func:`_stated_total`)."""
    if isinstance(prediction, str):
        prediction = _stated_total(_drop_negated(prediction))
    return type(prediction) in (int, float) and prediction == truth


_FAIL_WORDS = frozenset("error errors fails fail failed failure raises raise raised "
                        "applyfailed exception refused refuses rejected".split())
_LOAD_WORDS = frozenset("loads load loaded succeeds succeed success works yes".split())
_NOT_WORDS = frozenset("no not never doesn't don't won't can't cannot isn't wouldn't couldn't "
                       "didn't shouldn't".split())
_FAIL_NOUNS = frozenset("error errors exception exceptions failure failures problem "
                        "problems mismatch".split())


_AUX = frozenset("does do will would can could did is".split())
#: what validate(False) does to a misfit: left out, the load going through without it
_SKIP_WORDS = frozenset("skipped skip skips skipping ignored ignores dropped drops omitted "
                        "excluded".split())
_LEFT_OUT = re.compile(r"\b(?:left|leaves?|leaving) (?:\w+ )?out\b")
#: a skip word whose object is keys (``"allow_partial only skips missing keys"``): it says
#: what the switch excuses, not that this load left a tensor out
_SKIPS_KEYS = re.compile(r"\b(?:skip\w*|ignor\w*|drops?|omits?)\s+(?:\w+\s+){0,2}?"
                         r"(missing|absent|unexpected|extra|keys?)\b")


#: the params a fresh Net draws at random (the norms' are constants)
RANDOM_PARAMS = frozenset({"conv.weight", "conv.bias", "fc.weight", "fc.bias"})


def draws_answer(prediction, truth) -> bool:
    """:func:`count_or_sum`, or the random params named (``"conv.weight, conv.bias, fc.weight,
    fc.bias"``): one draw each."""
    if isinstance(prediction, str) and "." in prediction and re.search(r"[a-z]\.[a-z]",
                                                                       prediction):
        names = set(re.findall(r"[a-z]+\.[a-z_]+", prediction))
        return names == RANDOM_PARAMS and len(names) == truth
    if count_or_sum(prediction, truth):
        return True
    return isinstance(prediction, str) and _count_in_prose(prediction) == truth


_PROSE_NOT = re.compile(r"\b(not|no|never|none|except|but|without|besides)\b|n't\b")


def _count_in_prose(text: str) -> float | None:
    """The one count a sentence states, ``"the 4 conv and linear weights and biases"`` → 4;
    None when it states two different numbers, hedges (``"4 or 2"``) or negates."""
    if _HEDGE.search(text) or _PROSE_NOT.search(text.casefold()):
        return None
    numbers = set(_numbers_in(text))
    return numbers.pop() if len(numbers) == 1 else None


def outcome_answer(prediction, truth: str) -> bool:
    """``"loads"`` or ``"error"``, however written: ``"fails with a shape mismatch"``,
    ``"error (shape mismatch)"``, ``"raises ApplyFailed"``, ``"it won't load"``,
    ``"no, it fails"``, ``False`` (the answer to "does it load?"). A leading ``no`` / ``yes``
    answers the question (``"no it fails"``, ``"No — it raises"``) unless a failure noun
    follows it (``"no error"`` loads). Elsewhere a negation (not, won't, can't, cannot...)
    flips the next outcome word of its clause; a comma ends the clause; ``"without"``
    negates only an outcome word right after it (``"fails without validate(False)"`` fails,
    ``"loads without error"`` loads). A tensor said to be left out (``"no, the fc tensors
    are skipped"``) is a load that went through, with misfits left out: it votes ``loads``
    unless negated (``"nothing is skipped"``). An answer whose outcome words disagree, or
    that has none, is refused, and so is one naming an exception the load does not raise
    (``"it raises a KeyError"``: a load raises ``ApplyFailed``, a ``ValueError``) or giving
    a key problem as the reason a load fails (``"no: Missing keys error"``, see
    :func:`key_reason`)."""
    if isinstance(prediction, bool):
        return prediction == (truth == "loads")
    if not isinstance(prediction, str) or other_exception(prediction):
        return False
    if truth == "error" and key_reason(prediction):
        return False
    text = _LEFT_OUT.sub(" skipped ", prediction.casefold().replace("\u2019", "'"))
    text = _SKIPS_KEYS.sub(r"excuses \1", text)  # what allow_partial does, not this load
    tokens = re.findall(r"[a-z']+|[,;.:!?()]", text)
    votes, negated, without, aux = set(), False, False, False
    if re.match(r"\s*(?:no\W*)?(?:not without|only with)\b", prediction.casefold()):
        votes.add(True)  # "not without validate(False)": alone, it fails
    if tokens and tokens[0] in ("no", "nope") and (
            len(tokens) == 1 or tokens[1] not in _FAIL_NOUNS):
        votes.add(True)  # "no": the answer to "does the load succeed?", not a negation
        tokens = tokens[1:]
    before = ""
    for token in tokens:
        if token in _NOT_WORDS or token in ("nothing", "none"):
            negated = True
            aux = token in _NOT_WORDS and (token != "not" or before in _AUX)  # "it doesn't"
        elif token in _SKIP_WORDS:
            if not negated:
                votes.add(False)  # left out: the load went through without it
            negated = aux = False
        elif token in _FAIL_WORDS or token in _LOAD_WORDS:
            fails = token in _FAIL_WORDS
            votes.add(fails != (negated or (without and fails)))  # True: the load fails
            negated = aux = False
        elif not token[0].isalpha():
            if aux:  # "it does not, ...": the answer to "does it load?"
                votes.add(True)
            negated = aux = False
        without = token == "without"
        before = token
    if aux:
        votes.add(True)
    if len(votes) != 1:
        return False
    return votes.pop() == (truth == "error")


#: the exceptions a failed load raises: ``ApplyFailed`` and its bases
_RAISED = frozenset({"applyfailed", "storeerror", "valueerror"})
_EXCEPTION_NAME = re.compile(r"\b\w+(?:error|exception)\b")


def other_exception(prediction: str) -> str | None:
    """The exception class an answer names that a failed load does not raise (``KeyError``
    in ``"it raises a KeyError"``); None when it names none, or ``ApplyFailed``,
    ``StoreError`` or ``ValueError``."""
    for name in _EXCEPTION_NAME.findall(prediction.casefold()):
        if name not in _RAISED and name not in _FAIL_NOUNS:
            return name
    return None


#: a key problem given as a reason: "missing keys", "fc.bias is missing", "unexpected keys"
_KEY_REASON = re.compile(
    r"\bmissing\b|\b(?:unexpected|extra|unknown) (?:keys?|tensors?|names?)\b"
    r"|\bkeys? (?:mismatch|error|problem)s?\b|\bno such (?:key|tensor)\b"
    r"|\b(?:keys?|names?) (?:do(?:es)?n't|do(?:es)? not) match\b")
#: what, before a key reason in its clause, rules it out or names what a switch excuses
_NOT_THE_REASON = re.compile(
    r"\b(?:no|not|nothing|none|never|without|only|just|but)\b|n't\b"
    r"|excus|forgiv|allow|ignor|relax|toleran|tolerat|permit|cover|handl|skip")


def key_reason(prediction: str) -> bool:
    """Whether an answer gives a key problem as what goes wrong (``"no: Missing keys
    error"``, ``"no, fc.weight and fc.bias are missing"``, ``"fails: unexpected keys"``);
    not when its clause (cut at ``,;:.()`` and dashes) rules it out before it (``"no missing
    keys"``, ``"not because of missing keys"``) or says what a switch excuses (``"allow_partial
    excuses missing keys, not shapes"``)."""
    text = prediction.casefold().replace("\u2019", "'")
    for clause in re.split(r"[,;:.()\u2014\u2013]|\s-\s", text):
        for found in _KEY_REASON.finditer(clause):
            if not _NOT_THE_REASON.search(clause[:found.start()]):
                return True
    return False


WRONG_EXCEPTION_HINT = ("A load that fails raises ApplyFailed (minidl.store), a ValueError, "
                        "listing every problem at once. Which exception did you name?")

SKIPPED_HINT = ("If the fc tensors were skipped (left out, fc keeping its own values), the "
                "load would have gone through. What does allow_partial(True) excuse: a "
                "tensor on one side only, or one whose shape does not fit?")


KEY_REASON_HINT = ("Right outcome, wrong reason. Compare the file's names with the 4-class "
                   "Net's: is any missing on either side? And what would allow_partial(True) "
                   "do to a missing key? What does not fit here?")


def partial_load_slip(prediction, truth: str) -> str | None:
    """The hint for an answer that has a tensor left out of a load that fails
    (``"no, the fc tensors are skipped"``): :data:`SKIPPED_HINT`; for one naming an
    exception the load does not raise (``"it raises a KeyError"``):
    :data:`WRONG_EXCEPTION_HINT`; for one blaming keys (``"no: Missing keys error"``):
    :data:`KEY_REASON_HINT`; None otherwise."""
    if not isinstance(prediction, str) or outcome_answer(prediction, truth):
        return None
    if truth == "error" and other_exception(prediction):
        return WRONG_EXCEPTION_HINT
    if truth == "error" and key_reason(prediction):
        return KEY_REASON_HINT
    words = set(re.findall(r"[a-z]+", _LEFT_OUT.sub(" skipped ", prediction.casefold())))
    return SKIPPED_HINT if words & _SKIP_WORDS else None


def draws_during(call) -> int:
    """How many times ``call()`` calls the backend's random op, ``Flex.float_random``
    (counted with a breakpoint on it)."""
    from minidl import debug

    run = debug.trace(call, breakpoints=r"^Flex\.float_random$", echo=False)
    return run.breakpoints[0].hits


def draw_sequential_names(positions: dict[str, int], layers: list[str]):
    """An ``nn.Sequential``'s positions on top (every layer counts, with or without
    params), the minidl field names below: an arrow per renaming rule, a gap where a
    parameter-less layer has no tensors to rename."""
    import matplotlib.pyplot as plt

    by_index = {i: name for name, i in positions.items()}
    fig, ax = plt.subplots(figsize=(8.8, 1.9))
    for i, layer in enumerate(layers):
        x = i * 1.45
        has = i in by_index
        ax.add_patch(plt.Rectangle((x, 1.0), 1.3, 0.55, facecolor="#d9e7f5" if has
                                   else "#eeeeee", edgecolor="#555555"))
        ax.text(x + 0.65, 1.275, f"{i}.*\n{layer}", ha="center", va="center", fontsize=8.5,
                family="monospace", color="black" if has else "#888888")
        if has:
            ax.annotate("", xy=(x + 0.65, 0.42), xytext=(x + 0.65, 0.98),
                        arrowprops={"arrowstyle": "->", "color": "#1f5fa8"})
            ax.text(x + 0.65, 0.2, f"{by_index[i]}.*", ha="center", va="center",
                    fontsize=9, family="monospace", weight="bold")
        else:
            ax.text(x + 0.65, 0.6, "no tensors", ha="center", va="center", fontsize=8,
                    color="#888888")
    ax.text(-0.1, 1.75, "nn.Sequential (file names: position)", fontsize=9.5, weight="bold")
    ax.text(-0.1, -0.25, "Net (module names: fields)", fontsize=9.5, weight="bold")
    ax.set_xlim(-0.2, len(layers) * 1.45)
    ax.set_ylim(-0.45, 2.0)
    ax.axis("off")
    plt.close(fig)
    return fig


def burn_style_load(store, module: Module):
    """burn-store's order, in minidl: map the module, applying every tensor that fits
    (``ModuleSnapshot::apply``, burn-store ``src/traits.rs``), write the result back
    into the caller's module, and only then validate (``PytorchStore::apply_to``,
    ``src/pytorch/store.rs`` 362). Raises ``ApplyFailed`` as burn returns its error."""
    mapped, result = store.validate(False).apply_to(module)  # 1. map; misfits skipped
    vars(module).update(vars(mapped))  # 2. write back into the caller's module
    # 3. validate, only now
    result.check(validate=True, allow_partial=store.partial, source=store.source)
    return result


def changed(before: dict, module: Module) -> int:
    """How many tensors of ``module`` differ from its :func:`fingerprint` ``before``."""
    after = fingerprint(module)
    return sum(after[k] != v for k, v in before.items())


_NAME = re.compile(r"[a-z_]+(?:\.[a-z_0-9]+)+")


class Applied(tuple):
    """The names a load applied (``result.applied``), carrying how many tensors it listed as
    errors (``errors``) and as ignored (``ignored``): the truth :func:`applied_names` reads
    an error count, and :func:`none_applied` an ignored count, against."""

    errors: int | None = None
    ignored: int | None = None

    def __new__(cls, applied, errors: int | None = None,
                ignored: int | None = None) -> Applied:
        made = super().__new__(cls, applied)
        made.errors, made.ignored = errors, ignored
        return made


def applied_of(result) -> Applied:
    """A live ``ApplyResult``'s applied names, error and ignored counts, as an
    :class:`Applied`."""
    return Applied(result.applied, len(result.errors), len(result.ignored))


#: a note on the ignored keys: "+ 1 ignored", "and the counter ignored" (minidl's
#: ``result.ignored``, the step counter): read apart from the applied and error counts
_IGNORED_NOTE = re.compile(r"\s*(?:\+|\bplus\b|\band\b|[,;])?\s*(?:(\d+|one|two)|the (?:step )?"
                           r"counter|(?:bn\.)?num_batches_tracked)\s+(?:is |was |are )?"
                           r"ignored\b")


def _drop_ignored_notes(text: str, truth) -> tuple[str, bool]:
    """``"0 (10 errors + 1 ignored)"`` → (``"0 (10 errors)"``, True): the notes on ignored
    keys taken away, and whether each count they state is ``truth.ignored`` (when known)."""
    from minidl_book.exercises import _NUMBER_WORDS

    said = [m.group(1) for m in _IGNORED_NOTE.finditer(text) if m.group(1)]
    counts = [float(n) if n.isdigit() else _NUMBER_WORDS[n] for n in said]
    known = getattr(truth, "ignored", None)
    right = known is None or all(n == known for n in counts)
    return _IGNORED_NOTE.sub("", text), right


#: a clause about the tensors that did NOT apply: "9 errors", "the other 9 fail"
_ERROR_CLAUSE = re.compile(r"error|mismatch|\bfail|misfit|reject|refus|skip|left out|"
                           r"(?:do|does|did)(?:n't| not) fit|not applied")


#: a dtype's name: its digits are no count ("all ten float16 tensors fail")
_DTYPE = re.compile(r"\b(?:b?float|bf|f|u?int)\d+\b")


def _counted(clause: str) -> list[float]:
    return _numbers_in(_DTYPE.sub(" ", _NAME.sub(" ", clause)))


def _drop_error_clauses(text: str) -> tuple[str, list[float]]:
    """``"1 tensor: fc.bias; 9 errors"`` → (``"1 tensor: fc.bias"``, [9]): the clauses (cut
    at ``;``, ``,``, ``(``, a dash or ``and``) that count the tensors left out, taken away
    with the separator before them, and the numbers they state (not a name's or dtype's)."""
    parts = re.split(r"([;,(\u2014\u2013]|\band\b)", text)
    kept, counts = [parts[0]], []
    if _ERROR_CLAUSE.search(parts[0]):
        kept, counts = [], _counted(parts[0])
    for sep, clause in zip(parts[1::2], parts[2::2]):
        if _ERROR_CLAUSE.search(clause):
            counts += _counted(clause)
        else:
            kept += [sep, clause]
    return "".join(kept).strip(" ,;"), counts


#: a clause saying the load itself raises: "it raises ApplyFailed", "— fails", "it fails"
_RAISES = re.compile(r"rais|throw|applyfailed|exception|storeerror|valueerror|^\s*fail"
                     r"|\b(?:it|load|loading|apply_to|call)\s+(?:\w+\s+)?fail")
#: a clause saying the load goes through: "load succeeds", "it works", "no error raised"
_LOAD_OK = re.compile(r"^\s*(?:but |and |yet |so |the )?(?:(?:load(?:ing)?|it|apply_to|"
                      r"call)\s+)?(?:still )?(?:succe\w*|works|goes through|passes|"
                      r"loads fine|returns|completes)\b|^\s*(?:no|without)\s+(?:\w+\s+)?"
                      r"(?:error|exception|applyfailed)s?(?:\s+raised)?\s*\)?\s*$")
_NEGATION = re.compile(r"\b(?:no|not|nothing|never|without)\b|n't\b")


def _load_outcome(text: str) -> tuple[str, bool]:
    """``"nothing applied, load succeeds"`` → (``"nothing applied"``, False): the clauses (cut
    at ``;``, ``,``, ``(``, a dash) about the load's own outcome, taken away, and whether
    one says it raises (``"0 — fails with ApplyFailed"``, ``"0, it raises ApplyFailed"``:
    punctuation does not decide). A clause counting tensors (``"all 10 fail"``) is not one."""
    parts = re.split(r"([;,(\u2014\u2013]|\s-\s)", text)
    kept, raises = [], False
    for i, clause in enumerate(parts):
        if i % 2:
            kept.append(clause)
            continue
        if _LOAD_OK.search(clause):
            if kept:
                kept.pop()  # its separator
            continue
        if _RAISES.search(clause) and not _NEGATION.search(clause):
            raises = True
        kept.append(clause)
    return "".join(kept).strip(" ,;"), raises


def applied_names(prediction, truth: tuple[str, ...]) -> bool:
    """How many tensors were applied: the number (``1``, ``"1"``, ``"one"``), the names
    (``"just fc.bias"``), or both (``"1, fc.bias"``, ``"fc.bias only (1)"``): names must be
    the applied ones, any number beside them their count; a negation is refused. A clause
    counting the others as errors (``"1 tensor: fc.bias; 9 errors"``, ``"1 (fc.bias), the
    other 9 are errors"``) is read apart: its count must be the load's error count when
    ``truth`` is an :class:`Applied` that knows it."""
    if isinstance(prediction, tuple | list | set | frozenset):
        return set(prediction) == set(truth)
    from minidl_book.exercises import _NUMBER_WORDS

    text = prediction.casefold() if isinstance(prediction, str) else ""
    text, raises = _load_outcome(text)
    if raises:
        return False  # validate(False): the load goes through
    text = re.sub(r"\b(conv|bn|ln|fc)(?: layer)?(?:'s)? (weight|bias|gamma|beta)\b",
                  r"\1.\2", text)  # "the fc bias" is fc.bias
    text = re.sub(r"\b(weight|bias|gamma|beta|running_mean|running_var) of (?:the )?([a-z_]+)",
                  r"\2.\1", text)  # "the bias of fc" is fc.bias
    text = re.sub(r"\s*\b(?:out )?of (?:the )?(?:\d+|[a-z]+)(?: tensors| file tensors)?\b",
                  lambda m: "" if _numbers_in(m.group(0)) else m.group(0), text)  # "1 of 10"
    if text:
        text, error_counts = _drop_error_clauses(text)
        errors = getattr(truth, "errors", None)
        if error_counts and errors is not None and set(error_counts) != {errors}:
            return False
    names = set(_NAME.findall(text))
    if not names:
        return count(text if isinstance(prediction, str) else prediction, len(truth))
    if re.search(r"\b(not|no|except|but|without|besides|or)\b", text):
        return False
    rest = _NAME.sub(" ", text)
    numbers = [float(n) for n in re.findall(r"\d+(?:\.\d+)?", rest)]
    numbers += [_NUMBER_WORDS[w] for w in re.findall(r"[a-z]+", rest) if w in _NUMBER_WORDS]
    return names == set(truth) and all(n == len(truth) for n in numbers)


def none_applied(prediction, truth: Applied) -> bool:
    """:func:`applied_names` for a load that applied nothing, plus the ways of saying none
    (``"no tensors"``, ``"none of them"``, ``"not one"``). A clause counting errors (``"zero
    tensors; all 10 are errors"``, ``"none (10 dtype errors)"``) must state the load's
    error count (``truth.errors``): ``"zero, 11 errors"`` is refused. A clause after the
    count about tensors applied, cast or loaded (``"none, 10 are cast"``) is
    refused, unless it is negated (``"0, nothing is cast"``, ``"skips them instead of
    casting"``). A note on the ignored counter (``"0 (10 errors + 1 ignored)"``) is read
    apart: its count must be ``truth.ignored``."""
    text = prediction.casefold().strip() if isinstance(prediction, str) else ""
    text, ignored_right = _drop_ignored_notes(text, truth)
    if not ignored_right:
        return False
    if isinstance(prediction, str):
        prediction = text
    text, raises = _load_outcome(text)
    head, _, rest = re.split(r"([;,:\u2014(])", text + ",", maxsplit=1)
    for clause in re.split(r"[;,:\u2014(]", rest):
        clause = re.sub(r"\b(?:instead of|rather than|without)\s+\w+", "", clause)
        if (re.search(r"appl|load|cast|conver|kept|fit|succe", clause)
                and not re.search(r"\b(?:none|nothing|no|not|never)\b|n't\b", clause)):
            return False  # a clause after the count says tensors were cast or loaded
    if applied_names(prediction, truth):
        return True
    if raises:
        return False  # validate(False): the load goes through
    _, error_counts = _drop_error_clauses(text)
    errors = getattr(truth, "errors", None)
    if error_counts and errors is not None and set(error_counts) != {errors}:
        return False
    said_none = re.match(r"(none|nothing|zero|0|no tensors?|not (a single )?one)\b", head)
    return (not truth and said_none is not None and "error" not in head
            and not re.search(r"[1-9]", head))


def draw_file_layouts(pt_path, safetensors_path):
    """The two files side by side: the ``.pt`` zip (a pickle plus one raw buffer per storage)
    and the safetensors file (header length, JSON header, raw bytes)."""
    import json
    import struct
    import zipfile

    import matplotlib.pyplot as plt

    with zipfile.ZipFile(pt_path) as archive:
        entries = [(i.filename.split("/", 1)[1], i.file_size) for i in archive.infolist()]
    pickle = [e for e in entries if e[0] == "data.pkl"]
    storages = [e for e in entries if e[0].startswith("data/")]
    raw = safetensors_path.read_bytes()
    (n,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8:8 + n])
    tensors = len([k for k in header if k != "__metadata__"])
    rows = [
        ("torch.save → .pt (a zip)",
         [(f"{pickle[0][0]}\n{pickle[0][1]} B\na program:\nGLOBAL, REDUCE…", "#f4c7c3")]
         + [(f"{len(storages)} storages\ndata/0 … data/{len(storages) - 1}\nraw bytes",
             "#d9e7f5")]
         + [("version, byteorder,\n…", "#eeeeee")]),
        ("safetensors",
         [("8 bytes\nheader length", "#eeeeee"),
          (f"JSON header ({n} B)\n{tensors} × name → dtype,\nshape, byte range", "#fff2cc"),
          (f"raw little-endian bytes\n{len(raw) - 8 - n} B", "#d9e7f5")]),
    ]
    fig, ax = plt.subplots(figsize=(8.8, 2.6))
    for r, (title, boxes) in enumerate(rows):
        y = 1 - r
        ax.text(0, y + 0.42, title, fontsize=10, weight="bold")
        for i, (label, color) in enumerate(boxes):
            ax.add_patch(plt.Rectangle((i * 3.0, y - 0.35), 2.9, 0.7, facecolor=color,
                                       edgecolor="#555555"))
            ax.text(i * 3.0 + 1.45, y, label, ha="center", va="center", fontsize=8.5)
    ax.set_xlim(-0.1, 9.0)
    ax.set_ylim(-0.45, 1.6)
    ax.axis("off")
    plt.close(fig)
    return fig


def draw_switch_grid(grid: dict, problems: list[str], switches: list[str]):
    """A 2×2 grid: rows the kind of misfit, columns the switch; each cell the outcome text
    of a live load (``grid[(problem, switch)]``), green when it loads, red when it fails."""
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(8.4, 2.9))
    for c, switch in enumerate(switches):
        ax.text(2.2 + c * 2.5, 2.15, f"store.{switch}", ha="center", fontsize=10,
                weight="bold", family="monospace")
    for r, problem in enumerate(problems):
        y = 1.4 - r * 1.05
        ax.text(0.9, y, problem, ha="right", va="center", fontsize=9.5, weight="bold")
        for c, switch in enumerate(switches):
            text = grid[(problem, switch)]
            color = "#d5f0d5" if text.startswith("loads") else "#f4c7c3"
            ax.add_patch(plt.Rectangle((1.0 + c * 2.5, y - 0.48), 2.4, 0.96,
                                       facecolor=color, edgecolor="#555555"))
            ax.text(2.2 + c * 2.5, y, text, ha="center", va="center", fontsize=9)
    # each row label ends left of its boxes (x 0.9 < 1.0)
    ax.set_xlim(-1.3, 6.1)
    ax.set_ylim(-0.2, 2.4)
    ax.axis("off")
    plt.close(fig)
    return fig


# ----- printing on the page ------------------------------------------------------------------
_TMP = re.compile(re.escape(tempfile.gettempdir()) + r"/[^/\s']+")


def show(value) -> None:
    """Print ``value`` (a list of keys, an ``ApplyResult``, a message) in the page's text
    column: long lines wrapped at 80 columns (never inside a shape), temporary folders written ``<tmp>``."""
    for line in _TMP.sub("<tmp>", str(value)).splitlines():
        # a space inside a numeric [...] is made unbreakable, so a shape is never split; a
        # list of keys may break between keys, never inside one
        line = re.sub(r"\[[\d,\s]*\]", lambda m: m.group(0).replace(" ", "\xa0"), line)
        if len(line) > 80:
            line = textwrap.fill(line, 80, subsequent_indent="      ",
                                 break_long_words=False, break_on_hyphens=False)
        print(line.replace("\xa0", " "))


def show_error(err: BaseException, keep: int | None = None) -> None:
    """Print an error as ``Type: message`` (see :func:`show`); with ``keep``, only the first
    ``keep`` lines of a longer list of problems, then ``… and N more``."""
    lines = f"{type(err).__name__}: {err}".splitlines()
    if keep is not None and len(lines) > keep + 2:
        lines = lines[:keep + 1] + [f"  … and {len(lines) - keep - 1} more like these"]
    show("\n".join(lines))


def pickle_calls(pt_path) -> list[str]:
    """The lines of Python's pickle disassembly (``pickletools.dis``) of a ``.pt`` archive's
    ``data.pkl`` that look up a global (``GLOBAL``) or call one (``REDUCE``)."""
    with zipfile.ZipFile(pt_path) as archive:
        pickled = archive.read(next(n for n in archive.namelist() if n.endswith("/data.pkl")))
    listing = io.StringIO()
    pickletools.dis(pickled, out=listing)
    return [line for line in listing.getvalue().splitlines()
            if "GLOBAL" in line or "REDUCE" in line]


# ----- the load plan, drawn ------------------------------------------------------------------
def plan_arrows(store, module: Module) -> list[tuple[str, str | None, str]]:
    """What a load of ``store`` into ``module`` does to each file tensor, read from a live
    ``store.plan(module)``: ``(file name, slot path or None, label)`` in the module's order,
    label ``"transpose"``, ``"weight→gamma"`` (a renamed lookup), ``"no slot: ignored"`` or
    ``""`` (taken as it is)."""
    from minidl.store.module_bridge import collect_slots

    files = store.tensors()
    plan = store.plan(module)
    adapter = store.from_adapter
    rows: list[tuple[str, str | None, str]] = []
    for slot in collect_slots(module):
        if slot.path not in plan.values:
            continue
        key = slot.path
        if key not in files:
            alt = adapter.alternative_name(slot.name, slot.module_type)
            key = f"{slot.path.rpartition('.')[0]}.{alt}"
        raw, used = files[key], plan.values[slot.path]
        if key != slot.path:
            label = f"{key.rsplit('.', 1)[-1]}→{slot.name}"
        elif raw.shape != used.shape and np.array_equal(raw.T, used):
            label = "transpose"
        else:
            label = ""
        rows.append((key, slot.path, label))
    for key in plan.ignored:  # after the last row of its module
        head = key.rsplit(".", 1)[0]
        at = max((i for i, r in enumerate(rows) if r[0].startswith(head + ".")), default=-1)
        rows.insert(at + 1, (key, None, "no slot: ignored"))
    return rows


def draw_load_plan(store, module: Module):
    """File names on the left, the module's slots on the right, one arrow per file tensor
    labelled as :func:`plan_arrows` says. Returns ``(figure, arrows)``."""
    import matplotlib.pyplot as plt

    from minidl.store.module_bridge import collect_slots

    arrows = plan_arrows(store, module)
    files = store.tensors()
    slots = {s.path: s for s in collect_slots(module)}
    colors = {"transpose": "#c0392b", "no slot: ignored": "#888888"}
    fig, ax = plt.subplots(figsize=(8.8, 0.36 * len(arrows) + 0.7))
    top = len(arrows) - 1
    ax.text(0.0, top + 0.9, "in the .pt file (PyTorch names, shapes)", fontsize=9.5,
            weight="bold")
    ax.text(6.0, top + 0.9, "slots of Net (minidl names, lazy_shape())", fontsize=9.5,
            weight="bold")
    for i, (key, path, label) in enumerate(arrows):
        y = top - i
        color = colors.get(label, "#1f5fa8" if label else "#333333")
        ax.text(0.0, y, f"{key} {list(files[key].shape)}", va="center", fontsize=8.5,
                family="monospace")
        if path is None:
            right = "—"
        else:
            slot = slots[path]
            right = f"{path} {list(slot.shape)}  ({slot.module_type})"
        ax.text(6.0, y, right, va="center", fontsize=8.5, family="monospace",
                color="#888888" if path is None else "black")
        ax.annotate("", xy=(5.85, y), xytext=(3.55, y),
                    arrowprops={"arrowstyle": "->", "color": color,
                                "linestyle": "--" if path is None else "-"})
        if label:
            ax.text(4.7, y + 0.12, label, ha="center", va="bottom", fontsize=8, color=color)
    ax.set_xlim(-0.1, 10.5)
    ax.set_ylim(-0.6, top + 1.3)
    ax.axis("off")
    plt.close(fig)
    return fig, arrows


def two_columns(left_title: str, left: dict, right_title: str, right: dict) -> None:
    """Print two ``name → shape`` listings side by side (a checkpoint's keys, a module's
    slots), each row ``name [shape]``."""
    from itertools import zip_longest

    rows = [(left_title, right_title)] + list(zip_longest(
        [f"{k} {list(v)}" for k, v in left.items()],
        [f"{k} {list(v)}" for k, v in right.items()], fillvalue=""))
    width = max(len(r[0]) for r in rows) + 3
    for a, b in rows:
        print(f"{a:<{width}}{b}")


def draw_result_buckets(result):
    """The five lists of a live ``ApplyResult`` side by side: what lands in each, and what
    it holds here (which switch lets a load with entries there succeed is the chapter's
    exercise, so it is not drawn)."""
    import matplotlib.pyplot as plt

    rows = [("applied", "found, checked:\nto be built", "#d5f0d5"),
            ("missing", "a slot with no\nfile tensor", "#f4c7c3"),
            ("unused", "a file tensor\nno slot took", "#f4c7c3"),
            ("errors", "found, but does\nnot fit its slot", "#f4c7c3"),
            ("ignored", "dropped by\nthe adapter", "#e4e4e4")]
    fig, ax = plt.subplots(figsize=(7.0, 1.6))
    fig.subplots_adjust(left=0.01, right=0.99, bottom=0.02, top=0.98)
    for c, (name, what, color) in enumerate(rows):
        x = c * 1.7
        items = [str(getattr(e, "path", e)) for e in getattr(result, name)]
        items = ["\n".join(re.findall(r".{1,12}(?:[._]|$)", i)).strip() for i in items]
        here = (f"{len(items)} tensors" if len(items) > 3
                else "\n".join(items) if items else "(empty)")
        ax.add_patch(plt.Rectangle((x, 0), 1.6, 1.6, facecolor=color, edgecolor="#555555"))
        ax.text(x + 0.8, 1.4, name, ha="center", va="center", fontsize=10.5,
                weight="bold", family="monospace")
        ax.text(x + 0.8, 0.95, what, ha="center", va="center", fontsize=9)
        ax.text(x + 0.8, 0.35, here, ha="center", va="center", fontsize=8.5,
                family="monospace", color="#1f3a93")
    ax.set_xlim(-0.05, 8.45)
    ax.set_ylim(-0.05, 1.65)
    ax.axis("off")
    plt.close(fig)
    return fig


def _box(text: str, face: str = "#eef2fa", edge: str = "#555555", title: str = ""):
    """A box of :func:`_box_rows`: ``text`` centred, or under a bold monospace ``title``."""
    import matplotlib.pyplot as plt

    def draw(ax, x: float, y: float, w: float, h: float) -> None:
        ax.add_patch(plt.Rectangle((x, y), w, h, fc=face, ec=edge, lw=1.0))
        if title:
            ax.text(x + w / 2, y + 0.72, title, ha="center", va="center", fontsize=10,
                    weight="bold", family="monospace")
            ax.text(x + w / 2, y + 0.33, text, ha="center", va="center", fontsize=9)
        else:
            ax.text(x + w / 2, y + h / 2, text, ha="center", va="center", fontsize=9.5)
    return draw


def _outcome(text: str):
    """The last item of a :func:`_box_rows` row: ``text`` in a rounded label."""
    def draw(ax, x: float, y: float, w: float, h: float) -> None:
        ax.text(x + w / 2, y + h / 2, text, ha="center", va="center", fontsize=9.5,
                bbox={"boxstyle": "round", "fc": "white", "ec": "#555555"})
    return draw


def _box_rows(rows: list[tuple[str, list]], xs: list[float], widths: list[float],
              height: float, pitch: float, label_size: float, figsize: tuple[float, float],
              xmax: float, top: float, base: float):
    """Rows of boxes joined by arrows, each row led by its bold label: ``rows`` is
    ``[(label, [draw(ax, x, y, w, h), ...])]`` (:func:`_box`, :func:`_outcome`); the rows
    are ``pitch`` apart from ``base``, the figure ``xmax`` wide and ``top`` above the last."""
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=figsize, dpi=100)
    fig.subplots_adjust(left=0.0, right=1.0, bottom=0.0, top=1.0)
    for r, (label, boxes) in enumerate(rows):
        y = (len(rows) - 1 - r) * pitch + base
        ax.text(0.02, y + height / 2, label, ha="left", va="center", fontsize=label_size,
                weight="bold")
        for c, draw in enumerate(boxes):
            draw(ax, xs[c], y, widths[c], height)
            if c:
                ax.annotate("", (xs[c], y + height / 2),
                            (xs[c - 1] + widths[c - 1], y + height / 2),
                            arrowprops={"arrowstyle": "->", "color": "#555555"})
    ax.set_xlim(0, xmax)
    ax.set_ylim(0, len(rows) * pitch + top)
    ax.axis("off")
    plt.close(fig)
    return fig


def draw_col_trap(refusal: str, forward_error: str, square_diff: float):
    """The LinearLayout.Col trap as three rows of boxes: PyTorch's ``[out, in]`` weight, the
    adapter's transpose, the Col slot (lazy non-square, read non-square, square) and what
    happens; ``refusal`` and ``forward_error`` are the real messages, shortened to fit."""
    file = "fc.pt: W {}\n(PyTorch [out, in])"
    adapt = "adapter\ntransposes:\nWᵀ {}"
    rows = [
        ("Linear(2, 4)\nlazy slot",
         [file.format("[4, 2]"), adapt.format("[2, 4]"),
          "recipe [out, in]\n= [4, 2]:\ncheck fails"],
         "load refused:\n" + refusal),
        ("Linear(2, 4)\nread slot",
         [file.format("[4, 2]"), adapt.format("[2, 4]"),
          "holds [in, out]\n= [2, 4]: passes;\nload transposes → W"],
         "loads; forward x · W\nfails: " + forward_error),
        ("Linear(3, 3)\nany slot",
         [file.format("[3, 3]"), adapt.format("[3, 3]"),
          "[3, 3] fits:\npasses; load\ntransposes → W"],
         f"loads, runs x · W:\nwrong numbers, silently\n(max|diff| {square_diff:.2f})"),
    ]
    return _box_rows(
        [(label, [_box(text) for text in boxes] + [_box(outcome, "#fde2e2", "#c0392b")])
         for label, boxes, outcome in rows],
        xs=[1.2, 3.1, 5.0, 6.95], widths=[1.75, 1.75, 1.8, 2.35], height=0.92, pitch=1.1,
        label_size=9, figsize=(7.5, 3.6), xmax=9.35, top=0.02, base=0.08)


def draw_check_then_build(minidl_replaced: int, burn_replaced: int, total: int):
    """Two pipelines for one failing load: minidl's plan → check → build a new module, and
    burn-store's apply → write back → validate; each ends with how many of the caller's
    ``total`` tensors the failed load replaced (measured live by the caller; burn's row
    with :func:`burn_style_load`, minidl imitating burn's order, not burn run)."""
    rows = [
        ("minidl",
         [("plan", "match, adapt,\nlist every tensor", "#eef2fa"),
          ("check", "any problem:\nApplyFailed, stop", "#fff3d6"),
          ("build", "a NEW module\nfrom the plan", "#e3f3e3")],
         f"caller's module:\n{minidl_replaced} of {total} replaced"),
        ("burn's order\n(imitated)",
         [("apply", "each tensor that\nfits, as it goes", "#eef2fa"),
          ("write back", "into the\ncaller's module", "#fde2e2"),
          ("validate", "problems:\nErr, afterwards", "#fff3d6")],
         f"caller's module:\n{burn_replaced} of {total} replaced"),
    ]
    return _box_rows(
        [(label, [_box(what, color, title=name) for name, what, color in boxes]
          + [_outcome(outcome)]) for label, boxes, outcome in rows],
        xs=[1.15, 2.95, 4.75, 6.6], widths=[1.6, 1.6, 1.6, 1.75], height=0.95, pitch=1.25,
        label_size=10, figsize=(7.5, 2.6), xmax=8.4, top=0.05, base=0.1)


#: the load pipeline's boxes: (title, what it does, the knob that sets it)
PIPELINE = [("file", ".pt: a safe\nunpickler"), ("top key", "with_top_\nlevel_key"),
            ("remap", "with_key_\nremapping"), ("adapter", "transpose,\nrename, cast"),
            ("plan", "match slots,\nfive lists"), ("check", "allow_partial,\nvalidate"),
            ("build", "a NEW\nmodule")]


def draw_load_pipeline():
    """A PyTorch import as one row of boxes (minidl's ``PytorchStore`` and burn-store's
    ``PytorchStore``: file → top-level key → remap → adapter → plan → check with the
    switches → build). burn's renumbering of index gaps, on by default there, is said in
    the chapter's remap section, where layer positions are explained."""
    return _box_rows(
        [("", [_box(text, "#fde2e2" if title == "file" else "#eef2fa", title=title)
               for title, text in PIPELINE])],
        xs=[0.05 + 1.3 * i for i in range(len(PIPELINE))], widths=[1.1] * len(PIPELINE),
        height=0.95, pitch=1.0, label_size=9, figsize=(9.0, 1.4), xmax=9.1, top=0.05,
        base=0.05)

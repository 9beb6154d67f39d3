"""Reading the performance chapter's typed answers. :func:`said_options` reads a word
answer among quoted options; :func:`bound_compare` the "which roof?" answer (memory- or
compute-bound on the DRAM roof of burn-flex's host, the roofline of ``minidl_book.roofline``);
:func:`blas_compare` the verdict on Flex's gemm (minidl's mirror of burn-flex's
``matmul``) against OpenBLAS, graded against the measured :class:`perf_lab.Duel`."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from minidl_book.perf_lab import Duel

__all__ = ["NEGATED", "blas_compare", "bound_compare", "said_options"]

Compare = Callable[[Any, Any], bool]

NEGATED = re.compile(r"^(?:not|no|never|nor|neither|rather than|instead of)\b|n't\b")
# a later clause that dismisses the option it names: "loop order; blocking barely helps"
DISMISSED = re.compile(r"\b(?:barely|hardly|scarcely|little|nothing|not much|less|"
                       r"negligible|no (?:help|gain|effect)|(?:does|do|did|is)n t|"
                       r"does not)\b")


def said_options(options: dict[str, list[str]],
                 keys: dict[str, list[str]] | None = None,
                 dismiss: bool = False) -> Compare:
    """A compare for an answer among quoted words: its parts (split at commas,
    semicolons and "but", parentheses dropped) that are not negated and name an option
    must all name the truth, and one must ("memory, not compute", "not compute but
    memory", "level, within 3%"); ``keys``: words that name an option anywhere in a
    part ("bandwidth-bound on DRAM", "left of the ridge"); ``dismiss``: a part that
    plays its option down names no answer ("loop order; blocking barely helps")."""

    def norm(text: str) -> str:
        w = " ".join(re.sub(r"[-.,;:!?\"'`\u2019]", " ", text.casefold()).split())
        w = re.sub(r"\s+(?:than|to|with|as)\s+(?:openblas|numpy|mkl|it)$", "", w)
        return re.sub(r"^(?:the|a|an|it is|it s|its|flex is|flex s gemm is)\s+", "", w)

    names = {norm(k): k for k in options}
    names |= {norm(a): k for k, alts in options.items() for a in alts}

    def name_of(part: str) -> str | None:
        if part in names:
            return names[part]
        hit = {k for k in options if any(re.search(rf"\b{re.escape(norm(w))}\b", part)
                                         for w in [k, *(keys or {}).get(k, [])])}
        return hit.pop() if len(hit) == 1 else None

    def compare(answer: Any, truth: Any) -> bool:
        if not isinstance(answer, str):
            return False
        text = re.sub(r"\([^)]*\)", " ", answer.casefold())
        text = text if text.strip() else answer.casefold()
        parts = [norm(p) for p in re.split(r"[,;]|\bbut\b", text) if norm(p)]
        named = [name_of(p) for p in parts if not NEGATED.search(p)
                 and not (dismiss and DISMISSED.search(p))]
        kept = [k for k in named if k is not None]  # "within 3%" names no option
        return bool(kept) and all(k == truth for k in kept)

    return compare


# ---- "Which roof?": memory- or compute-bound on the DRAM roof ----

BOUND_WORDS = said_options({
    "memory": ["memory bound", "bandwidth", "bandwidth bound", "bound by memory",
               "DRAM", "DRAM bound", "bound by DRAM", "limited by memory",
               "memory limited", "bandwidth limited", "memory bandwidth",
               "limited by bandwidth", "limited by DRAM", "DRAM bandwidth"],
    "compute": ["compute bound", "flops", "arithmetic", "bound by compute",
                "compute limited", "FMA", "FMA bound", "flop bound", "flops bound"],
}, keys={"memory": ["bandwidth", "DRAM", "left of the ridge", "below the ridge"],
         "compute": ["flops", "FMA", "arithmetic bound", "right of the ridge",
                     "above the ridge"]})
# an intensity ("8 flops per 8 bytes", "1 flop/byte", "14.8 flops") names no roof
INTENSITY = re.compile(r"(?:\b\d+(?:\.\d+)?\s*)?\bflops?\s*(?:/|per)\s*(?:\d+(?:\.\d+)?"
                       r"\s*)?(?:bytes?|b)\b|\b\d+(?:\.\d+)?\s*flops?\b")
# "far below the compute roof" places the point, it does not name the roof that binds
UNDER_PEAK = re.compile(r"\b(?:below|under|beneath|far from|short of)\s+(?:the\s+|its\s+)?"
                        r"(?:compute|fma|flops?|arithmetic)\s+(?:roof|peak|ceiling)")
CACHE = re.compile(r"\b(?:l1d?|l2|l3|llc|caches?)\b")
# a cache the answer says the arrays are past: "too big for L3", "not L3 but DRAM"
PAST = re.compile(r"\b(?:past|beyond|exceeds?|exceeding|than|outside|out of|too big|"
                  r"too large|not|no|never|nor|rather|instead|n t|overflows?)\b")


def _names_a_cache(text: str) -> bool:
    """Whether a clause puts the chain on a cache's roof ("memory-bound on L3")."""
    for clause in re.split(r"[,;]|\bbut\b", text):
        hit = CACHE.search(clause)
        if hit and not PAST.search(clause[:hit.start()]):
            return True
    return False


def bound_compare(answer: Any, truth: Any) -> bool:
    """``"memory"`` or ``"compute"`` on the DRAM roof: words as :func:`said_options`
    reads them, an intensity stated in flops ("8 flops per 8 bytes") naming no roof, and
    an answer that puts the chain on a cache's roof ("memory-bound on L3") refused."""
    if not isinstance(answer, str):
        return False
    text = " ".join(re.sub(r"['\u2019]", " ", answer.casefold()).split())
    text = UNDER_PEAK.sub(" ", INTENSITY.sub(" ", text))
    if _names_a_cache(re.sub(r"\([^)]*\)", " ", text)):
        return False
    return BOUND_WORDS(text, truth)


# ---- Flex against OpenBLAS: slower, level or faster, against the measured ratio ----

BLAS_WORDS = said_options({
    "level": ["same", "the same", "about the same", "roughly the same", "equal",
              "on par", "similar", "as fast", "comparable", "tie", "even",
              "same speed", "the same speed", "about the same speed", "equally fast",
              "level with it", "as fast as OpenBLAS", "roughly level", "about level",
              "nearly level", "roughly equal", "about equal", "nearly equal",
              "equal speed", "roughly as fast", "about as fast",
              "roughly as fast as OpenBLAS", "within a few percent", "nearly as fast",
              "almost as fast", "just as fast", "nearly the same", "almost the same",
              "nearly as fast as OpenBLAS", "almost as fast as OpenBLAS", "close",
              "very close", "close to it", "almost level"],
    "slower": ["slow", "less fast", "much slower"],
    "faster": ["fast", "quicker", "much faster"],
}, keys={"level": ["equal", "on par", "comparable", "same"]})
SHARE = re.compile(r"([0-9]+(?:\.[0-9]+)?)\s*(?:%|percent|per cent)")
WAY = re.compile(r"\b(?:(slower|less fast|behind)|(faster|quicker|ahead))\b")
# a lean inside the band: "slightly slower", "level, maybe a bit faster"
HEDGE = re.compile(r"\b(?:slightly|a little|a bit|a tad|a touch|marginally|somewhat)\b")
MUCH = re.compile(r"\b(?:much|far|way|a lot)\b")


def _way(text: str) -> str | None:
    hit = WAY.search(text)
    return None if hit is None else "slower" if hit.group(1) else "faster"


def _claim_fits(clause: str, piece_way: str | None, duel: Duel) -> bool | None:
    """Whether one clause's claim fits the duel; ``None`` when it claims nothing."""
    if re.search(r"\b(?:not|no|never|nor|neither|rather than|instead of)\b|n[\u2019']t\b",
                 clause):
        return None  # "not slower": what the answer rules out is not graded
    share, way = SHARE.search(clause), _way(clause)
    if share and re.search(r"within\s*(?:about\s*)?$", clause[:share.start()]):
        return duel.within(float(share.group(1)) / 100)  # a band either way
    if share and (way or piece_way):  # "slower, maybe 20%": the piece's direction
        return duel.fits_share(float(share.group(1)) / 100, way or piece_way)
    if way and MUCH.search(clause):
        return duel.verdict() == way  # "much slower": only past the band
    if way and HEDGE.search(clause):
        return duel.leans(way)  # inside the band, on the measured side
    named = [w for w in ("level", "slower", "faster") if BLAS_WORDS(clause, w)]
    return duel.fits(named[0]) if named else None


def blas_compare(answer: Any, duel: Duel) -> bool:
    """Words ("level"; "level or a little slower" and "level, maybe slightly slower":
    every alternative and clause must fit) or a stated share ("about 20% slower",
    "within 5%") against the measured ratio and its noise (:class:`Duel`: OpenBLAS's
    best time over Flex's). A hedge ("slightly slower") claims the 10 % band on one
    side: it fits when the ratio is in the band and the noise does not put Flex on
    the other side, the same verdict alone or beside "level"."""
    if not isinstance(answer, str):
        return False
    text = re.sub(r"\([^)]*\)", lambda m: ", " + m.group(0)[1:-1], answer.casefold())
    verdicts = []
    for piece in (p for p in re.split(r"\bor\b", text) if p.strip()):
        piece_way = _way(piece)
        clauses = re.split(r"[,;]|\bbut\b", piece)
        verdicts.append([v for c in clauses
                         if (v := _claim_fits(c, piece_way, duel)) is not None])
    return bool(verdicts) and all(v and all(v) for v in verdicts)

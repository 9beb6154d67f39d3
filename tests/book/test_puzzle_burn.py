"""The puzzles appendix's burn lines: every place is at the stated line in burn's source, and
the chapter's per-puzzle lines and closing table name the places :data:`BURN_OPS` holds."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from minidl_book.puzzle_burn import BURN_OPS, HOWS, MIRROR, TAG, BurnOp, verify
from minidl_book.puzzles import ORDER

CHAPTER = Path(__file__).resolve().parents[2] / "chapters" / "puzzles.md"
HAS_MIRROR = subprocess.run(["git", "-C", str(MIRROR), "rev-parse", TAG],
                            capture_output=True).returncode == 0


def test_one_entry_per_puzzle_and_a_known_way():
    assert list(BURN_OPS) == list(ORDER)
    for burn in BURN_OPS.values():
        assert burn.how in HOWS and bool(burn.op) == bool(burn.places) == (burn.how != "none")


@pytest.mark.skipif(not HAS_MIRROR, reason="no burn mirror")
def test_every_place_is_right_at_the_tag():
    assert verify() == []


@pytest.mark.skipif(not HAS_MIRROR, reason="no burn mirror")
def test_a_wrong_line_or_a_present_op_is_caught(monkeypatch):
    from minidl_book import puzzle_burn

    shifted = dict(BURN_OPS, eye=BurnOp("eye", "composed", (("numeric.rs", 884, "pub fn eye("),)))
    monkeypatch.setattr(puzzle_burn, "BURN_OPS", shifted)
    assert verify() == ["eye: numeric.rs:884 lacks 'pub fn eye('"]
    monkeypatch.setattr(puzzle_burn, "BURN_OPS", BURN_OPS)
    monkeypatch.setattr(puzzle_burn, "ABSENT", {"cumsum": "cumsum"})
    assert verify()[0].startswith("cumsum: burn has 'cumsum'")


def _solution_tails() -> dict[str, str]:
    """Each puzzle's text from its solution-start to the next exercise or heading."""
    text = CHAPTER.read_text(encoding="utf-8")
    out = {}
    for name in ORDER:
        start = text.index(f"```{{solution-start}} ex-puzzle-{name}\n")
        stop = re.compile(r"^(```\{exercise\}|#)", re.M).search(text, start)
        out[name] = text[start: stop.start() if stop else len(text)]
    return out


@pytest.mark.parametrize("name", ORDER)
def test_each_solution_ends_with_burns_line(name):
    tail = _solution_tails()[name]
    lines = [ln for ln in tail.splitlines() if ln.startswith("**burn**")]
    assert len(lines) == 1, f"{name}: one **burn** line after its solution"
    burn = BURN_OPS[name]
    for short, line, _ in burn.places:
        assert f"{short}:{line}" in tail, f"{name}: its line does not name {short}:{line}"
    if burn.how == "none":
        assert "none" in lines[0] or "no " in lines[0]


def test_the_closing_table_has_every_puzzle_once_and_matches():
    text = CHAPTER.read_text(encoding="utf-8")
    table = text[text.rindex("| puzzle |"):]
    rows = [r.strip("|").split("|") for r in table.splitlines()[2:] if r.startswith("|")]
    assert [r[0].strip() for r in rows] == list(ORDER)
    for name, op, how, where in ([c.strip().strip("`") for c in r] for r in rows):
        burn = BURN_OPS[name]
        assert (op, how, where) == (burn.op or "none", burn.how, burn.where or "—"), name

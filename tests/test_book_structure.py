"""The book's shape as a teacher, read from the chapter sources (fast: nothing is executed).

- Every chapter asks the reader to predict inside its body: at least two think-about-it
  exercises (an ``{exercise}`` directive, a checker cell with a ``...`` placeholder, a hidden
  solution) before the chapter's final exercise section, outside its "Build it" section.
- Every exercise's solution is folded (``:class: dropdown``).
- The puzzles appendix has all 21 of Tensor-Puzzles, each with a plain-loop spec the reader
  can run and a printed example; its checker demo uses puzzles of its own.
- A glossary exists, every ``{term}`` link resolves to one of its entries, every entry is
  linked, and every chapter links it.
- No page calls the burn book "the seed".
- Every code cell fits the text column (88 columns), as the site test measures in a browser.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from booktools import chapter_path, toc_docnames

DOCNAMES = toc_docnames()
APPENDICES = {"chapters/puzzles", "chapters/glossary"}
CHAPTERS = [d for d in DOCNAMES if d not in APPENDICES]

#: Sasha Rush's Tensor-Puzzles, all of them.
TENSOR_PUZZLES = {
    "ones", "sum", "outer", "diag", "eye", "triu", "cumsum", "diff", "vstack", "roll", "flip",
    "compress", "pad_to", "sequence_mask", "bincount", "scatter_add", "flatten", "linspace",
    "heaviside", "repeat", "bucketize",
}

_FENCE = re.compile(r"^(`{3,}|~{3,}|:{3,})(.*)$")
_DIRECTIVE = re.compile(r"^\{([\w-]+)\}\s*(.*)$")
_FINAL_SECTION = re.compile(r"^(Exercises|Think about it)\s*$", re.IGNORECASE)
_TERM = re.compile(r"\{term\}`([^`]+)`")


@dataclass
class Block:
    """One fenced block: a code cell or a MyST directive, with its body and where it starts."""

    kind: str  # "code-cell", "exercise", "solution", ... ("" for a plain fence)
    argument: str
    line: int
    body: list[str] = field(default_factory=list)
    section: str = ""  # the h2 heading above it

    @property
    def options(self) -> dict[str, str]:
        out = {}
        for text in self.body:
            m = re.match(r"^:([\w-]+):\s*(.*)$", text)
            if not m:
                break
            out[m.group(1)] = m.group(2)
        return out

    @property
    def text(self) -> str:
        return "\n".join(self.body)


@dataclass
class Page:
    """A chapter source: its h2 headings (line, title) and its top-level fenced blocks."""

    path: Path
    headings: list[tuple[int, str]]
    blocks: list[Block]
    prose: str  # the text outside every fence


def parse(path: Path) -> Page:
    lines = path.read_text(encoding="utf-8").splitlines()
    headings: list[tuple[int, str]] = []
    blocks: list[Block] = []
    prose: list[str] = []
    open_fence: tuple[str, Block] | None = None
    depth = 0  # fences nested inside the open top-level one
    section = ""
    for n, text in enumerate(lines):
        m = _FENCE.match(text)
        if open_fence is None:
            if m:
                d = _DIRECTIVE.match(m.group(2).strip())
                kind, arg = (d.group(1), d.group(2)) if d else ("", m.group(2).strip())
                open_fence = (m.group(1), Block(kind, arg, n, section=section))
                continue
            if text.startswith("## "):
                section = text[3:].strip()
                headings.append((n, section))
            prose.append(text)
            continue
        marker, block = open_fence
        if m and m.group(1)[0] == marker[0]:
            if m.group(2).strip() and len(m.group(1)) < len(marker):
                depth += 1  # a nested directive opens
            elif not m.group(2).strip() and len(m.group(1)) >= len(marker) and depth == 0:
                blocks.append(block)
                open_fence = None
                continue
            elif not m.group(2).strip() and depth:
                depth -= 1
        block.body.append(text)
    assert open_fence is None, f"{path.name}: a fence opened at line {open_fence[1].line + 1} never closes"
    return Page(path, headings, blocks, "\n".join(prose))


PAGES = {name: parse(chapter_path(name)) for name in DOCNAMES}


def final_section_line(page: Page) -> int:
    """Where the chapter's last "Exercises" / "Think about it" section starts (or its end)."""
    starts = [n for n, title in page.headings if _FINAL_SECTION.match(title)]
    return starts[-1] if starts else 10**9


def solutions_of(page: Page) -> dict[str, Block]:
    return {b.argument.strip(): b for b in page.blocks if b.kind in ("solution", "solution-start")}


def body_predictions(page: Page) -> list[str]:
    """Labels of the think-about-it exercises in the chapter's body: before its final exercise
    section, not a "Build it", and followed by a checker cell with a ``...`` prediction before
    the exercise's solution."""
    end = final_section_line(page)
    solutions = solutions_of(page)
    found = []
    for block in page.blocks:
        if block.kind != "exercise" or block.line >= end or block.section.lower().startswith("build it"):
            continue
        label = block.options.get("label", "")
        solution = solutions.get(label)
        if solution is None:
            continue
        between = [b for b in page.blocks if block.line < b.line < solution.line and b.kind == "code-cell"]
        if any(re.search(r"=\s*\.\.\.", b.text) and ".check(" in b.text for b in between):
            found.append(label)
    return found


@pytest.mark.parametrize("docname", CHAPTERS)
def test_chapter_asks_for_predictions_in_its_body(docname):
    found = body_predictions(PAGES[docname])
    assert len(found) >= 2, (
        f"{docname}: {len(found)} prediction exercise(s) before the final exercise section "
        f"({found}); the reader should predict before at least two of the chapter's reveals"
    )


@pytest.mark.parametrize("docname", DOCNAMES)
def test_every_exercise_has_a_folded_solution(docname):
    page = PAGES[docname]
    solutions = solutions_of(page)
    for block in page.blocks:
        if block.kind == "exercise":
            label = block.options.get("label")
            assert label, f"{docname}:{block.line + 1}: an exercise without a :label:"
            assert label in solutions, f"{docname}: exercise {label} has no solution"
            assert solutions[label].options.get("class") == "dropdown", (
                f"{docname}: the solution of {label} is not folded (:class: dropdown)")


def displays(cell: list[str]) -> bool:
    """Whether a hidden-input cell shows an output: it prints, or ends on an expression (a
    chart, a table); a cell of asserts, assignments and ``;``-ended calls shows nothing."""
    if any("print(" in line or "display(" in line for line in cell):
        return True
    top = [line for line in cell if line.strip() and not line.startswith((" ", "#", ")", "]"))]
    if not top:
        return False
    last = top[-1].rstrip()
    quiet = ("assert", "del ", "import ", "from ", "for ", "if ", "with ", "glue(", "def ",
             "class ", "@", "try", "except", "finally", "else", "elif")
    return not (last.startswith(quiet) or last.endswith((";", ":")) or
                re.match(r"^[\w.,\[\] ]+ ?[-+*/]?= ", last) or ".assert_solution(" in last)


def shown_cells_after_solutions(text: str) -> list[int]:
    """Lines of code cells the reader sees (not ``remove-cell`` / ``remove-output``) that
    follow a solution's end with nothing but hidden cells and blank lines between."""
    lines, found, i = text.split("\n"), [], 0
    while i < len(lines):
        line, end = lines[i], None
        if line.startswith("```{solution-end}"):
            end = i + 1
        elif re.match(r"^(`{3,})\{solution\}", line):
            fence = line[: line.index("{")]
            end = next(k for k in range(i + 1, len(lines)) if lines[k].rstrip() == fence)
        if end is None:
            i += 1
            continue
        j = end + 1
        while j < len(lines):
            if not lines[j].strip():
                j += 1
                continue
            if not lines[j].startswith("```{code-cell}"):
                break
            tags = lines[j + 1] if lines[j + 1].startswith(":tags:") else ""
            k = next(k for k in range(j + 1, len(lines)) if lines[k].startswith("```"))
            hidden = "remove-cell" in tags or "remove-output" in tags
            if not hidden and "remove-input" in tags:  # only its output shows: has it one?
                hidden = not displays(lines[j + 2:k])
            if not hidden:
                found.append(j + 1)
            j = k + 1
        i = j
    return found


@pytest.mark.parametrize("docname", DOCNAMES)
def test_no_shown_cell_right_after_a_solution(docname):
    """A cell shown right below a folded solution puts its output, often the answer, on the
    reader's screen while the solution is still closed (readers reported it: "6 ops" under
    the exercise that asks for the count). The evidence belongs inside the solution; a cell
    that reveals nothing comes after prose."""
    found = shown_cells_after_solutions(chapter_path(docname).read_text(encoding="utf-8"))
    assert not found, (
        f"{docname}: shown cells right after a solution at lines {found}: move the evidence "
        "into the solution (solution-start / solution-end), or put prose before the cell")


# ----- the puzzles appendix ----------------------------------------------------------------------
def puzzle_blocks() -> dict[str, list[Block]]:
    """Each puzzle's exercise and the blocks up to the next puzzle (or the next heading)."""
    page = PAGES["chapters/puzzles"]
    out: dict[str, list[Block]] = {}
    current = None
    for block in page.blocks:
        if block.kind == "exercise" and block.options.get("label", "").startswith("ex-puzzle-"):
            current = block.argument.strip()
            out[current] = [block]
        elif current is not None and block.section == out[current][0].section:
            out[current].append(block)
    return out


def test_the_puzzles_are_all_of_tensor_puzzles():
    assert set(puzzle_blocks()) == TENSOR_PUZZLES


@pytest.mark.parametrize("name", sorted(TENSOR_PUZZLES))
def test_each_puzzle_has_a_loop_spec_an_example_and_a_checker(name):
    blocks = puzzle_blocks().get(name)
    assert blocks, f"no puzzle {name}"
    code = [b.text for b in blocks if b.kind == "code-cell"]
    spec = [c for c in code if re.search(rf"^def {name}_spec\(", c, re.M)]
    assert spec, f"puzzle {name}: no plain-Python spec `def {name}_spec(...)`"
    assert re.search(r"^\s+for ", spec[0], re.M), f"puzzle {name}: its spec has no loop"
    assert re.search(rf"^example\(\s*[\"']{name}[\"']\s*,\s*{name}_spec", spec[0], re.M), (
        f"puzzle {name}: the spec cell does not print its example (example(...))")
    assert any(f"puzzles.check({name})" in c and re.search(r"^\s+\.\.\.", c, re.M) for c in code), (
        f"puzzle {name}: no reader cell with a ... body checked by puzzles.check({name})")


def test_the_checker_demo_uses_no_reader_puzzle():
    page = PAGES["chapters/puzzles"]
    first = min(b.line for b in page.blocks if b.kind == "exercise")
    names = "|".join(sorted(TENSOR_PUZZLES))
    for block in page.blocks:
        if block.kind == "code-cell" and block.line < first:
            hit = re.search(rf"[\"']({names})[\"']|PLANTED|check\(({names})\b", block.text)
            assert not hit, f"the checker demo (line {block.line + 1}) uses a reader's puzzle: {hit.group(0)}"


# ----- the glossary ------------------------------------------------------------------------------
def glossary_terms() -> set[str]:
    page = PAGES.get("chapters/glossary")
    assert page is not None, "_toc.yml lists no chapters/glossary"
    terms: set[str] = set()
    for block in page.blocks:
        if block.kind == "glossary":
            terms |= {line.strip().lower() for line in block.body
                      if line.strip() and not line.startswith((" ", "\t", ":"))}
    return terms


def linked_terms(page: Page) -> set[str]:
    out = set()
    for m in _TERM.finditer(page.prose + "\n" + "\n".join(b.text for b in page.blocks if b.kind != "code-cell")):
        text = m.group(1)
        target = re.search(r"<([^>]+)>\s*$", text)
        out.add((target.group(1) if target else text).strip().lower())
    return out


def test_glossary_has_the_jargon():
    terms = glossary_terms()
    assert len(terms) >= 12, sorted(terms)
    for word in ("primitive", "forwarder", "protocol default", "monomorphized", "sync point", "drain"):
        assert word in terms, f"the glossary lacks {word!r}"


def test_every_term_link_resolves_and_every_term_is_linked():
    terms = glossary_terms()
    used: set[str] = set()
    for name, page in PAGES.items():
        links = linked_terms(page)
        assert links <= terms, f"{name}: {{term}} links to no glossary entry: {sorted(links - terms)}"
        used |= links
    assert terms <= used, f"glossary entries no chapter links: {sorted(terms - used)}"


@pytest.mark.parametrize("docname", CHAPTERS)
def test_chapter_links_the_glossary(docname):
    assert linked_terms(PAGES[docname]), f"{docname}: no {{term}} link to the glossary"


# ----- wording -----------------------------------------------------------------------------------
#: "the seed" as the name of a source text; "the seed of a random stream" or "the seed value"
#: are about random numbers and stay.
_SEED_AS_BOOK = re.compile(r"\bthe seeds?(?:'s)?\b(?!\s+(?:value|of\b|number))", re.IGNORECASE)


@pytest.mark.parametrize("docname", DOCNAMES)
def test_no_page_calls_the_burn_book_the_seed(docname):
    text = chapter_path(docname).read_text(encoding="utf-8")
    hits = [line.strip() for line in text.splitlines() if _SEED_AS_BOOK.search(line)]
    assert not hits, f"{docname}: say \"burn's experiment\" / \"the burn book\": {hits}"


#: The widest code line the site's text column shows without a scrollbar (_static/minidl.css
#: sizes code for 88 columns at 1280 px; the browser check in test_site measures the result).
CODE_COLUMNS = 88


@pytest.mark.parametrize("docname", DOCNAMES)
def test_code_cells_fit_the_text_column(docname):
    page = PAGES[docname]
    long = [
        f"line {block.line + 2 + i}: {len(text)} columns"
        for block in page.blocks
        if block.kind == "code-cell"
        for i, text in enumerate(block.body)
        if len(text) > CODE_COLUMNS
    ]
    assert not long, f"{docname}: code lines wider than {CODE_COLUMNS} columns: {long}"

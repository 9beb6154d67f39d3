"""The built site, opened in a real headless browser, from file:// and over http.

The site is built once per session (``jupyter-book build -W -n --keep-going``, every
chapter executed; the ``book_build`` fixture of tests/conftest.py) into a temporary folder.
Every page listed in _toc.yml is then opened in the Debian chromium, driven by Playwright,
both as a file and from a localhost http server, with every request recorded: only file://, data:, blob: and 127.0.0.1/localhost may be asked for.
Each page must show its title and every code output, no traceback outside cells tagged
``raises-exception``, rendered maths with MathJax fonts that loaded, and no script error.
The intro must also show a flowchart diagram and an exercise solution that is hidden
until clicked.

Three reading checks run on every page (opened from file://, at a 1280 px window):

- every chapter has at least four exercises, each with a solution folded until opened;
- no exercise's answer is visible on load: between an exercise and its solution only the
  checker cell (the one that calls ``.check(``) shows an output, and no answer glued into
  a solution (a number, a tuple, ...) appears in the page's visible text outside solutions;
- no table, code block or output block overflows the text column (every fold opened
  first, so what a reader unfolds is measured too).

A failure names the page and quotes the offending block.
"""

from __future__ import annotations

import contextlib
import functools
import http.server
import json
import re
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from urllib.parse import urlsplit

import jupytext
import nbformat
import pytest
from booktools import chapter_path, strip_ansi, toc_docnames
from playwright.sync_api import TimeoutError as PlaywrightTimeout
from playwright.sync_api import expect, sync_playwright

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-quic",
]
LOCAL_HOSTS = {"127.0.0.1", "localhost"}
LOCAL_SCHEMES = {"file", "data", "blob", "about"}
DOCNAMES = toc_docnames()
REMOVED = {"remove-output", "remove-cell"}


def _tail(text: str, n: int = 80) -> str:
    return "\n".join(text.splitlines()[-n:])


#: How long a browser test waits for what it asserts: generous, because the case to design
#: for is a first run on a cold, busy machine (every wait ends as soon as its condition holds).
WAIT_MS = 60_000


def html_of(locator: object, limit: int = 4000) -> Callable[[], str]:
    """The state to show when a wait on ``locator`` gives up: its first element's HTML, or
    the page's body when nothing matches yet."""

    def state() -> str:
        if locator.count():
            return locator.first.evaluate("e => e.outerHTML")[:limit]
        return "(nothing matches yet) page body: " + locator.page.evaluate(
            "() => document.body.innerHTML")[:limit]

    return state


@contextlib.contextmanager
def showing(what: str, state: Callable[[], str]) -> Iterator[None]:
    """Wait (a Playwright ``expect`` or ``wait_for*`` inside) for what is asserted; if it never
    comes, fail saying ``what`` and the page's state at that moment (``state()``)."""
    try:
        yield
    except (AssertionError, PlaywrightTimeout) as err:
        raise AssertionError(f"{what}: {err}\n--- state when the wait gave up:\n{state()}") from None


@pytest.fixture(scope="module")
def built(book_build) -> Path:
    """The session's book build (tests/conftest.py); the folder that holds ``_build/html``."""
    assert book_build.returncode == 0, f"jupyter-book build failed:\n{_tail(book_build.log)}"
    assert "build succeeded" in book_build.log
    return book_build.out


@pytest.fixture(scope="module")
def html(built: Path) -> Path:
    return built / "_build" / "html"


@pytest.fixture(scope="module")
def server(html: Path) -> Iterator[str]:
    """The built site over http on 127.0.0.1 (a free port)."""

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            pass

    handler = functools.partial(Quiet, directory=str(html))
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    if not Path(CHROMIUM).is_file():
        pytest.fail(f"{CHROMIUM} is missing: `make test` installs it (apt-get install chromium)")

    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield b
        b.close()


class Visit:
    """One page in a fresh browser context, with every request and script error recorded."""

    def __init__(self, browser: object, url: str) -> None:
        self.context = browser.new_context(viewport={"width": 1280, "height": 900})
        self.requests: list[str] = []
        self.external: list[str] = []
        self.failed: list[str] = []
        self.errors: list[str] = []
        self.context.route("**/*", self._route)
        self.page = self.context.new_page()
        self.page.on("request", lambda r: self.requests.append(r.url))
        self.page.on("requestfailed", lambda r: self.failed.append(f"{r.url} {r.failure}"))
        self.page.on("pageerror", lambda e: self.errors.append(str(e)))
        self.page.on("websocket", lambda ws: self.external.append(ws.url))
        # a page of a thousand cells on a machine busy with the other test worker can take
        # longer than Playwright's default 30 s to load and settle
        self.page.goto(url, wait_until="load", timeout=WAIT_MS)
        self.page.wait_for_load_state("networkidle", timeout=WAIT_MS)
        if self.page.query_selector(".math"):  # wait until MathJax has typeset the page
            try:
                self.page.wait_for_function("() => window.MathJax?.startup?.promise", timeout=WAIT_MS)
            except PlaywrightTimeout:
                self.errors.append("MathJax never started (was its script blocked?)")
            else:
                self.page.evaluate("() => MathJax.startup.promise.then(() => true)")
                self.page.evaluate("() => document.fonts.ready.then(() => true)")

    def _route(self, route: object) -> None:
        url = route.request.url
        parts = urlsplit(url)
        if parts.scheme in LOCAL_SCHEMES or parts.hostname in LOCAL_HOSTS:
            route.continue_()
        else:
            self.external.append(url)
            route.abort()

    def offsite(self) -> list[str]:
        """Every request that would have left the machine."""
        seen = [
            u
            for u in self.requests
            if urlsplit(u).scheme not in LOCAL_SCHEMES and urlsplit(u).hostname not in LOCAL_HOSTS
        ]
        return sorted(set(seen + self.external))

    def close(self) -> None:
        self.context.close()


def page_url(kind: str, docname: str, html: Path, server: str) -> str:
    if kind == "file":
        return (html / f"{docname}.html").as_uri()
    return f"{server}/{docname}.html"


def expected_outputs(built: Path, docname: str) -> int:
    """How many code cells of the executed chapter show an output on the page."""
    nb = nbformat.read(built / "_build" / "jupyter_execute" / f"{docname}.ipynb", as_version=4)
    count = 0
    for cell in nb.cells:
        if cell.cell_type != "code" or REMOVED & set(cell.metadata.get("tags", [])):
            continue
        shown = [o for o in cell.get("outputs", []) if "scrapbook" not in o.get("metadata", {})]
        count += bool(shown)
    return count


CHECK_PAGE = """() => {
  const article = document.querySelector('article') || document.body;
  const h1 = article.querySelector('h1');
  const title = h1 ? h1.innerText.replace(/[#¶]\\s*$/, '').trim() : '';
  const outputs = [...article.querySelectorAll('.cell .cell_output')];
  const tracebacks = [...article.querySelectorAll('.cell:not(.tag_raises-exception) .cell_output')]
    .filter(o => o.querySelector('.traceback, .output.error') ||
                 o.textContent.includes('Traceback (most recent call last)'))
    .map(o => o.textContent.slice(0, 300));
  const maths = [...article.querySelectorAll('span.math, div.math')];
  const rawMath = maths.filter(m => !m.querySelector('mjx-container')).map(m => m.textContent);
  const fonts = [...document.fonts].filter(f => f.family.startsWith('MJX'));
  return {
    title, docTitle: document.title,
    outputs: outputs.length,
    emptyOutputs: outputs.filter(o => !o.textContent.trim() && !o.querySelector('img, svg')).length,
    tracebacks,
    maths: maths.length, rawMath,
    mjx: article.querySelectorAll('mjx-container').length,
    fontsLoaded: fonts.filter(f => f.status === 'loaded').map(f => f.family),
    fontErrors: fonts.filter(f => f.status === 'error').map(f => f.family),
    svgs: article.querySelectorAll('svg.minidl-flowchart').length,
  };
}"""


#: What a rendered page settles into: every code output there and every formula typeset.
SETTLED = f"""(outputs) => {{
  const info = ({CHECK_PAGE})();
  return info.outputs >= outputs && info.rawMath.length === 0 &&
         (info.maths === 0 || info.fontsLoaded.length > 0);
}}"""


def settled_info(page: object, outputs: int = 0) -> dict:
    """:data:`CHECK_PAGE`'s report once the page shows ``outputs`` outputs and its maths is
    typeset, or after :data:`WAIT_MS` (the assertions on the report then say what is wrong)."""
    with contextlib.suppress(PlaywrightTimeout):
        page.wait_for_function(SETTLED, arg=outputs, timeout=WAIT_MS)
    return page.evaluate(CHECK_PAGE)


@pytest.mark.parametrize("kind", ["file", "http"])
@pytest.mark.parametrize("docname", DOCNAMES)
def test_page_renders_offline(kind, docname, browser, built, html, server):
    visit = Visit(browser, page_url(kind, docname, html, server))
    try:
        assert visit.offsite() == [], "a request left the machine"
        info = settled_info(visit.page, expected_outputs(built, docname))
        assert info["title"], "the page shows no title"
        assert info["docTitle"].startswith(info["title"])
        assert info["outputs"] == expected_outputs(built, docname), f"code outputs missing: {info}"
        assert info["emptyOutputs"] == 0, info
        assert info["tracebacks"] == [], "a cell not tagged raises-exception shows a traceback"
        assert info["rawMath"] == [], f"maths left untypeset: {info}"
        if info["maths"]:
            assert info["mjx"] >= info["maths"], info
            assert info["fontsLoaded"] and not info["fontErrors"], f"MathJax fonts did not load: {info}"
        assert visit.failed == [], "a local request failed (missing file?)"
        assert visit.errors == [], "a script raised"
    finally:
        visit.close()


@pytest.mark.timeout(3600)
@pytest.mark.parametrize("docname", DOCNAMES)
def test_chapter_executes(docname: str, book_build):
    report = book_build.error_report(docname)
    if report.is_file():
        tail = "\n".join(report.read_text(encoding="utf-8").splitlines()[-60:])
        pytest.fail(f"{docname}: a cell failed when the book was built\n{strip_ansi(tail)}", False)
    executed = book_build.executed(docname)
    assert executed.is_file(), f"{docname}: the build wrote no executed notebook"
    nb = nbformat.read(executed, as_version=4)
    code = [cell for cell in nb.cells if cell.cell_type == "code"]
    source = [cell for cell in jupytext.read(chapter_path(docname)).cells if cell.cell_type == "code"]
    assert len(code) == len(source), f"{docname}: the executed notebook has other code cells"
    skipped = [i for i, cell in enumerate(code) if cell.get("execution_count") is None]
    assert not skipped, f"{docname}: code cells never executed (by index): {skipped}"
    errors = [
        out
        for cell in code
        if "raises-exception" not in cell.metadata.get("tags", [])
        for out in cell.get("outputs", [])
        if out.get("output_type") == "error"
    ]
    assert not errors, f"{docname}: error outputs: {[e.get('ename') for e in errors]}"


def first_solution_answer(built: Path, docname: str) -> str:
    """The value glued into the chapter's first solution, as the build measured it."""
    source = chapter_path(docname).read_text(encoding="utf-8")
    start = re.search(r"```\{solution(?:-start)?\}", source)  # a plain or a gated solution
    block = source[start.start():]
    end = block.index("```{solution-end}") if "-start}" in start.group(0) else (
        block.index("\n```", 3))
    name = re.search(r"\{glue:text\}`([\w]+)", block[:end]).group(1)
    glued = json.loads((built / "_build" / "jupyter_execute" / f"{docname}.glue.json").read_text())
    return glued[name]["data"]["text/plain"].strip("'\"")


@pytest.mark.parametrize("kind", ["file", "http"])
def test_intro_has_maths_a_diagram_and_a_hidden_solution(kind, browser, built, html, server):
    answer = first_solution_answer(built, "chapters/intro")
    visit = Visit(browser, page_url(kind, "chapters/intro", html, server))
    page = visit.page
    try:
        assert visit.offsite() == []
        info = settled_info(page)
        assert info["maths"] >= 2 and info["mjx"] >= info["maths"], info
        charts = page.locator("svg.minidl-flowchart")
        with showing("no flowchart diagram on the intro", html_of(page.locator("article"))):
            expect(charts.first).to_be_visible(timeout=WAIT_MS)
        chart = charts.first
        box = chart.bounding_box()
        assert box and box["width"] > 200 and box["height"] > 200, f"{box}: {html_of(chart)()[:600]}"
        with showing("the flowchart has not its seven boxes", html_of(chart)):
            expect(chart.locator("g.node")).to_have_count(7, timeout=WAIT_MS)
        assert "minidl.dispatch" in chart.text_content()

        solution = page.locator(".solution.dropdown").first
        body = solution.locator("#solution-content, section, p:not(.admonition-title)").first
        assert not body.is_visible(), "the solution is shown before it is opened"
        solution.locator("button.toggle-button").first.click()
        with showing("the solution does not open", html_of(solution)):
            expect(body).to_be_visible(timeout=WAIT_MS)
            expect(body).to_contain_text(answer, timeout=WAIT_MS)  # the glued, live answer
        assert visit.errors == []
    finally:
        visit.close()


def test_every_chapter_has_a_page_and_index_redirects(browser, html):
    assert (html / "index.html").is_file()
    for docname in DOCNAMES:
        assert (html / f"{docname}.html").is_file(), f"no page for {docname}"
    visit = Visit(browser, (html / "index.html").as_uri())
    try:
        with showing("index.html does not redirect to the first chapter",
                     lambda: f"at {visit.page.url}: {visit.page.content()[:2000]}"):
            visit.page.wait_for_url(f"**/{DOCNAMES[0]}.html", timeout=WAIT_MS)
    finally:
        visit.close()


def test_no_cdn_in_the_built_html(html):
    """No page loads a script, stylesheet, font or image from the network."""
    import re

    tag = re.compile(r"<(script|link|img|iframe|source)\b[^>]*>", re.I)
    remote = re.compile(r"""\b(src|href)\s*=\s*["'](https?:)?//""", re.I)
    bad = []
    for page in html.rglob("*.html"):
        for m in tag.finditer(page.read_text(encoding="utf-8", errors="replace")):
            if remote.search(m.group(0)) and not m.group(0).lower().startswith("<a"):
                bad.append(f"{page.relative_to(html)}: {m.group(0)[:120]}")
    assert bad == []


MIN_EXERCISES = 4

#: Every exercise, its solution, and whether the solution's body is hidden on load.
EXERCISES = """() => {
  const article = document.querySelector('article') || document.body;
  const shown = el => el.getClientRects().length > 0 &&
    el.checkVisibility({checkOpacity: true, checkVisibilityCSS: true});
  const solutions = [...article.querySelectorAll('div.solution')];
  return [...article.querySelectorAll('div.exercise')].map(ex => {
    const title = (ex.querySelector('.admonition-title') || ex).textContent.trim();
    const sol = solutions.find(s => s.querySelector(`a[href="#${CSS.escape(ex.id)}"]`));
    let folded = false;
    if (sol) {
      const body = [...sol.children].filter(c => !c.classList.contains('admonition-title'));
      folded = body.length > 0 && body.every(c => !shown(c));
    }
    return {id: ex.id, title, solution: sol ? sol.id : null, folded};
  });
}"""

#: Answers in plain view: outputs between an exercise and its solution other than the
#: checker's, and glued solution values found in the visible text outside solutions.
ANSWER_LEAKS = r"""() => {
  const article = document.querySelector('article') || document.body;
  const shown = el => el.getClientRects().length > 0 &&
    el.checkVisibility({checkOpacity: true, checkVisibilityCSS: true});
  const before = (a, b) => !!(a.compareDocumentPosition(b) & Node.DOCUMENT_POSITION_FOLLOWING);
  const solutions = [...article.querySelectorAll('div.solution')];
  const cells = [...article.querySelectorAll('div.cell')];
  const leaks = [];
  for (const ex of article.querySelectorAll('div.exercise')) {
    const sol = solutions.find(s => s.querySelector(`a[href="#${CSS.escape(ex.id)}"]`));
    if (!sol) continue;
    for (const cell of cells) {
      if (!(before(ex, cell) && before(cell, sol))) continue;
      const input = cell.querySelector('.cell_input');
      if (input && input.textContent.includes('.check(')) continue;  // the checker
      // a puzzle's loop spec and its printed example are the question, not its answer
      if (ex.id.startsWith('ex-puzzle-') && input && input.textContent.includes('example(')) continue;
      for (const out of cell.querySelectorAll('.cell_output')) {
        if (shown(out) && (out.innerText.trim() || out.querySelector('img, svg'))) {
          leaks.push({exercise: ex.id, kind: 'output shown before the solution',
                      text: out.innerText.trim().slice(0, 160) || '(an image)'});
        }
      }
    }
  }
  // the visible text of the page, solutions left out
  const parts = [];
  const walker = document.createTreeWalker(article, NodeFilter.SHOW_TEXT);
  for (let n = walker.nextNode(); n; n = walker.nextNode()) {
    const el = n.parentElement;  // prose and outputs; a cell's code is not an answer
    if (!el || el.closest('div.solution, .cell_input') || !shown(el)) continue;
    parts.push(n.textContent);
  }
  const visible = parts.join(' ').replace(/\s+/g, ' ');
  const seen = new Set();
  for (const sol of solutions) {
    const link = sol.querySelector('a[href^="#"]');
    const exercise = link ? link.getAttribute('href').slice(1) : sol.id;
    // the first glued value is the answer; later ones are the working, measured numbers
    // that may match an unrelated table cell by chance when short
    [...sol.querySelectorAll('.pasted-text')].forEach((span, i) => {
      const answer = span.textContent.trim();
      if (answer.length < (i ? 5 : 3) || !/\d/.test(answer)) return;  // 0, 1, True: too common
      if (seen.has(exercise + answer)) return;
      seen.add(exercise + answer);
      const esc = answer.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
      const m = new RegExp(`(?<![\\w.])${esc}(?![\\w]|\\.\\d)`).exec(visible);
      if (m) {
        leaks.push({exercise, kind: `answer ${answer} visible`,
                    text: visible.slice(Math.max(0, m.index - 70), m.index + answer.length + 70)});
      }
    });
  }
  return leaks;
}"""

#: Tables, code and output blocks wider than the text column (folds opened first).
OVERFLOWS = """() => {
  const article = document.querySelector('article') || document.body;
  for (const d of article.querySelectorAll('details')) d.open = true;
  for (const b of article.querySelectorAll('button.toggle-button[aria-expanded="false"]')) b.click();
  const column = article.getBoundingClientRect();
  const scrolls = el => {
    const x = getComputedStyle(el).overflowX;
    return ['auto', 'scroll', 'hidden', 'clip'].includes(x) && el.scrollWidth > el.clientWidth + 1;
  };
  const out = [];
  for (const el of article.querySelectorAll('table, pre, .cell_output .output')) {
    if (!el.getClientRects().length) continue;
    const box = el.getBoundingClientRect();
    let why = '';
    if (box.right > column.right + 1 || el.scrollWidth > column.width + 1) {
      why = `${Math.round(el.scrollWidth)} px wide, the column ${Math.round(column.width)} px`;
    } else {
      for (let a = el; a && a !== article; a = a.parentElement) {
        if (scrolls(a)) {
          why = `scrolls: ${a.scrollWidth} px of content in ${a.clientWidth} px`;
          break;
        }
      }
    }
    if (why) {
      const kind = el.tagName === 'TABLE' ? 'table' : el.closest('.cell_output') ? 'output' : 'code';
      const first = (el.innerText || '').trim().split('\\n')[0].slice(0, 120);
      out.push({kind, why, text: first});
    }
  }
  return out;
}"""


def _listing(docname: str, rows: list[dict], keys: tuple[str, ...]) -> str:
    lines = [f"{docname}.html:"]
    for row in rows:
        lines.append("  - " + " | ".join(str(row[k]) for k in keys))
    return "\n".join(lines)


_READINGS: dict[str, dict] = {}


def reading(browser, html: Path, docname: str) -> dict:
    """The three reading checks of a page, from one visit (file://), cached per page.

    Exercises and answer leaks are read first, as the page loads; the overflow check opens
    every fold, so it runs last.
    """
    if docname not in _READINGS:
        visit = Visit(browser, (html / f"{docname}.html").as_uri())
        try:
            _READINGS[docname] = {
                "exercises": exercise_problems(visit.page),
                "leaks": visit.page.evaluate(ANSWER_LEAKS),
                "wide": visit.page.evaluate(OVERFLOWS),
            }
        finally:
            visit.close()
    return _READINGS[docname]


def exercise_problems(page) -> list[str]:
    """What is wrong with a page's exercises: too few, a solution missing or shown."""
    found = page.evaluate(EXERCISES)
    problems = []
    if len(found) < MIN_EXERCISES:
        problems.append(f"{len(found)} exercises, at least {MIN_EXERCISES} wanted")
    for ex in found:
        if ex["solution"] is None:
            problems.append(f"exercise {ex['id']} ({ex['title']}) has no solution")
        elif not ex["folded"]:
            problems.append(f"exercise {ex['id']} ({ex['title']}): solution shown on load")
    return problems


#: Reference pages, which teach nothing of their own and ask nothing.
REFERENCE_PAGES = {"chapters/glossary"}


@pytest.mark.parametrize("docname", [d for d in DOCNAMES if d not in REFERENCE_PAGES])
def test_every_chapter_has_four_exercises_with_folded_solutions(docname, browser, html):
    problems = reading(browser, html, docname)["exercises"]
    assert problems == [], f"{docname}.html:\n  - " + "\n  - ".join(problems)


@pytest.mark.parametrize("docname", DOCNAMES)
def test_no_exercise_answer_is_visible_on_load(docname, browser, html):
    leaks = reading(browser, html, docname)["leaks"]
    assert leaks == [], _listing(docname, leaks, ("exercise", "kind", "text"))


@pytest.mark.parametrize("docname", DOCNAMES)
def test_no_block_overflows_the_text_column(docname, browser, html):
    wide = reading(browser, html, docname)["wide"]
    assert wide == [], _listing(docname, wide, ("kind", "why", "text"))


# ---- The book's budget: what a reader can finish (measured as the reader panel measures) ----

#: A chapter a reader finishes in about 30 minutes, and a book of about fifteen such hours' worth
#: less: page text as tests/pagestats.py extracts it (prose, code, outputs, folded boxes too).
CHAPTER_KB, BOOK_KB, FIRST_CELL_LINES = 45.0, 500.0, 15

#: The order a newcomer follows: the tour, the internals from the tensor up to the user layer,
#: the end-to-end run, then the speed part, then the appendices.
BOOK_ORDER = [
    "chapters/intro", "chapters/tour", "chapters/tensors_and_backends", "chapters/dispatch",
    "chapters/autodiff", "chapters/modules_params_config", "chapters/nn_modules",
    "chapters/conv_backward",
    "chapters/train_and_inference", "chapters/store", "chapters/training", "chapters/fusion",
    "chapters/performance", "chapters/capture", "chapters/puzzles", "chapters/glossary",
]


@pytest.mark.parametrize("docname", DOCNAMES)
def test_chapter_keeps_the_budget(docname, html):
    """≤ 45 KB of page text, no shown assert or glue( line (the checks run in hidden cells
    after the cell the reader sees), the first shown code cell ≤ 15 lines."""
    import pagestats

    s = pagestats.stats(html / f"{docname}.html")
    problems = []
    if s["kb"] > CHAPTER_KB:
        problems.append(f"{s['kb']:.1f} KB of page text (budget {CHAPTER_KB:g})")
    if s["plumbing"]:
        problems.append(f"{s['plumbing']} shown assert/glue( lines")
    if s["first_cell"] > FIRST_CELL_LINES:
        problems.append(f"first shown code cell of {s['first_cell']} lines")
    assert problems == [], f"{docname}.html: " + "; ".join(problems)


def test_book_keeps_the_budget(html):
    import pagestats

    total = sum(pagestats.stats(html / f"{d}.html")["kb"] for d in DOCNAMES)
    assert total <= BOOK_KB, f"{total:.0f} KB of page text in the book (budget {BOOK_KB:g})"


def test_toc_follows_the_newcomers_order():
    assert DOCNAMES == BOOK_ORDER


def test_intro_map_links_every_chapter(html):
    """The intro's map of the parts names and links every other page of the book."""
    page = (html / "chapters" / "intro.html").read_text(encoding="utf-8")
    text = page[page.index("<article") : page.index("</article>")]  # not the sidebar's links
    missing = [
        d for d in DOCNAMES[1:] if not re.search(rf'href="{Path(d).name}\.html[#"]', text)
    ]
    assert missing == [], f"the intro links no page of {missing}"

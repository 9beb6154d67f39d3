"""Live code in the rendered page: ``make serve``'s two servers, driven in headless Chromium.

One short chapter (the intro: a diagram, maths and an exercise, a few seconds to execute) is
built into a temporary book, next to a stray ``intro.ipynb`` that
must not break the build.
``make serve`` then serves it on free ports with its Jupyter server, and Playwright presses
"Live code": a cell's build-time output is replaced by the kernel's, the exercise's
prediction is edited to a wrong answer (✗ and the hint) and to the right one (✓), and no
request leaves 127.0.0.1. Ctrl-C (SIGINT to make's process group, as a terminal sends it)
must stop the site, the Jupyter server and its kernel. From ``file://`` and from a server
without a kernel, the control must say to run ``make serve``.

The reader's work: an edited cell comes back after a reload and runs, "reset" and "Reset this
page" put back the book's text, an edit made on an older build of a cell is kept and marked,
an exercise's ✓ shows in the intro's progress list and survives a reload, and maths in a live output
is typeset by the page's MathJax. Every wait waits for the condition it then asserts (a cold
first run is slow), and says what the page showed when it timed out.

Cost: one build of the intro (~15 s warm, ~75 s cold), a Jupyter server, a few kernels, a browser.
"""

from __future__ import annotations

import functools
import http.server
import json
import os
import re
import shutil
import subprocess
import sys
import threading
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest
from booktools import ROOT, strip_ansi
from livetools import (
    SOURCES_JS,
    STOP_TIMEOUT,
    Served,
    cell_ids,
    cell_with,
    edit,
    is_open,
    offsite,
    output_of,
    run_in,
    sessions,
    source_of,
    start_live,
    state,
    stored_work,
    until,
    visible,
    wait_for,
)
from playwright.sync_api import TimeoutError as PlaywrightTimeout
from test_site import Visit, browser  # noqa: F401 (fixture)

sys.path.insert(0, str(ROOT / "book_ext"))
from live_cells import read_cells  # noqa: E402

CHAPTER = "chapters/intro"
BUILD_TIMEOUT = 600
RUN_TIMEOUT = 60  # one cell (and the cells above it) run live
_offsite = offsite  # tests/test_lab.py imports it from here


def _tail(text: str, n: int = 60) -> str:
    return "\n".join(text.splitlines()[-n:])


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The intro built alone with the glossary (the project's _config.yml and book_ext); its _build/html."""
    src = tmp_path_factory.mktemp("livebook")
    shutil.copy2(ROOT / "_config.yml", src / "_config.yml")
    (src / "book_ext").symlink_to(ROOT / "book_ext")  # so thebe is vendored once, in ROOT
    (src / "chapters").mkdir()
    shutil.copy2(ROOT / f"{CHAPTER}.md", src / f"{CHAPTER}.md")
    # the glossary comes along: the intro's {term} links must resolve (an unknown term warns)
    shutil.copy2(ROOT / "chapters" / "glossary.md", src / "chapters" / "glossary.md")
    (src / "_toc.yml").write_text(
        f"format: jb-book\nroot: {CHAPTER}\nchapters:\n  - file: chapters/glossary\n", encoding="utf-8")
    stray = {"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    (src / f"{CHAPTER}.ipynb").write_text(json.dumps(stray), encoding="utf-8")

    jb = Path(sys.executable).with_name("jupyter-book")
    env = dict(os.environ)
    env.setdefault("NUMBA_CACHE_DIR", str(ROOT / ".numba_cache"))
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT)] + [p for p in [env.get("PYTHONPATH")] if p])
    env["PATH"] = f"{jb.parent}{os.pathsep}{env.get('PATH', '')}"
    # not -W: links from the intro (and the glossary's {doc} and {ref} links) to chapters this small
    # book lacks are the only warnings allowed (a stray notebook's "multiple files found" is not)
    cmd = [str(jb), "build", str(src), "-n", "--keep-going"]
    proc = subprocess.run(
        cmd, cwd=src, env=env, capture_output=True, text=True, timeout=BUILD_TIMEOUT
    )
    log = strip_ansi(proc.stdout + proc.stderr)
    assert proc.returncode == 0, f"jupyter-book build failed:\n{_tail(log)}"
    warnings = [w for w in log.splitlines() if "WARNING:" in w and "[myst.xref_missing]" not in w
                and not (("unknown document" in w or "undefined label" in w)
                         and ("glossary.md" in w or "intro.md" in w))]
    assert warnings == [], "\n".join(warnings)
    html = src / "_build" / "html"
    assert (html / "_live" / "thebe" / "index.js").is_file(), "thebe was not vendored"
    assert not list((html / "_static").rglob("thebe*.js")), "thebe must stay out of _static/"
    return html


@pytest.fixture(scope="module")
def served(site: Path) -> Iterator[Served]:
    s = Served(site)
    try:
        assert s.url and s.jupyter, f"make serve printed no address:\n{s.output()}"
        assert len(re.findall(r"\bhttps?://", s.output())) == 1, "not one address to open"
        yield s
    finally:
        if s.proc.poll() is None:
            s.kill()


PLOT_AND_TABLE = (
    "import matplotlib.pyplot as plt\n"
    "from IPython.display import HTML, display\n"
    "display(HTML('<table class=\"live-check\"><tr><td>live</td></tr></table>'))\n"
    "plt.plot([0, 1], [1, 0])\n"
    "plt.show()"
)


def test_live_code_runs_in_the_page(browser, served):  # noqa: F811
    visit = Visit(browser, f"{served.url}/{CHAPTER}.html")
    page = visit.page
    try:
        button = page.locator(".minidl-live-button")
        assert button.is_visible(), "no Live code control on the page"
        # the build-time outputs, marked so their replacement can be seen
        built = page.evaluate(
            """() => [...document.querySelectorAll('div.cell > .cell_output')].map((o, i) => {
                 o.firstElementChild && (o.firstElementChild.dataset.buildTime = String(i));
                 return o.textContent.trim(); })"""
        )
        assert any("Write your prediction first" in t for t in built)

        start_live(page)
        assert page.locator(".thebe-cell .CodeMirror").count() >= 4, "cells did not become editable"

        # the diagram cell: run it; its SVG now comes from the kernel
        chart = cell_with(page, "layer_map = package_map(")
        chart.locator("button.thebe-run-button").click()
        out = output_of(chart)
        visible(
            page,
            out.locator(".jp-OutputArea svg.minidl-flowchart"),
            what="the live diagram",
            seconds=RUN_TIMEOUT,
        )
        try:  # the live output replaces the build-time one once the run has finished
            out.locator("[data-build-time]").first.wait_for(state="detached", timeout=RUN_TIMEOUT * 1000)
        except PlaywrightTimeout:
            raise AssertionError(f"the build-time output stayed\n{state(page, out)}") from None

        # the exercise: wrong prediction -> ✗ and the hint; right one -> ✓
        cell = cell_with(page, PLAIN_CHECK)
        result = output_of(cell)
        edit(page, cell, 'prediction = "Flex.float_matmul"\nex_plain.check(prediction);')
        page.keyboard.press("Shift+Enter")
        visible(
            page,
            result.locator(".jp-OutputArea", has_text="✗"),
            what="✗ for a wrong prediction",
            seconds=RUN_TIMEOUT,
        )
        text = result.inner_text()
        assert "Not quite" in text and "Hint:" in text and "plain device" in text, text
        assert "Write your prediction first" not in text

        edit(page, cell, RIGHT_PLAIN)
        page.keyboard.press("Shift+Enter")
        visible(
            page,
            result.locator(".jp-OutputArea", has_text="✓"),
            what="✓ for the right prediction",
            seconds=RUN_TIMEOUT,
        )
        assert "Right" in result.inner_text() and "Hint" not in result.inner_text()

        # any cell can be rewritten: an HTML table and a matplotlib image render in place
        last = cell_with(page, MATHS_CELL)
        edit(page, last, PLOT_AND_TABLE)
        page.keyboard.press("Shift+Enter")
        out = output_of(last)
        visible(
            page,
            out.locator(".jp-OutputArea table.live-check"),
            what="a live HTML table",
            seconds=RUN_TIMEOUT,
        )
        visible(
            page,
            out.locator(".jp-OutputArea img[src^='data:image/png']"),
            what="a live matplotlib image",
            seconds=RUN_TIMEOUT,
        )

        assert offsite(visit) == [], "a request left 127.0.0.1"
        kernel_ws = [u for u in visit.external if u.startswith("ws://127.0.0.1")]
        assert kernel_ws, "no kernel websocket was opened"
        assert visit.errors == [], "a script raised"

        # leaving the page shuts its kernel down
        page.goto(f"{served.url}/", wait_until="load")
        assert wait_for(lambda: sessions(served) == [], STOP_TIMEOUT), (
            f"the page's kernel kept running: {sessions(served)}"
        )
    finally:
        visit.close()


PLAIN_CHECK = "ex_plain.check(prediction)"
MATHS_CELL = "ex_names = Exercise("  # the checker demo of the intro: rewritten to show maths
RIGHT_PLAIN = 'prediction = "minidl.autodiff"\nex_plain.check(prediction);'
MATHS = (  # a displayed and a glued formula: text/latex, typeset at build time as display maths
    "from IPython.display import Math, display\n"
    "from myst_nb import glue\n"
    "display(Math(r'a = \\frac{1}{\\sqrt{\\mathrm{fan_{in}}}}'))\n"
    "glue('live_a', Math(r'a = \\tfrac{1}{16}'))"
)


def test_the_readers_work_survives_a_reload(browser, served):  # noqa: F811
    """Edits come back and run, reset puts the book's text back, an edit of an older build is
    marked, the progress list shows a ✓ after a right answer (and after a reload), maths in
    a live output is typeset by the page's MathJax, and nothing leaves 127.0.0.1."""
    visit = Visit(browser, f"{served.url}/{CHAPTER}.html")
    page = visit.page
    try:
        start_live(page)
        plain_cell = cell_with(page, PLAIN_CHECK)
        built_plain = source_of(plain_cell)
        edit(page, plain_cell, RIGHT_PLAIN)
        page.keyboard.press("Shift+Enter")
        visible(
            page,
            output_of(plain_cell).locator(".jp-OutputArea", has_text="✓"),
            what="✓ for the right prediction",
            seconds=RUN_TIMEOUT,
        )
        # the intro's progress list takes the verdict at once (no reload)
        visible(
            page,
            page.locator(".minidl-progress-item[data-label=ex-intro-plain][data-verdict=right]"),
            what="✓ in the progress list as soon as the check printed it",
            seconds=10,
            show=".minidl-progress",
        )

        maths = cell_with(page, MATHS_CELL)
        built_maths = source_of(maths)
        edit(page, maths, MATHS)
        page.keyboard.press("Shift+Enter")
        # typeset by the page's MathJax 3 (CHTML), as the built formulas are
        out = output_of(maths)
        typeset = out.locator(".jp-RenderedLatex mjx-container[jax=CHTML][display=true]")
        until(
            page,
            "(el) => el.querySelectorAll('.jp-RenderedLatex mjx-container[jax=CHTML]').length == 2",
            out.element_handle(),
            what="both live formulas typeset by the page's MathJax",
            seconds=RUN_TIMEOUT,
            show=out,
        )
        assert typeset.count() == 2, state(page, out)
        assert "\\frac" not in out.inner_text(), out.inner_html()[:2000]
        assert out.locator("mjx-container mjx-mfrac").count() == 2  # fractions, not text

        ids = cell_ids(page)
        saved = stored_work(page, f"{CHAPTER}.md")["edits"]
        edited = {v["source"] for v in saved.values()}
        assert edited == {RIGHT_PLAIN, MATHS}, saved
        assert set(saved) <= set(ids), (saved.keys(), ids)
        assert (
            stored_work(page, f"{CHAPTER}.md")["verdicts"]["ex-intro-plain"]["verdict"] == "right"
        )
        assert "minidl.autodiff" not in json.dumps(stored_work(page, f"{CHAPTER}.md")["verdicts"]), (
            "an answer was stored"
        )

        # a reload: before Live code the page says what it keeps; then the edit is back, runs
        page.reload(wait_until="load")
        visible(
            page,
            page.locator(".minidl-live-status", has_text="2 cells you edited"),
            what="the saved edits announced",
            seconds=15,
        )
        start_live(page)
        plain_cell = cell_with(page, PLAIN_CHECK)
        assert source_of(plain_cell) == RIGHT_PLAIN
        visible(
            page,
            page.locator(".minidl-live-status", has_text="2 of your edited cells"),
            what="the restored edits counted",
            seconds=5,
        )
        run_in(page, plain_cell)
        visible(
            page,
            output_of(plain_cell).locator(".jp-OutputArea", has_text="✓ Right"),
            what="the restored edit runs",
            seconds=RUN_TIMEOUT,
            show=output_of(plain_cell),
        )

        # reset this cell: the book's text, and the saved edit is gone
        plain_cell.locator(".minidl-live-reset-cell").click()
        until(
            page,
            "(src) => (" + SOURCES_JS + ")().includes(src)",
            built_plain,
            what="the cell's built text back",
            seconds=5,
            show=".thebe-cell .CodeMirror",
        )
        assert source_of(plain_cell) == built_plain
        assert {v["source"] for v in stored_work(page, f"{CHAPTER}.md")["edits"].values()} == {
            MATHS
        }

        # a rebuilt book whose cell changed: the saved edit was made on another text (the
        # digest an older build wrote); it comes back marked, the new text one click away
        page.evaluate(
            """(path) => { const k = 'minidl-live/v1/' + path;
                 const d = JSON.parse(localStorage.getItem(k));
                 for (const e of Object.values(d.edits)) e.built = 'an-older-build';
                 localStorage.setItem(k, JSON.stringify(d)); }""",
            f"{CHAPTER}.md",
        )
        page.reload(wait_until="load")
        start_live(page)
        maths = cell_with(page, "display(Math(")
        assert source_of(maths) == MATHS
        marked = page.locator(".cell[data-stale=true] .minidl-live-stale")
        visible(page, marked, what="the changed cell's edit marked", seconds=5)
        assert marked.count() == 1, state(page, ".minidl-live-stale")
        marked.locator(".minidl-live-show-new").click()
        new_text = marked.locator(".minidl-live-new-text")
        visible(page, new_text, what="the book's new text shown", seconds=5, show=".cell")
        assert new_text.evaluate("e => e.textContent") == built_maths
        assert source_of(maths) == MATHS, "showing the new text must not drop the edit"
        marked.locator(".minidl-live-keep").click()
        assert page.locator(".minidl-live-stale").count() == 0
        hashes = page.evaluate(
            "() => JSON.parse(document.getElementById('minidl-live-config').textContent)"
            ".cells.map(c => c.hash)"
        )
        kept = stored_work(page, f"{CHAPTER}.md")["edits"]
        assert [v["built"] for v in kept.values()] == [hashes[ids.index(next(iter(kept)))]]

        # reset this page: every cell the book's text, no saved edit left
        page.locator(".minidl-live-reset-page").click()
        until(
            page,
            "(src) => (" + SOURCES_JS + ")().includes(src)",
            built_maths,
            what="the page's built text back",
            seconds=5,
            show=".thebe-cell .CodeMirror",
        )
        assert stored_work(page, f"{CHAPTER}.md")["edits"] == {}
        assert page.locator(".minidl-live-reset-page").is_hidden()

        # the progress list: the right answer's ✓, the others not tried; again after a reload
        n_exercises = (ROOT / f"{CHAPTER}.md").read_text(encoding="utf-8").count(
            "```{exercise}")  # the intro's: the test book has no other
        for attempt in ("after the resets", "after a reload"):
            item = page.locator(".minidl-progress-item[data-label=ex-intro-plain]")
            visible(
                page,
                page.locator(
                    ".minidl-progress-item[data-label=ex-intro-plain][data-verdict=right]"
                ),
                what=f"✓ in the progress list ({attempt})",
                seconds=10,
                show=".minidl-progress",
            )
            assert item.locator(".minidl-progress-mark").inner_text() == "✓"
            assert "Off the graph" in item.inner_text()
            others = page.locator(".minidl-progress-item[data-verdict=none]")
            assert others.count() == n_exercises - 1, state(page, ".minidl-progress")
            assert f"1 of {n_exercises} exercises right" in page.locator(
                ".minidl-progress").inner_text()
            page.reload(wait_until="load")

        assert offsite(visit) == [], "a request left 127.0.0.1"
        assert visit.errors == [], "a script raised"
    finally:
        visit.close()


def test_cell_ids_survive_a_rebuild(tmp_path):
    """The ids under which edits are saved are the same after a cell's text changes or a cell
    is added in another section; the digest changes for the changed cell only."""
    text = (ROOT / f"{CHAPTER}.md").read_text(encoding="utf-8")
    before, exercises = read_cells(ROOT / f"{CHAPTER}.md")
    changed = tmp_path / "changed.md"
    changed.write_text(text.replace("ex_plain.check(prediction);", "ex_plain.check(p);"))
    after, _ = read_cells(changed)
    assert [c["id"] for c in after] == [c["id"] for c in before]
    differ = [b["id"] for b, a in zip(before, after, strict=True) if b["hash"] != a["hash"]]
    assert differ == [next(c["id"] for c in before if PLAIN_CHECK in c["source"])]

    added = tmp_path / "added.md"
    head, tail = text.split("(exercises-howto)=", 1)
    added.write_text(head + "```{code-cell} ipython3\nx = 1\n```\n\n(exercises-howto)=" + tail)
    grown, _ = read_cells(added)
    assert len(grown) == len(before) + 1
    later = [c for c in before if c["id"].startswith("think-about-it-exercises/")]
    assert later and all(c in grown for c in later), "a cell added above moved later ids"

    assert [e["label"] for e in exercises] == [
        "ex-intro-plain",
        "ex-intro-mixed",
        "ex-intro-inference",
        "ex-intro-chain",
    ]
    checking = {c["id"]: c["answers"] for c in before if c["answers"]}
    assert list(checking.values()) == [
        ["ex-intro-plain"],
        ["ex-intro-mixed"],
        ["ex-intro-inference"],
        ["ex-intro-chain"],
    ]


def test_every_exercise_of_the_book_has_its_checking_cell():
    """The progress list pairs each exercise with the cell that checks it: in every chapter of
    the book, each ``{exercise}`` has one, and each checking cell calls ``check`` as often."""
    import yaml

    toc = yaml.safe_load((ROOT / "_toc.yml").read_text(encoding="utf-8"))
    docs = [toc["root"]] + [c["file"] for c in toc.get("chapters", [])]
    total = 0
    for doc in docs:
        cells, exercises = read_cells(ROOT / f"{doc}.md")
        unpaired = [e["label"] for e in exercises if e["cell"] is None]
        assert unpaired == [], f"{doc}: no cell checks {unpaired}"
        for c in cells:
            assert len(c["answers"]) <= c["source"].count(".check("), (doc, c["id"])
        total += len(exercises)
    assert total > 0


def test_kernel_server_trusts_only_the_site(served):
    """A page of another origin can neither read the API nor open a kernel's websocket."""
    import websocket  # websocket-client, a dependency of jupyter_server

    foreign = "http://127.0.0.1:1"
    req = urllib.request.Request(f"{served.url}/_live/server.json", headers={"Origin": foreign})
    with urllib.request.urlopen(req, timeout=5) as r:
        assert "Access-Control-Allow-Origin" not in r.headers  # other pages cannot read it
        token = json.loads(r.read())["token"]

    def call(path: str, headers: dict[str, str], method: str = "GET") -> tuple[int, dict, bytes]:
        req = urllib.request.Request(f"{served.jupyter}{path}", headers=headers, method=method)
        try:
            with urllib.request.urlopen(req, timeout=10) as r:
                return r.status, dict(r.headers), r.read()
        except urllib.error.HTTPError as err:
            return err.code, dict(err.headers), b""

    auth = {"Authorization": f"token {token}"}
    code, headers, body = call("/api/kernels", {**auth, "Origin": served.url})
    assert code == 200 and headers["Access-Control-Allow-Origin"] == served.url
    # a kernel of its own: one left by an earlier test may be shutting down (its page's
    # end-of-visit beacon), and a websocket to a dying kernel hangs instead of opening
    body = call("/api/kernels", {**auth, "Content-Type": "application/json"}, "POST")[2]
    kernels = [json.loads(body)]
    code, headers, _ = call("/api/kernels", {**auth, "Origin": foreign})
    assert code >= 400, "another origin, with the token, was let in"
    assert "Access-Control-Allow-Origin" not in headers, "another origin may read the API"
    assert call("/api/kernels", {"Origin": served.url})[0] == 403, "no token, yet let in"

    ws_url = served.jupyter.replace("http", "ws") + f"/api/kernels/{kernels[0]['id']}/channels"
    ws = websocket.create_connection(f"{ws_url}?token={token}", origin=served.url, timeout=30)
    ws.close()
    with pytest.raises(websocket.WebSocketBadStatusException):
        websocket.create_connection(f"{ws_url}?token={token}", origin=foreign, timeout=30)

    # the token is only handed to pages of the site itself (DNS rebinding: a foreign Host)
    req = urllib.request.Request(f"{served.url}/_live/server.json", headers={"Host": "evil.test"})
    with pytest.raises(urllib.error.HTTPError) as err:
        urllib.request.urlopen(req, timeout=5)
    assert err.value.code == 403


@pytest.fixture()
def plain_server(site: Path) -> Iterator[str]:
    """The same site from a plain static server (no kernel beside it)."""

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            pass

    httpd = http.server.ThreadingHTTPServer(
        ("127.0.0.1", 0), functools.partial(Quiet, directory=str(site))
    )
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()


@pytest.mark.parametrize("kind", ["file", "http"])
def test_without_a_kernel_the_control_says_make_serve(kind, browser, site, plain_server):  # noqa: F811
    url = (
        (site / f"{CHAPTER}.html").as_uri() if kind == "file" else f"{plain_server}/{CHAPTER}.html"
    )
    visit = Visit(browser, url)
    try:
        visit.page.locator(".minidl-live-button").click()
        status = visit.page.locator(".minidl-live-status")
        visible(
            visit.page,
            status.filter(has_text="make serve"),
            what="the control saying make serve",
            seconds=10,
        )
        assert visit.page.locator(".thebe-cell").count() == 0
        assert offsite(visit) == [] and visit.errors == []
    finally:
        visit.close()


def test_ctrl_c_stops_both_servers(served):
    """Last in the file: Ctrl-C ends make serve, its site, its Jupyter server and kernels."""
    children = served.descendants()
    names = " ".join(" ".join(p.cmdline()) for p in children)
    assert "jupyter_server" in names, names
    assert is_open(served.url) and is_open(served.jupyter)
    code = served.ctrl_c()
    assert code is not None, f"make serve still runs {STOP_TIMEOUT} s after Ctrl-C"
    gone, alive = psutil.wait_procs(children, timeout=STOP_TIMEOUT)
    assert alive == [], f"still running after Ctrl-C: {[p.cmdline() for p in alive]}"
    assert not is_open(served.url) and not is_open(served.jupyter)
    assert "stopping the site and the Jupyter server" in served.output()

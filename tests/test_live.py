"""Live code in the rendered page: ``make serve``'s two servers, driven in headless Chromium.

One short chapter (the intro: a diagram, maths and an exercise, a few seconds to execute) is
built into a temporary book, next to a stray ``intro.ipynb`` that must not break the build.
``make serve`` then serves it on free ports with its Jupyter server, and Playwright presses
"Live code": a cell's build-time output is replaced by the kernel's, the exercise's
prediction is edited to a wrong answer (✗ and the hint) and to the right one (✓), and no
request leaves 127.0.0.1. Ctrl-C (SIGINT to make's process group, as a terminal sends it)
must stop the site, the Jupyter server and its kernel. From ``file://`` and from a server
without a kernel, the control must say to run ``make serve``.

Cost: one build of the intro (~15 s), one Jupyter server and one kernel (~10 s), a browser.
"""

from __future__ import annotations

import functools
import http.server
import json
import math
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import psutil
import pytest
from booktools import ROOT, strip_ansi
from test_site import LOCAL_HOSTS, LOCAL_SCHEMES, Visit, browser  # noqa: F401 (fixture)

CHAPTER = "chapters/intro"
BUILD_TIMEOUT = 600
SERVE_TIMEOUT = 120  # make serve: until it prints its address
KERNEL_TIMEOUT = 120  # "Live code" pressed: until the kernel is ready
RUN_TIMEOUT = 60  # one cell (and the cells above it) run live
STOP_TIMEOUT = 30


def _tail(text: str, n: int = 60) -> str:
    return "\n".join(text.splitlines()[-n:])


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The intro built alone (with the project's _config.yml and book_ext); its _build/html."""
    src = tmp_path_factory.mktemp("livebook")
    shutil.copy2(ROOT / "_config.yml", src / "_config.yml")
    (src / "book_ext").symlink_to(ROOT / "book_ext")  # so thebe is vendored once, in ROOT
    (src / "chapters").mkdir()
    shutil.copy2(ROOT / f"{CHAPTER}.md", src / f"{CHAPTER}.md")
    (src / "_toc.yml").write_text(f"format: jb-book\nroot: {CHAPTER}\n", encoding="utf-8")
    stray = {"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    (src / f"{CHAPTER}.ipynb").write_text(json.dumps(stray), encoding="utf-8")

    jb = Path(sys.executable).with_name("jupyter-book")
    env = dict(os.environ)
    env.setdefault("NUMBA_CACHE_DIR", str(ROOT / ".numba_cache"))
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT)] + [p for p in [env.get("PYTHONPATH")] if p])
    env["PATH"] = f"{jb.parent}{os.pathsep}{env.get('PATH', '')}"
    # not -W: links from the intro to chapters this one-page book lacks are the only
    # warnings allowed (a stray notebook's "multiple files found" is not)
    cmd = [str(jb), "build", str(src), "-n", "--keep-going"]
    proc = subprocess.run(
        cmd, cwd=src, env=env, capture_output=True, text=True, timeout=BUILD_TIMEOUT
    )
    log = strip_ansi(proc.stdout + proc.stderr)
    assert proc.returncode == 0, f"jupyter-book build failed:\n{_tail(log)}"
    warnings = [w for w in log.splitlines() if "WARNING:" in w and "[myst.xref_missing]" not in w]
    assert warnings == [], "\n".join(warnings)
    html = src / "_build" / "html"
    assert (html / "_live" / "thebe" / "index.js").is_file(), "thebe was not vendored"
    assert not list((html / "_static").rglob("thebe*.js")), "thebe must stay out of _static/"
    return html


class Served:
    """``make serve`` running in its own process group, with what it printed."""

    def __init__(self, html: Path) -> None:
        env = dict(os.environ)
        env.pop("MAKEFLAGS", None)
        self.proc = subprocess.Popen(
            ["make", "-s", "-C", str(ROOT), "serve", f"SITE={html}", "PORT=0"],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            env=env,
            start_new_session=True,
        )
        self.lines: list[str] = []
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()
        deadline = time.monotonic() + SERVE_TIMEOUT
        self.url = self.jupyter = ""
        while time.monotonic() < deadline and self.proc.poll() is None:
            text = "\n".join(self.lines)
            site = re.search(r"http://127\.0\.0\.1:(\d+)/", text)
            kernel = re.search(r"runs on 127\.0\.0\.1:(\d+)", text)
            if site and kernel:
                self.url = site.group(0).rstrip("/")
                self.jupyter = f"http://127.0.0.1:{kernel.group(1)}"
                break
            time.sleep(0.2)

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.append(line.rstrip("\n"))

    def output(self) -> str:
        return "\n".join(self.lines)

    def descendants(self) -> list[psutil.Process]:
        try:
            return psutil.Process(self.proc.pid).children(recursive=True)
        except psutil.NoSuchProcess:
            return []

    def ctrl_c(self) -> int | None:
        """SIGINT to the whole process group, as a terminal's Ctrl-C; the exit code."""
        try:
            os.killpg(self.proc.pid, signal.SIGINT)
            return self.proc.wait(STOP_TIMEOUT)
        except (ProcessLookupError, subprocess.TimeoutExpired):
            return None

    def kill(self) -> None:
        for p in [*self.descendants()]:
            p.kill()
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        self.proc.wait(STOP_TIMEOUT)


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


def _is_open(url: str) -> bool:
    parts = urlsplit(url)
    with socket.socket() as sock:
        sock.settimeout(1)
        return sock.connect_ex((parts.hostname, parts.port)) == 0


def _offsite(visit: Visit) -> list[str]:
    """Requests and websockets that would have left the machine (a kernel's ws is local)."""
    urls = visit.requests + visit.external
    return sorted(
        {
            u
            for u in urls
            if urlsplit(u).scheme not in LOCAL_SCHEMES and urlsplit(u).hostname not in LOCAL_HOSTS
        }
    )


def _cell_with(page: object, text: str) -> object:
    """The live (thebe) cell whose source contains ``text`` now (pinned by position, so it
    stays the same cell after an edit)."""
    # CodeMirror draws only the lines near the viewport, so a cell's rendered text can lack a
    # line that is off-screen: ask each editor for its whole source, and give the page a moment.
    cells = page.locator(".thebe-cell")
    sources_js = """() => [...document.querySelectorAll('.thebe-cell')].map(c => {
        const cm = c.querySelector('.CodeMirror');
        return cm && cm.CodeMirror ? cm.CodeMirror.getValue() : c.innerText; })"""
    found: list[int] = []
    deadline = time.monotonic() + 20
    while True:
        found = [i for i, src in enumerate(page.evaluate(sources_js)) if text in src]
        if found or time.monotonic() > deadline:
            break
        page.wait_for_timeout(250)
    assert len(found) == 1, f"{len(found)} live cells contain {text!r}"
    return cells.nth(found[0])


def _edit(page: object, cell: object, source: str) -> None:
    cell.locator(".CodeMirror").click()
    page.keyboard.press("Control+A")
    page.keyboard.type(source)


def _output_of(cell: object) -> object:
    """The output area that follows a live cell (thebe renders into the page's own)."""
    cls = "contains(concat(' ', normalize-space(@class), ' '), ' cell ')"
    return cell.locator(f"xpath=ancestor::div[{cls}][1]").locator("[data-output]")


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

        button.click()
        page.wait_for_selector(".minidl-live[data-kernel=ready]", timeout=KERNEL_TIMEOUT * 1000)
        assert page.locator(".thebe-cell .CodeMirror").count() >= 4, "cells did not become editable"

        # the diagram cell: run it; its SVG now comes from the kernel
        chart = _cell_with(page, "layer_map = Flowchart(")
        chart.locator("button.thebe-run-button").click()
        out = _output_of(chart)
        out.locator(".jp-OutputArea svg.minidl-flowchart").wait_for(timeout=RUN_TIMEOUT * 1000)
        assert out.locator("[data-build-time]").count() == 0, "the build-time output stayed"

        # the exercise: wrong prediction -> ✗ and the hint; right one -> ✓
        cell = _cell_with(page, "ex_kaiming.check(prediction)")
        result = _output_of(cell)
        _edit(page, cell, "prediction = 0.125\nex_kaiming.check(prediction);")
        page.keyboard.press("Shift+Enter")
        result.locator(".jp-OutputArea", has_text="✗").wait_for(timeout=RUN_TIMEOUT * 1000)
        text = result.inner_text()
        assert "Not quite" in text and "Hint:" in text and "fan-in" in text, text
        assert "Write your prediction first" not in text

        right = 1 / math.sqrt(256)  # burn's default: a = 1/sqrt(fan_in)
        _edit(page, cell, f"prediction = {right}\nex_kaiming.check(prediction);")
        page.keyboard.press("Shift+Enter")
        result.locator(".jp-OutputArea", has_text="✓").wait_for(timeout=RUN_TIMEOUT * 1000)
        assert "Right" in result.inner_text() and "Hint" not in result.inner_text()

        # any cell can be rewritten: an HTML table and a matplotlib image render in place
        last = _cell_with(page, "ex_small = Exercise(")
        _edit(page, last, PLOT_AND_TABLE)
        page.keyboard.press("Shift+Enter")
        out = _output_of(last)
        out.locator(".jp-OutputArea table.live-check").wait_for(timeout=RUN_TIMEOUT * 1000)
        out.locator(".jp-OutputArea img[src^='data:image/png']").wait_for(
            timeout=RUN_TIMEOUT * 1000
        )

        assert _offsite(visit) == [], "a request left 127.0.0.1"
        kernel_ws = [u for u in visit.external if u.startswith("ws://127.0.0.1")]
        assert kernel_ws, "no kernel websocket was opened"
        assert visit.errors == [], "a script raised"

        # leaving the page shuts its kernel down
        page.goto(f"{served.url}/", wait_until="load")
        assert _wait_for(lambda: _sessions(served) == [], 15), "the page's kernel kept running"
    finally:
        visit.close()


def _sessions(served: Served) -> list[dict]:
    token = json.loads(urllib.request.urlopen(f"{served.url}/_live/server.json").read())["token"]
    req = urllib.request.Request(
        f"{served.jupyter}/api/sessions", headers={"Authorization": f"token {token}"}
    )
    with urllib.request.urlopen(req, timeout=5) as r:
        return json.loads(r.read())


def _wait_for(condition: object, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.25)
    return False


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
    kernels = json.loads(body)
    if not kernels:  # this test run alone: start one
        body = call("/api/kernels", {**auth, "Content-Type": "application/json"}, "POST")[2]
        kernels = [json.loads(body)]
    code, headers, _ = call("/api/kernels", {**auth, "Origin": foreign})
    assert code >= 400, "another origin, with the token, was let in"
    assert "Access-Control-Allow-Origin" not in headers, "another origin may read the API"
    assert call("/api/kernels", {"Origin": served.url})[0] == 403, "no token, yet let in"

    ws_url = served.jupyter.replace("http", "ws") + f"/api/kernels/{kernels[0]['id']}/channels"
    ws = websocket.create_connection(f"{ws_url}?token={token}", origin=served.url, timeout=10)
    ws.close()
    with pytest.raises(websocket.WebSocketBadStatusException):
        websocket.create_connection(f"{ws_url}?token={token}", origin=foreign, timeout=10)

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
        status.filter(has_text="make serve").wait_for(timeout=10000)
        assert visit.page.locator(".thebe-cell").count() == 0
        assert _offsite(visit) == [] and visit.errors == []
    finally:
        visit.close()


def test_ctrl_c_stops_both_servers(served):
    """Last in the file: Ctrl-C ends make serve, its site, its Jupyter server and kernels."""
    children = served.descendants()
    names = " ".join(" ".join(p.cmdline()) for p in children)
    assert "jupyter_server" in names, names
    assert _is_open(served.url) and _is_open(served.jupyter)
    code = served.ctrl_c()
    assert code is not None, f"make serve still runs {STOP_TIMEOUT} s after Ctrl-C"
    gone, alive = psutil.wait_procs(children, timeout=STOP_TIMEOUT)
    assert alive == [], f"still running after Ctrl-C: {[p.cmdline() for p in alive]}"
    assert not _is_open(served.url) and not _is_open(served.jupyter)
    assert "stopping the site and the Jupyter server" in served.output()

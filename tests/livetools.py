"""Helpers for the browser tests of Live code (tests/test_live.py): ``make serve`` in its own
process group, and waits that wait for a condition and, on a timeout, say what the page showed.
"""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import threading
import time
import urllib.request
from pathlib import Path
from urllib.parse import urlsplit

import psutil
from booktools import ROOT
from playwright.sync_api import TimeoutError as PlaywrightTimeout
from test_site import LOCAL_HOSTS, LOCAL_SCHEMES, Visit

SERVE_TIMEOUT = 120  # make serve: until it prints its address
KERNEL_TIMEOUT = 120  # "Live code" pressed: until the kernel is ready
STOP_TIMEOUT = 30


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


def is_open(url: str) -> bool:
    parts = urlsplit(url)
    with socket.socket() as sock:
        sock.settimeout(1)
        return sock.connect_ex((parts.hostname, parts.port)) == 0


def offsite(visit: Visit) -> list[str]:
    """Requests and websockets that would have left the machine (a kernel's ws is local)."""
    urls = visit.requests + visit.external
    return sorted(
        {
            u
            for u in urls
            if urlsplit(u).scheme not in LOCAL_SCHEMES and urlsplit(u).hostname not in LOCAL_HOSTS
        }
    )


SOURCES_JS = """() => [...document.querySelectorAll('.thebe-cell')].map(c => {
    const cm = c.querySelector('.CodeMirror');
    return cm && cm.CodeMirror ? cm.CodeMirror.getValue() : c.innerText; })"""


def state(page: object, show: object = ".minidl-live") -> str:
    """What the page shows at ``show`` (a selector or a locator; its HTML, cut short) and the
    Live code status."""
    outer = "els => els.map(e => e.outerHTML).join('\\n')"
    if isinstance(show, str):
        html = page.evaluate(f"(sel) => ({outer})([...document.querySelectorAll(sel)])", show)
    else:
        html = show.evaluate_all(outer)
    status = page.evaluate(
        "() => document.querySelector('.minidl-live-status')?.textContent ?? '(no control)'"
    )
    return f"status: {status!r}\n{show}:\n{html[:4000] or '(nothing matches)'}"


def until(
    page: object,
    js: str,
    arg: object = None,
    *,
    what: str,
    seconds: float,
    show: object = ".minidl-live",
) -> object:
    """Wait until the function ``js`` returns a truthy value; return it. On a timeout, fail
    with ``what`` and the page's state at ``show``."""
    try:
        return page.wait_for_function(js, arg=arg, timeout=seconds * 1000).json_value()
    except PlaywrightTimeout:
        raise AssertionError(f"{what}: not within {seconds} s\n{state(page, show)}") from None


def visible(
    page: object, locator: object, *, what: str, seconds: float, show: object = ".minidl-live"
) -> object:
    """Wait until ``locator`` is attached and visible; on a timeout, fail with the page state."""
    try:
        locator.first.wait_for(timeout=seconds * 1000)
    except PlaywrightTimeout:
        raise AssertionError(f"{what}: not within {seconds} s\n{state(page, show)}") from None
    return locator


def cell_with(page: object, text: str) -> object:
    """The live (thebe) cell whose source contains ``text`` now (pinned by position, so it
    stays the same cell after an edit)."""
    # CodeMirror draws only the lines near the viewport, so a cell's rendered text can lack a
    # line that is off-screen: ask each editor for its whole source.
    found_js = f"""(text) => {{ const all = ({SOURCES_JS})();
        const hits = all.map((s, i) => s.includes(text) ? i : -1).filter(i => i >= 0);
        return hits.length === 1 ? [hits[0]] : null; }}"""
    found = until(
        page,
        found_js,
        text,
        what=f"one live cell containing {text!r}",
        seconds=20,
        show=".thebe-cell .CodeMirror",
    )
    return page.locator(".thebe-cell").nth(found[0])


def source_of(cell: object) -> str:
    return cell.locator(".CodeMirror").evaluate("cm => cm.CodeMirror.getValue()")


def focus(cell: object) -> None:
    """Click into the cell's editor and wait until it has the focus: on a loaded machine a
    key pressed right after the click can reach the page before CodeMirror takes it."""
    editor = cell.locator(".CodeMirror")
    editor.click()
    editor.and_(cell.locator(".CodeMirror-focused")).wait_for(state="attached", timeout=15_000)


def edit(page: object, cell: object, source: str) -> None:
    focus(cell)
    page.keyboard.press("Control+A")
    page.keyboard.type(source)


def start_live(page: object) -> None:
    page.locator(".minidl-live-button").click()
    visible(
        page,
        page.locator(".minidl-live[data-kernel=ready]"),
        what="Live code ready",
        seconds=KERNEL_TIMEOUT,
    )


def output_of(cell: object) -> object:
    """The output area that follows a live cell (thebe renders into the page's own)."""
    cls = "contains(concat(' ', normalize-space(@class), ' '), ' cell ')"
    return cell.locator(f"xpath=ancestor::div[{cls}][1]").locator("[data-output]")


STORE_JS = """(path) => JSON.parse(localStorage.getItem('minidl-live/v1/' + path) || '{}')"""


def stored_work(page: object, chapter_path: str) -> dict:
    """What the browser keeps for the chapter whose source is ``chapter_path``."""
    return page.evaluate(STORE_JS, chapter_path)


def cell_ids(page: object) -> list[str]:
    """The stable id of each cell of the page's config, in notebook order."""
    return page.evaluate(
        "() => JSON.parse(document.getElementById('minidl-live-config').textContent)"
        ".cells.map(c => c.id)"
    )


def run_in(page: object, cell: object) -> None:
    focus(cell)
    page.keyboard.press("Shift+Enter")


def sessions(served: Served) -> list[dict]:
    token = json.loads(urllib.request.urlopen(f"{served.url}/_live/server.json").read())["token"]
    req = urllib.request.Request(
        f"{served.jupyter}/api/sessions", headers={"Authorization": f"token {token}"}
    )
    with urllib.request.urlopen(req, timeout=5) as r:
        return json.loads(r.read())


def wait_for(condition: object, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.25)
    return False

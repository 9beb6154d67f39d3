"""``make serve``: the built site and, beside it, a Jupyter server for the pages' Live code.

Both listen on 127.0.0.1 only. The Jupyter server runs from this project's ``.venv`` (the
interpreter running this script) with a fresh random token, accepts cross-origin requests
only from the site's own origin, and starts kernels in the chapters' folder. The site
answers ``/_live/server.json`` with the Jupyter address and token, to pages of this site
only (the Host header must be the site's own, which defeats DNS rebinding; a page of any
other origin cannot read it, as no CORS header is sent), and ``POST /_live/end?session=ID``
(a beacon from a page being left) by ending that page's kernel session; kernels idle for
10 minutes with no page connected are ended too. One address is printed; Ctrl-C (SIGINT)
or SIGTERM stops both servers.

    python book_ext/serve.py --html _build/html --port 8000 [--jupyter-port 0]

``--port 0`` / ``--jupyter-port 0`` pick free ports (the tests do this).
"""

from __future__ import annotations

import argparse
import ctypes
import functools
import http.server
import json
import os
import re
import secrets
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
HOST = "127.0.0.1"
READY_TIMEOUT = 90.0  # seconds for the Jupyter server to answer /api/status
SESSION_ID = re.compile(r"[0-9a-f-]{8,64}")


def free_port() -> int:
    """A port that is free on 127.0.0.1 right now."""
    with socket.socket() as s:
        s.bind((HOST, 0))
        return s.getsockname()[1]


def _die_with_parent() -> None:  # runs in the child before exec (Linux): no orphaned server
    try:
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
    except OSError:
        pass


def start_jupyter(site_port: int, port: int, token: str, log: Path) -> subprocess.Popen:
    """Start ``jupyter server`` for the site on ``site_port``; return the process."""
    origin = rf"^http://(127\.0\.0\.1|localhost):{site_port}$"
    cmd = [
        sys.executable,
        "-m",
        "jupyter_server",
        "--no-browser",
        f"--ServerApp.ip={HOST}",
        f"--ServerApp.port={port}",
        "--ServerApp.port_retries=0",
        f"--ServerApp.root_dir={ROOT}",
        f"--ServerApp.allow_origin_pat={origin}",
        "--ServerApp.identity_provider_class=site_origin.SiteOriginIdentityProvider",
        "--ServerApp.allow_remote_access=False",
        "--ServerApp.allow_credentials=False",
        "--ServerApp.terminals_enabled=False",  # kernels for the pages, no shell
        # a kernel whose page is gone (no websocket) and idle for 10 min is ended
        "--MappingKernelManager.cull_idle_timeout=600",
        "--MappingKernelManager.cull_interval=60",
        "--MappingKernelManager.cull_connected=False",
        "--ServerApp.log_level=WARN",
    ]
    if os.geteuid() == 0:  # a container or CI: jupyter refuses root without this
        cmd.append("--allow-root")
    env = dict(os.environ)
    env["JUPYTER_TOKEN"] = token  # not on the command line, where `ps` would show it
    paths = [str(ROOT), str(ROOT / "book_ext")]  # minidl for the kernels; site_origin
    env["PYTHONPATH"] = os.pathsep.join(paths + [p for p in [env.get("PYTHONPATH")] if p])
    env.setdefault("NUMBA_CACHE_DIR", str(ROOT / ".numba_cache"))
    env.setdefault("PYDEVD_DISABLE_FILE_VALIDATION", "1")
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    log.parent.mkdir(parents=True, exist_ok=True)
    out = open(log, "ab")  # noqa: SIM115 (closed when the process ends)
    return subprocess.Popen(
        cmd,
        cwd=ROOT,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=out,
        stderr=subprocess.STDOUT,
        start_new_session=True,  # Ctrl-C reaches this script only, which stops jupyter itself
        preexec_fn=_die_with_parent if sys.platform.startswith("linux") else None,
    )


def wait_ready(proc: subprocess.Popen, port: int, token: str, log: Path) -> None:
    """Return once the server answers ``/api/status``; raise if it exits or times out."""
    url = f"http://{HOST}:{port}/api/status"
    deadline = time.monotonic() + READY_TIMEOUT
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            tail = log.read_text(errors="replace")[-3000:] if log.is_file() else ""
            raise RuntimeError(f"the Jupyter server exited ({proc.returncode}):\n{tail}")
        req = urllib.request.Request(url, headers={"Authorization": f"token {token}"})
        try:
            with urllib.request.urlopen(req, timeout=2) as r:
                if r.status == 200:
                    return
        except (urllib.error.URLError, OSError):
            pass
        time.sleep(0.25)
    raise RuntimeError(f"the Jupyter server did not answer {url} within {READY_TIMEOUT:.0f} s")


def stop(proc: subprocess.Popen, timeout: float = 10.0) -> None:
    """SIGTERM (jupyter shuts its kernels down), then SIGKILL the group if it hangs."""
    if proc.poll() is not None:
        return
    proc.terminate()
    try:
        proc.wait(timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout)


class SiteHandler(http.server.SimpleHTTPRequestHandler):
    """Static files of the built site, plus ``/_live/server.json`` for its own pages."""

    live: dict[str, str] = {}
    hosts: set[str] = set()

    def log_message(self, *args: object) -> None:  # quiet: one address is all we print
        pass

    def do_POST(self) -> None:
        """``/_live/end?session=ID``: a page that is left ends its kernel session."""
        url = urllib.parse.urlsplit(self.path)
        session = urllib.parse.parse_qs(url.query).get("session", [""])[0]
        if url.path != "/_live/end" or self.headers.get("Host", "") not in self.hosts:
            self.send_error(403)
            return
        if not SESSION_ID.fullmatch(session):
            self.send_error(400, "bad session id")
            return
        req = urllib.request.Request(
            f"{self.live['baseUrl']}/api/sessions/{session}",
            method="DELETE",
            headers={"Authorization": f"token {self.live['token']}"},
        )
        try:
            with urllib.request.urlopen(req, timeout=10):
                pass
        except (urllib.error.URLError, OSError):
            pass  # already gone, or the server is stopping
        self.send_response(204)
        self.end_headers()

    def do_GET(self) -> None:
        if self.path.split("?", 1)[0] == "/_live/server.json":
            if self.headers.get("Host", "") not in self.hosts:
                self.send_error(403, "wrong Host")
                return
            body = json.dumps(self.live).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Cache-Control", "no-store")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            return
        super().do_GET()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--html", type=Path, default=ROOT / "_build" / "html")
    ap.add_argument("--port", type=int, default=8000, help="the site's port (0: a free one)")
    ap.add_argument("--jupyter-port", type=int, default=0, help="the kernel server's (0: free)")
    ap.add_argument("--log", type=Path, help="the Jupyter log (default: beside the site)")
    args = ap.parse_args(argv)
    html = args.html.resolve()
    args.log = args.log or html.parent / "live-jupyter.log"
    if not (html / "index.html").is_file():
        print(f"serve: no site in {html} (make book builds it)", file=sys.stderr)
        return 2

    token = secrets.token_hex(24)
    handler = functools.partial(SiteHandler, directory=str(html))
    try:
        site = http.server.ThreadingHTTPServer((HOST, args.port), handler)
    except OSError as err:
        print(
            f"serve: cannot listen on {HOST}:{args.port} ({err}); PORT=... picks another",
            file=sys.stderr,
        )
        return 2
    site_port = site.server_address[1]
    jport = args.jupyter_port or free_port()
    SiteHandler.hosts = {f"{HOST}:{site_port}", f"localhost:{site_port}"}
    SiteHandler.live = {
        "baseUrl": f"http://{HOST}:{jport}",
        "wsUrl": f"ws://{HOST}:{jport}",
        "token": token,
        "kernel": "python3",
    }

    def on_term(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, on_term)
    signal.signal(signal.SIGINT, signal.default_int_handler)  # even if started with it ignored
    proc = start_jupyter(site_port, jport, token, args.log)
    serving = False
    try:
        wait_ready(proc, jport, token, args.log)
        thread = threading.Thread(target=site.serve_forever, daemon=True)
        thread.start()
        serving = True
        print(
            f"The book with live code: http://{HOST}:{site_port}/   (Ctrl-C stops it)\n"
            f"  (a Jupyter server for the Live code buttons runs on {HOST}:{jport}; "
            f"its log: {args.log})",
            flush=True,
        )
        while thread.is_alive():
            if proc.poll() is not None:
                print("serve: the Jupyter server stopped; stopping the site", file=sys.stderr)
                return 1
            time.sleep(0.5)
    except KeyboardInterrupt:
        print("\nserve: stopping the site and the Jupyter server", flush=True)
    except RuntimeError as err:
        print(f"serve: {err}", file=sys.stderr)
        return 1
    finally:
        if serving:  # shutdown() waits for serve_forever, so only after it started
            site.shutdown()
        site.server_close()
        stop(proc)
    return 0


if __name__ == "__main__":
    sys.exit(main())

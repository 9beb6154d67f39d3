"""The Jupyter server of ``make serve`` takes requests from the site's own origin only.

jupyter_server skips its Origin check for every token-authenticated request, so any web
page that learnt the token could drive a kernel. ``make serve`` hands the token to its own
pages only; with this identity provider the server also refuses, token or not, an API call
or a kernel websocket whose ``Origin`` is not the site's (``ServerApp.allow_origin_pat``).
Requests with no ``Origin`` (scripts, curl) are checked by the token alone, as usual.
"""

from __future__ import annotations

from jupyter_server.auth.identity import IdentityProvider
from tornado import web


class SiteOriginIdentityProvider(IdentityProvider):
    """Token authentication as usual; the Origin check is never skipped."""

    def should_check_origin(self, handler: web.RequestHandler) -> bool:
        return True

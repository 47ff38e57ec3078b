"""The Authorization header of lightkube's credentials, for requests that skip httpx.

lightkube turns the kubeconfig's user into an httpx auth flow (config/client_adapter.py:
user_auth): a bearer token, a token file read once and re-read when the server answers
401 (client-go's tokenFileAuth), an exec plugin run once and again on a 401, or basic
auth. The lean HTTP path (live/http.py) drives that same flow, so the header is exactly
what httpx would send: once for the header, and once more, answering 401, for the
refreshed one.
"""

from __future__ import annotations

import threading

import httpx2

__all__ = ["Credentials"]


class Credentials:
    """The Authorization header for ``auth`` (None: no header), shared by every thread."""

    def __init__(self, auth: httpx2.Auth | None, server: str) -> None:
        self._auth = auth
        self._server = server
        self._lock = threading.Lock()
        # Made on the first request, as httpx runs the flow then (a token file is read,
        # an exec plugin runs, when the first request goes out).
        self._header: str | None = None
        self._known = auth is None

    def header(self) -> str | None:
        if self._known:
            return self._header
        with self._lock:
            if not self._known:
                assert self._auth is not None
                request = httpx2.Request("GET", self._server)
                flow = self._auth.sync_auth_flow(request)
                try:
                    self._header = next(flow).headers.get("Authorization")
                finally:
                    flow.close()
                self._known = True
            return self._header

    def refreshed(self, used: str | None) -> str | None:
        """After a 401 answer to a request sent with ``used``: the header to send it again
        with, or None when the credentials have nothing new (a fixed token, basic auth)."""
        if self._auth is None:
            return None
        with self._lock:
            if self._known and self._header != used:
                return self._header  # another thread's 401 refreshed it already
            request = httpx2.Request("GET", self._server)
            flow = self._auth.sync_auth_flow(request)
            try:
                next(flow)
                again = flow.send(httpx2.Response(401, request=request))
            except StopIteration:
                return None
            finally:
                flow.close()
            self._header = again.headers.get("Authorization")
            self._known = True
            return self._header

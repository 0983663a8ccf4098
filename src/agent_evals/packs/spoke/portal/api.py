"""A small REST client of the portal (standard library only).

Used by the provider (the end-state snapshot, fixtures, its own cleanup), the cleanup hook,
the runner's sweeps and the preflight; it is imported in short-lived processes too, so the
import stays light. It follows the REST contract in ``docs/architecture.md``.

Exceptions form one hierarchy, under the core's :class:`~agent_evals.system.SystemFailure`
(kind ``system``), so callers can catch the base class or the core's::

    PortalError                 any failure talking to the portal (``status``, ``detail``)
    ├── PortalNotConfigured     PORTAL_URL is not set (``PortalAPI.from_env``); also a SystemNotConfigured
    ├── PortalUnavailable       connection refused, DNS failure or timeout (``status`` None); also a
    │                           SystemUnavailable
    └── PortalNotFound          404

No message, ``repr`` or exception ever contains the bearer token.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from typing import Any, TypedDict, cast
from urllib.parse import quote, urlencode, urlsplit
import http.client
import urllib.error
import urllib.request

from agent_evals.authoring import SystemFailure, SystemNotConfigured, SystemUnavailable

__all__ = [
    "FIXTURE_CREATED_BY",
    "PR_URL_PATH",
    "PortalAPI",
    "PortalError",
    "PortalNotConfigured",
    "PortalNotFound",
    "PortalUnavailable",
    "PullRequest",
    "find_pull_request_links",
    "find_pull_request_urls",
    "is_portal_pull_request_url",
    "pull_request_url",
]

DEFAULT_TIMEOUT = 10.0
FIXTURE_CREATED_BY = "fixture"  # the created_by of the pull requests a test case's fixtures made
PR_URL_PATH = "/repos/spokes/pullrequest/"

# Any URL whose path ends in ``/pullrequest/<digits>`` (this portal's or another host's).
_PR_LINK = re.compile(r"https?://[^\s<>()\[\]{}\"'`|]*?/pullrequest/(\d+)(?![\w-])", re.IGNORECASE)
_LOOPBACK = {"127.0.0.1", "localhost", "::1"}
# Our own messages never contain the token; redacting a server echo of a 1-letter test
# token would garble every message, so only tokens at least this long are searched for.
_MIN_REDACTED_TOKEN = 6


class PullRequest(TypedDict, total=False):
    """A pull request as the portal reports it (``diff`` only from ``get_pull_request``)."""

    id: int
    url: str
    title: str
    description: str
    spoke_name: str
    file: str
    source_branch: str
    target_branch: str
    status: str  # active | abandoned | completed
    created_at: str
    created_by: str | None
    eval_id: str | None
    test_id: str | None
    validation_status: str  # succeeded | failed
    validation_errors: list[dict[str, Any]]
    diff: str


class PortalError(SystemFailure):
    """A failed portal call: ``status`` is the HTTP status (None when there was no answer); kind ``system``."""

    def __init__(self, message: str, *, status: int | None = None, detail: Any = None) -> None:
        super().__init__(message)
        self.status = status
        self.detail = detail


class PortalNotConfigured(PortalError, SystemNotConfigured):
    """``PORTAL_URL`` is not set."""


class PortalUnavailable(PortalError, SystemUnavailable):
    """The portal did not answer (connection refused, unknown host, timeout)."""


class PortalNotFound(PortalError):
    """The portal answered 404."""


def pull_request_url(base_url: str, pr_id: int) -> str:
    """The URL the portal gives a pull request (and the agent should report)."""
    return f"{base_url.rstrip('/')}{PR_URL_PATH}{int(pr_id)}"


def find_pull_request_links(text: str) -> list[tuple[str, int]]:
    """Every ``.../pullrequest/<id>`` URL in ``text`` as ``(url, id)``, in order, duplicates kept."""
    return [(match.group(0), int(match.group(1))) for match in _PR_LINK.finditer(text or "")]


def is_portal_pull_request_url(url: str, base_url: str) -> bool:
    """True when ``url`` is ``{base_url}/repos/spokes/pullrequest/<id>`` (same scheme, host and port)."""
    link, base = urlsplit(url), urlsplit(base_url)
    if (link.scheme.lower(), _host_port(link)) != (base.scheme.lower(), _host_port(base)):
        return False
    prefix = base.path.rstrip("/") + PR_URL_PATH
    rest = link.path[len(prefix) :] if link.path.startswith(prefix) else ""
    return rest.isdigit()


def find_pull_request_urls(text: str, base_url: str) -> list[int]:
    """Ids of the pull request URLs of *this* portal found in ``text`` (first-seen order, unique)."""
    ids: list[int] = []
    for url, pr_id in find_pull_request_links(text):
        if is_portal_pull_request_url(url, base_url) and pr_id not in ids:
            ids.append(pr_id)
    return ids


def _host_port(parts: Any) -> tuple[str, int | None]:
    default = {"http": 80, "https": 443}.get(parts.scheme.lower())
    try:
        port = parts.port
    except ValueError:
        port = None
    return ((parts.hostname or "").lower(), port or default)


class PortalAPI:
    """REST client of one portal. ``token`` is sent as ``Authorization: Bearer``."""

    def __init__(self, base_url: str, token: str | None = None, timeout: float = DEFAULT_TIMEOUT) -> None:
        if not base_url or not base_url.lower().startswith(("http://", "https://")):
            raise PortalError(f"portal URL must start with http:// or https://, got {base_url!r}")
        self.base_url = base_url.rstrip("/")
        self.timeout = timeout
        self._token = token or None
        self._built_opener: urllib.request.OpenerDirector | None = None

    @classmethod
    def from_env(cls, timeout: float = DEFAULT_TIMEOUT) -> PortalAPI:
        """A client for ``PORTAL_URL`` with ``PORTAL_TOKEN`` (optional)."""
        url = os.environ.get("PORTAL_URL", "").strip()
        if not url:
            raise PortalNotConfigured(
                "PORTAL_URL is not set: export the portal's base URL, e.g. PORTAL_URL=http://127.0.0.1:8400"
            )
        return cls(url, token=os.environ.get("PORTAL_TOKEN") or None, timeout=timeout)

    def __repr__(self) -> str:
        return f"PortalAPI({self.base_url!r}, token={'set' if self._token else 'none'})"

    # -- endpoints ---------------------------------------------------------------------

    def health(self) -> dict[str, Any]:
        """``{"status": "ok", "spokes": <count>}``."""
        return self._request("GET", "/api/health")

    def get_spoke(self, name: str) -> dict[str, Any]:
        """``{"name", "file", "config"}`` of a spoke on main; PortalNotFound if unknown."""
        return self._request("GET", f"/api/spokes/{quote(name, safe='')}")

    def get_schema(self) -> dict[str, Any]:
        """``{"schema", "additional_schema", "file_name_rules"}``."""
        return self._request("GET", "/api/schema")

    def list_pull_requests(
        self, status: str | None = None, eval_id: str | None = None, test_id: str | None = None,
        *, with_diff: bool = False,
    ) -> list[PullRequest]:
        """Pull requests, newest first, filtered by the given fields (with their ``diff`` when asked)."""
        query = {k: v for k, v in {"status": status, "eval_id": eval_id, "test_id": test_id}.items() if v}
        if with_diff:
            query["with_diff"] = "true"
        path = "/api/pull-requests" + (f"?{urlencode(query)}" if query else "")
        return cast(list[PullRequest], list(self._request("GET", path).get("pull_requests", [])))

    def get_pull_request(self, pr_id: int) -> PullRequest:
        """One pull request with its ``diff``; PortalNotFound if unknown."""
        return cast(PullRequest, self._request("GET", f"/api/pull-requests/{int(pr_id)}"))

    def abandon_pull_request(self, pr_id: int) -> PullRequest:
        """Abandon a pull request (idempotent); PortalError with status 409 if it is completed."""
        return cast(PullRequest, self._request("POST", f"/api/pull-requests/{int(pr_id)}/abandon"))

    # -- fixtures: what a test case relies on (docs/architecture.md, "Case fixtures") -----

    def create_fixture_pull_request(self, body: dict[str, Any], trace: Mapping[str, str]) -> PullRequest:
        """A pull request made for a test case: ``{spoke_name, config, title, description?, source_spoke?,
        status?}``; ``trace`` holds its X-Eval-Id and X-Test-Id headers."""
        return cast(PullRequest, self._request("POST", "/api/fixtures/pull-requests", body, dict(trace)))

    def create_fixture_spoke(self, name: str, config: dict[str, Any], trace: Mapping[str, str]) -> dict[str, Any]:
        """A spoke put on main for a test case: ``{"name", "file"}``."""
        return self._request("POST", "/api/fixtures/spokes", {"name": name, "config": config}, dict(trace))

    def list_fixtures(self, eval_id: str | None = None, test_id: str | None = None) -> dict[str, Any]:
        """``{"spokes": [names], "pull_requests": [active fixture PR ids]}`` of an eval or a test."""
        query = {k: v for k, v in {"eval_id": eval_id, "test_id": test_id}.items() if v}
        return self._request("GET", "/api/fixtures" + (f"?{urlencode(query)}" if query else ""))

    def remove_fixtures(self, eval_id: str | None = None, test_id: str | None = None) -> dict[str, Any]:
        """Remove an eval's or a test's fixtures: ``{"removed": [what], "abandoned": [PR ids]}``."""
        query = {k: v for k, v in {"eval_id": eval_id, "test_id": test_id}.items() if v}
        if not query:
            raise PortalError("removing fixtures needs an eval_id or a test_id")
        return self._request("POST", f"/api/fixtures/remove?{urlencode(query)}")

    # -- transport -----------------------------------------------------------------------

    def _request(
        self, method: str, path: str, body: Any = None, extra_headers: Mapping[str, str] | None = None
    ) -> dict[str, Any]:
        """One call (``body`` sent as JSON); the answer must be a JSON object."""
        import urllib.request  # lazy: urllib.request (http.client, email) loads only when a request is made (the checks import this module)

        url = self.base_url + path
        headers = {"Accept": "application/json", **(extra_headers or {})}
        if self._token:
            headers["Authorization"] = f"Bearer {self._token}"
        data = b"" if method == "POST" else None
        if body is not None:
            data = json.dumps(body).encode("utf-8")
            headers["Content-Type"] = "application/json"
        request = urllib.request.Request(url, data=data, headers=headers, method=method)
        shown = f"{method} {self._redact(url)}"
        try:
            with self._opener().open(request, timeout=self.timeout) as response:
                body = response.read()
        except urllib.error.HTTPError as err:
            raise self._status_error(err.code, err.read(), shown) from None
        except http.client.HTTPException as err:  # a broken answer, e.g. not HTTP at all
            raise PortalError(
                f"{shown}: the portal's answer was not valid HTTP ({type(err).__name__})"
            ) from None
        except (urllib.error.URLError, OSError) as err:
            reason = getattr(err, "reason", err)
            raise PortalUnavailable(
                f"the portal at {self._redact(self.base_url)} is not reachable ({shown}): "
                f"{self._redact(str(reason))}"
            ) from None
        try:
            payload = json.loads(body)
        except ValueError:
            raise PortalError(f"{shown}: the portal answered invalid JSON") from None
        if not isinstance(payload, dict):
            raise PortalError(f"{shown}: the portal answered {type(payload).__name__}, not a JSON object")
        return payload

    def _opener(self) -> urllib.request.OpenerDirector:
        """Built at the first request and kept (building one is 0.4 ms: a hook's or a check's every
        request paid it); no proxy for a portal on this machine, else the environment's proxies."""
        if self._built_opener is None:
            if urlsplit(self.base_url).hostname in _LOOPBACK:
                self._built_opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
            else:
                self._built_opener = urllib.request.build_opener()
        return self._built_opener

    def _status_error(self, status: int, raw: bytes, shown: str) -> PortalError:
        try:
            payload = json.loads(raw)
            detail = payload.get("detail", payload) if isinstance(payload, dict) else payload
        except ValueError:
            detail = raw.decode("utf-8", "replace").strip()[:500]
        text = detail if isinstance(detail, str) else json.dumps(detail)
        detail_text = self._redact(text)
        message = f"{shown}: HTTP {status}" + (f": {detail_text}" if detail_text else "")
        if status == 401:
            message += " (check PORTAL_TOKEN)"
        kind = PortalNotFound if status == 404 else PortalError
        return kind(message, status=status, detail=self._redact_value(detail))

    def _redact(self, text: str) -> str:
        """Remove the token (and any user:password in URLs) from a message."""
        if self._token and len(self._token) >= _MIN_REDACTED_TOKEN:
            text = text.replace(self._token, "***")
        return re.sub(r"(https?://)[^/@\s]+@", r"\1***@", text)

    def _redact_value(self, value: Any) -> Any:
        if isinstance(value, str):
            return self._redact(value)
        if self._redact(json.dumps(value, default=str)) != json.dumps(value, default=str):
            return self._redact(json.dumps(value, default=str))
        return value

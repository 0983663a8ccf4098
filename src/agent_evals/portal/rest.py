"""The REST API and the pull request page (see docs/architecture.md, "Portal REST API").

Errors answer ``{"error": "<message>"}`` with the ``PortalError``'s status (400, 404, 409);
the handler is installed by ``app.create_app``. Handlers are sync, so FastAPI runs them
in its thread pool and git calls never block the event loop.
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter
from fastapi.responses import HTMLResponse

from agent_evals.portal.errors import NotFoundError
from agent_evals.portal.html_page import render_not_found, render_pull_request
from agent_evals.portal.models import PullRequest
from agent_evals.portal.service import Portal


def _pr(pr: PullRequest, *, with_diff: bool = False) -> dict[str, Any]:
    return pr.model_dump(mode="json", exclude=None if with_diff else {"diff"})


def build_router(portal: Portal) -> APIRouter:
    router = APIRouter()

    @router.get("/api/health")
    def health() -> dict[str, Any]:
        return {"status": "ok", "spokes": portal.spoke_count()}

    @router.get("/api/spokes")
    def list_spokes(environment: str | None = None, location: str | None = None) -> dict[str, Any]:
        return portal.list_spokes(environment or None, location or None).model_dump(mode="json")

    @router.get("/api/spokes/{name}")
    def get_spoke(name: str) -> dict[str, Any]:
        return portal.get_spoke(name).model_dump(mode="json")

    @router.get("/api/schema")
    def get_schema() -> dict[str, Any]:
        return portal.schema_info().model_dump(mode="json", by_alias=True)

    @router.get("/api/pull-requests")
    def list_pull_requests(
        status: str | None = None, eval_id: str | None = None, test_id: str | None = None, with_diff: bool = False
    ) -> dict[str, Any]:
        found = portal.list_pull_requests(  # "" = no filter
            status or None, eval_id or None, test_id or None, with_diff=with_diff
        )
        return {"pull_requests": [_pr(pr, with_diff=with_diff) for pr in found.pull_requests]}

    @router.get("/api/pull-requests/{pr_id}")
    def get_pull_request(pr_id: int) -> dict[str, Any]:
        return _pr(portal.get_pull_request(pr_id), with_diff=True)

    @router.post("/api/pull-requests/{pr_id}/abandon")
    def abandon_pull_request(pr_id: int) -> dict[str, Any]:
        return _pr(portal.abandon_pull_request(pr_id))

    @router.get("/repos/spokes/pullrequest/{pr_id}", response_class=HTMLResponse)
    def pull_request_page(pr_id: int) -> HTMLResponse:
        try:
            pr = portal.get_pull_request(pr_id)
        except NotFoundError as exc:
            return HTMLResponse(render_not_found(str(exc)), status_code=404)
        return HTMLResponse(render_pull_request(pr))

    return router

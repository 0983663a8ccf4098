"""The REST API and the pull request page (see docs/architecture.md, "Portal REST API").

Errors answer ``{"error": "<message>"}`` with the ``CallerError``'s status (400, 404, 409);
the handler is installed by ``app.create_app``. Handlers are sync, so FastAPI runs them
in its thread pool and git calls never block the event loop.
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse
from pydantic import BaseModel, ConfigDict

from agent_evals.packs.spoke.portal.errors import NotFoundError
from agent_evals.packs.spoke.portal.html_page import render_not_found, render_pull_request
from agent_evals.packs.spoke.portal.models import PullRequest
from agent_evals.packs.spoke.portal.pullrequests import origin_from_headers
from agent_evals.packs.spoke.portal.service import FIXTURE_CREATED_BY, Portal


class NewPullRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    spoke_name: str
    config: dict[str, Any]
    title: str
    description: str = ""
    source_spoke: str | None = None
    status: str = "active"  # fixtures only: active or abandoned


class NewFixtureSpoke(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str
    config: dict[str, Any]


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

    # --- fixtures (docs/architecture.md, "Case fixtures"): eval and test ids from X-Eval-Id / X-Test-Id

    @router.post("/api/fixtures/pull-requests")
    def create_fixture_pull_request(body: NewPullRequest, request: Request) -> dict[str, Any]:
        origin = origin_from_headers(request.headers)
        return _pr(portal.create_fixture_pull_request(
            body.spoke_name, body.config, body.title, body.description, body.source_spoke, origin, body.status
        ))

    @router.post("/api/fixtures/spokes")
    def create_fixture_spoke(body: NewFixtureSpoke, request: Request) -> dict[str, Any]:
        file = portal.fixture_spokes.add(body.name, body.config, origin_from_headers(request.headers))
        return {"name": body.name, "file": file}

    @router.get("/api/fixtures")
    def list_fixtures(eval_id: str | None = None, test_id: str | None = None) -> dict[str, Any]:
        spokes = portal.fixture_spokes.names(eval_id=eval_id or None, test_id=test_id or None)
        prs = portal.list_pull_requests("active", eval_id or None, test_id or None).pull_requests
        return {"spokes": spokes, "pull_requests": [pr.id for pr in prs if pr.created_by == FIXTURE_CREATED_BY]}

    @router.post("/api/fixtures/remove")
    def remove_fixtures(eval_id: str | None = None, test_id: str | None = None) -> dict[str, Any]:
        return portal.remove_fixtures(eval_id=eval_id or None, test_id=test_id or None)

    @router.get("/repos/spokes/pullrequest/{pr_id}", response_class=HTMLResponse)
    def pull_request_page(pr_id: int) -> HTMLResponse:
        try:
            pr = portal.get_pull_request(pr_id)
        except NotFoundError as exc:
            return HTMLResponse(render_not_found(str(exc)), status_code=404)
        return HTMLResponse(render_pull_request(pr))

    return router

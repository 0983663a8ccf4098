"""The stored conversations over REST: read them (paged, sampled), rate one, delete a user's.

| method and path | answer |
| --- | --- |
| ``GET /api/conversations?since=&until=&agent=&count=&rate=&seed=&stratify=&offset=&limit=`` | ``{conversations: [conversation], selected, available, in_progress, next_offset}`` |
| ``GET /api/conversations/{id}`` | one conversation (``{id, user_id, agent, created_at, updated_at, status, turns, tool_calls, tool_errors, feedback, record, history, turn_log}``) |
| ``POST /api/conversations/{id}/feedback`` | ``{"rating": "up"\\|"down", "comment"?: str}`` → ``{id, feedback}`` |
| ``DELETE /api/users/{user_id}/conversations`` | ``{"deleted": n}``: every conversation of that user |

The list selects conversations started in ``[since, until)`` (ISO-8601; default: all), of the
given agents (``agent`` repeated or comma-separated), samples them
(:mod:`agent_evals.live.sampling`: ``count``, ``rate``, ``seed``, ``stratify=down,tool_errors,long``)
and pages through the sample oldest first (``limit`` at most 200, default 100).

Reading and deleting need the portal's token: a portal started without ``PORTAL_TOKEN``
answers 403, so stored conversations are never readable by whoever reaches the port. A
rating comes from the conversation's own user (the ``X-User-Id`` it was started with, when the
front end forwards one). A store that cannot be reached answers 503.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from agent_evals.live.sampling import SampleSpec, SamplingError, parse_strata, select
from agent_evals.live.store import StoreConfigError, StoreUnavailable
from agent_evals.live.store_holder import StoreHolder
from agent_evals.live.stored import Feedback, Rating, parse_time
from agent_evals.validation_errors import describe
from agent_evals.secrets import scrub

MAX_LIMIT = 200
DEFAULT_LIMIT = 100
NO_TOKEN = (
    "stored conversations are readable only with the portal's token: start the portal with PORTAL_TOKEN set"
)


class FeedbackRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    rating: Rating
    comment: str | None = Field(default=None, max_length=2_000)


class RouteError(Exception):
    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


def build_conversations_router(store: StoreHolder) -> APIRouter:
    router = APIRouter()

    async def answer(request: Request, work: Callable[[Any], Any], *, needs_token: bool = True) -> JSONResponse:
        try:
            if needs_token and not request.app.state.config.token:
                raise RouteError(403, NO_TOKEN)
            opened = await asyncio.to_thread(store.get, request.app.state)
            return JSONResponse(await asyncio.to_thread(work, opened))
        except RouteError as exc:
            return JSONResponse({"error": str(exc)}, status_code=exc.status)
        except (StoreUnavailable, StoreConfigError) as exc:
            return JSONResponse({"error": f"the conversation store is unavailable: {exc}"}, status_code=503)

    @router.get("/api/conversations")
    async def list_conversations(request: Request) -> JSONResponse:
        return await answer(request, lambda opened: _page(opened, dict(request.query_params), request))

    @router.get("/api/conversations/{conversation_id}")
    async def get_conversation(conversation_id: str, request: Request) -> JSONResponse:
        def work(opened: Any) -> Any:
            found = opened.get(conversation_id)
            if found is None:
                raise RouteError(404, f"unknown conversation {conversation_id!r}")
            return found.to_dict()

        return await answer(request, work)

    @router.post("/api/conversations/{conversation_id}/feedback")
    async def feedback(conversation_id: str, request: Request) -> JSONResponse:
        try:
            body = FeedbackRequest.model_validate_json(await request.body())
        except ValidationError as exc:
            return JSONResponse({"error": f"invalid feedback: {describe(exc, top='body')}"}, status_code=400)
        user = request.headers.get("x-user-id")

        def work(opened: Any) -> Any:
            found = opened.get(conversation_id)
            if found is None or (user is not None and user.strip() != found.user_id):
                raise RouteError(404, f"unknown conversation {conversation_id!r} for this user")
            given = Feedback(body.rating, body.comment, time.time())
            opened.rate(conversation_id, Feedback(given.rating, _scrubbed(given.comment), given.at))
            return {"id": conversation_id, "feedback": opened.get(conversation_id).feedback.to_dict()}

        return await answer(request, work, needs_token=False)

    @router.delete("/api/users/{user_id}/conversations")
    async def delete_user(user_id: str, request: Request) -> JSONResponse:
        return await answer(request, lambda opened: {"user_id": user_id, "deleted": opened.delete_user(user_id)})

    return router


def _page(opened: Any, query: dict[str, str], request: Request) -> dict[str, Any]:
    try:
        since = parse_time(query["since"]) if query.get("since") else 0.0
        until = parse_time(query["until"]) if query.get("until") else time.time() + 86_400
        spec = SampleSpec(
            count=int(query["count"]) if query.get("count") else None,
            rate=float(query["rate"]) if query.get("rate") else None,
            seed=int(query.get("seed") or 0),
            stratify=parse_strata(query.get("stratify")),
        )
        offset = int(query.get("offset") or 0)
        limit = min(int(query.get("limit") or DEFAULT_LIMIT), MAX_LIMIT)
    except (ValueError, SamplingError) as exc:
        raise RouteError(400, f"invalid query: {exc}") from None
    if offset < 0 or limit < 1:
        raise RouteError(400, "invalid query: offset must be 0 or more and limit at least 1")
    agents = [a.strip() for value in request.query_params.getlist("agent") for a in value.split(",") if a.strip()]
    now = time.time()
    sample = select(opened.candidates(since, until, agents), spec, now=now)
    ids = sample.ids[offset : offset + limit]
    conversations = []
    for conversation in opened.fetch(ids):
        item = conversation.to_dict(now)
        if conversation.id in sample.strata:
            item["stratum"] = sample.strata[conversation.id]
        conversations.append(item)
    following = offset + limit
    return {
        "conversations": conversations,
        "selected": len(sample.ids),
        "available": sample.available,
        "in_progress": sample.in_progress,
        "next_offset": following if following < len(sample.ids) else None,
    }


def _scrubbed(text: str | None) -> str | None:
    return scrub(text) if text is not None else None

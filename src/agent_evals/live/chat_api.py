"""``POST /api/agents/{name}/chat``: the production agent, served by the portal.

Request ``{"conversation_id"?: str, "message": str}``; answer::

    {"conversation_id": "...", "reply": "...",
     "tool_calls": [{"name": ..., "arguments": {...} | null, "outcome": "ok", "is_error": false,
                     "server": "portal" | null}],
     "usage": {"prompt_tokens", "completion_tokens", "total_tokens", "calls", "cost"},
     "stop_reason": "reply" | "max_tool_rounds" | "max_tokens"}

Leave ``conversation_id`` out to start a conversation; send the one you got back to
continue it. Each message runs one turn of the same loop the evaluations run
(:func:`agent_evals.agent.loop.run_turn`) with the conversation's history.

**Conversations last.** Each one is stored (:mod:`agent_evals.live.store`: SQLite in the data
dir, or PostgreSQL) with the user it belongs to (the ``X-User-Id`` header the portal's front end
forwards, else the caller the token authenticated), the agent's version and each turn as the
run record the evaluations produce, so it survives a restart, can be continued, rated
(``POST /api/conversations/{id}/feedback``) and scored by ``agent-evals live``. The user's
message is stored before the agent runs; a turn that fails or is cut off by a crash says so
in the record. Secrets are scrubbed before anything is stored (:mod:`agent_evals.live.turns`).
A conversation belongs to one agent and one user: another one's id is unknown (404).

The agent's servers are resolved with ``PORTAL_URL`` (the portal's own address over loopback) and
``PORTAL_TOKEN`` (the portal's token) given as variables, so an agent whose ``agent.yaml`` names
``${PORTAL_URL}/mcp/`` reaches the portal's tools through its MCP endpoint, as
``X-Created-By: portal-chat:<agent>``: its pull requests say where they came from. One MCP
session per server is opened per message (stdio servers are started for it).
Each turn is traced in the OpenTelemetry GenAI conventions when telemetry is configured
(:mod:`agent_evals.live.telemetry`).

Errors answer ``{"error": "<message>"}``: 400 bad request body or user id, 404 unknown agent
(naming the agents) or unknown conversation, 503 LLM not configured (naming the variables to
set) or the conversation store unavailable (nothing is sent to the agent), 502 the model or one of
the agent's MCP servers failed, 500 a broken agent configuration (an unset variable too). A failed turn leaves the history as it was,
so the message can be sent again.

The router is built by :func:`build_chat_router` (with the stored conversations' routes, on one store:
:func:`agent_evals.live.routers.live_routers`); ``agent-evals portal serve`` mounts it.
Importing this module does not import the model's HTTP client (that happens on the first
model call).
"""

from __future__ import annotations

import asyncio
import logging
import os
import re
import secrets
import time
import weakref
from collections import OrderedDict
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from fastapi import APIRouter, FastAPI, Request
from fastapi.responses import JSONResponse
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from agent_evals.agent.config import AgentConfig, AgentConfigError, available_agents, load_agent_config
from agent_evals.agent.errors import ServerUnavailable
from agent_evals.agent.factory import Agent, close_model
from agent_evals.agent.mcp_servers import resolve_servers
from agent_evals.agent.types import AgentReply, StopReason
from agent_evals.live.store import ConversationStore, StoreUnavailable
from agent_evals.live.store_holder import StoreHolder
from agent_evals.live.stored import StoredConversation
from agent_evals.live.telemetry import Telemetry
from agent_evals.live.turns import begin_turn, fail_turn, finish_turn
from agent_evals.llm.types import ChatModel, LLMConfigError, LLMError
from agent_evals.packs import GenericPack, Pack
from agent_evals.record import AgentInfo, ErrorKind, KitError, ToolCall
from agent_evals.validation_errors import describe
from agent_evals.llm.settings import chat_model

log = logging.getLogger(__name__)

CHAT_PATH = "/api/agents/{name}/chat"
MAX_MESSAGE_CHARS = 20_000
USER_HEADER = "x-user-id"
KEPT_CONVERSATIONS = 256  # conversations kept in memory after their turn (the store is the truth)
TOKEN_USER = "token"  # the caller the portal's token authenticated, when no X-User-Id is forwarded
ANONYMOUS = "anonymous"  # a portal without a token
_USER_ID = re.compile(r"[^\x00-\x1f\x7f]{1,200}")
_LOOPBACK = ("127.0.0.1", "localhost", "::1")
_WILDCARD = {"0.0.0.0": "127.0.0.1", "::": "::1", "": "127.0.0.1"}


class ChatRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    conversation_id: str | None = Field(default=None, min_length=1, max_length=200)
    message: str = Field(min_length=1, max_length=MAX_MESSAGE_CHARS)


class ChatResponse(BaseModel):
    conversation_id: str
    reply: str
    tool_calls: list[dict[str, Any]]  # {name, arguments, outcome, is_error, server} of each record ToolCall
    usage: dict[str, Any]
    stop_reason: StopReason

    @classmethod
    def of(cls, conversation_id: str, reply: AgentReply) -> ChatResponse:
        calls = [
            {"name": c.name, "arguments": c.arguments, "outcome": c.outcome, "is_error": c.is_error, "server": c.server}
            for c in reply.tool_calls
        ]
        return cls(
            conversation_id=conversation_id,
            reply=reply.text,
            tool_calls=calls,
            usage=reply.usage.as_dict(),
            stop_reason=reply.stop_reason,
        )


class ChatError(Exception):
    """A chat request that cannot be answered; ``status`` and the message go to the client."""

    def __init__(self, status: int, message: str, kind: ErrorKind = "internal") -> None:
        super().__init__(message)
        self.status = status
        self.kind = kind


def new_conversation_id() -> str:
    """An unguessable id: knowing it (and being its user) is what lets a client continue a conversation.
    Hex, so it never starts with ``-`` (``agent-evals live promote -bf…`` read one as an option)."""
    return secrets.token_hex(16)


def user_of(request: Request) -> str:
    """Who is chatting: the ``X-User-Id`` the front end forwards, else the token's caller."""
    forwarded = request.headers.get(USER_HEADER)
    if forwarded is not None:
        if not _USER_ID.fullmatch(forwarded.strip()):
            raise ChatError(400, "invalid X-User-Id: 1 to 200 characters, no control characters")
        return forwarded.strip()
    return TOKEN_USER if request.app.state.config.token else ANONYMOUS


class ChatService:
    """Runs chat turns: agent configurations, one chat model per agent, the stored conversations."""

    def __init__(
        self, *, config_dir: Path | None = None, store: StoreHolder | None = None, pack: Pack | None = None,
        telemetry: Telemetry | None = None,
    ) -> None:
        self.config_dir = config_dir
        self.store = store or StoreHolder()
        self.pack = pack or GenericPack()
        self.telemetry = telemetry or Telemetry.disabled()
        self._models: dict[str, ChatModel] = {}
        self._recent: OrderedDict[str, StoredConversation] = OrderedDict()  # answered last here, as stored
        self._locks: weakref.WeakValueDictionary[str, asyncio.Lock] = weakref.WeakValueDictionary()

    async def chat(
        self, name: str, request: ChatRequest, variables: dict[str, str], user: str, state: Any
    ) -> ChatResponse:
        config = self._config(name)
        model = self._model(config)
        store = await _call(self.store.get, state)
        cid = request.conversation_id or new_conversation_id()
        lock = self._locks.setdefault(cid, asyncio.Lock())
        info = Agent(config, model).info  # the agent's version: model, temperature, instructions
        async with lock:
            conversation = await self._recent_begun(store, info, request, user)
            if conversation is None:
                conversation = await self._conversation(store, info, request.conversation_id, cid, user)
                begin_turn(conversation, request.message, info, store.settings.instance)
                await self._save(store, conversation, "the message was not sent to the agent",
                                 begin=request.conversation_id is not None)
            history = [*conversation.history, {"role": "user", "content": request.message}]
            reply = await self._turn(config, model, variables, history, conversation, store)
            await self._save(store, conversation, "the reply could not be stored; the conversation is as before")
            self._keep(conversation)
        return ChatResponse.of(conversation.id, reply)

    async def _recent_begun(
        self, store: ConversationStore, info: AgentInfo, request: ChatRequest, user: str
    ) -> StoredConversation | None:
        """The conversation this process answered last, begun, when the store still holds it as it was
        (one conditional update instead of reading the record again); else None."""
        kept = self._recent.pop(request.conversation_id or "", None)
        if kept is None or kept.agent.name != info.name or kept.user_id != user:
            return None
        before = kept.updated_at
        begin_turn(kept, request.message, info, store.settings.instance)
        try:
            fresh = await asyncio.to_thread(store.mark_answering, kept, True, before)
        except StoreUnavailable as exc:
            raise ChatError(503, f"the conversation store is unavailable: {exc}; the message was not sent to the "
                                 "agent", "system") from exc
        return kept if fresh else None

    def _keep(self, conversation: StoredConversation) -> None:
        self._recent[conversation.id] = conversation
        while len(self._recent) > KEPT_CONVERSATIONS:
            self._recent.popitem(last=False)

    async def _conversation(
        self, store: ConversationStore, info: AgentInfo, given: str | None, cid: str, user: str
    ) -> StoredConversation:
        if given is None:
            return StoredConversation.new(cid, user, info)
        found = await _call(store.get, given)
        if found is None or found.agent.name != info.name or found.user_id != user:
            raise ChatError(404, _unknown_conversation(info.name, given))
        return found

    async def _turn(
        self, config: AgentConfig, model: ChatModel, variables: dict[str, str], history: list[Any],
        conversation: StoredConversation, store: ConversationStore,
    ) -> AgentReply:
        started = time.perf_counter()
        calls: list[ToolCall] = []
        traced = self.telemetry.wrap_model(model, conversation.id)
        with self.telemetry.invoke_agent(conversation.agent, conversation.id) as span:
            try:
                servers = resolve_servers(config.name, config.servers, variables, environ=os.environ,
                                          base_dir=config.folder,
                                          headers={"X-Created-By": f"portal-chat:{config.name}"})
                async with Agent(config, traced, servers, wrap_tools=self.telemetry.wrap_tools) as agent:
                    reply = await agent.respond(history, on_tool_call=calls.append)
            except (LLMError, ServerUnavailable, AgentConfigError) as exc:
                error = _chat_error(exc)
                span.failed(error.kind, str(error))
                fail_turn(conversation, error.kind, str(error), tuple(calls))
                await self._save_quietly(store, conversation)
                log.warning("chat %s/%s… failed: %s", config.name, conversation.id[:6], error)
                raise error from exc
            span.answered(reply.usage, reply.stop_reason)
        finish_turn(conversation, text=reply.text, calls=reply.tool_calls, usage=reply.usage,
                    stop_reason=reply.stop_reason, messages=reply.messages, pack=self.pack)
        log.info(
            "chat %s/%s…: %d tool call(s), %s, %.0f ms",  # a prefix: the id is what lets one continue
            config.name, conversation.id[:6], len(reply.tool_calls), reply.stop_reason,
            (time.perf_counter() - started) * 1000,
        )
        return reply

    async def _save(
        self, store: ConversationStore, conversation: StoredConversation, consequence: str, *, begin: bool = False
    ) -> None:
        try:
            if begin:
                await asyncio.to_thread(store.mark_answering, conversation, True)
            else:
                await asyncio.to_thread(store.save, conversation)
        except StoreUnavailable as exc:
            raise ChatError(503, f"the conversation store is unavailable: {exc}; {consequence}", "system") from exc

    async def _save_quietly(self, store: ConversationStore, conversation: StoredConversation) -> None:
        try:
            await asyncio.to_thread(store.save, conversation)
        except StoreUnavailable as exc:
            log.warning("chat %s…: the failed turn could not be stored: %s", conversation.id[:6], exc)

    async def aclose(self) -> None:
        models, self._models = self._models, {}
        for model in models.values():
            await close_model(model)
        self.telemetry.shutdown()
        self.store.close()

    def _config(self, name: str) -> AgentConfig:
        agents = available_agents(self.config_dir)
        if name not in agents:
            raise ChatError(404, f"unknown agent {name!r}; agents: {', '.join(agents) or 'none'}")
        try:
            return load_agent_config(name, config_dir=self.config_dir)
        except AgentConfigError as exc:
            raise ChatError(500, str(exc), "config") from exc

    def _model(self, config: AgentConfig) -> ChatModel:
        """The agent's chat model, built once per agent (its HTTP client is reused)."""
        model = self._models.get(config.name)
        if model is None:
            try:
                model = chat_model("agent", default_model=config.model, default_max_tokens=config.max_tokens)
            except LLMConfigError as exc:
                raise ChatError(503, f"the agent's LLM is not configured: {exc}", "config") from exc
            self._models[config.name] = model
        return model


async def _call(function: Any, *args: Any) -> Any:
    """A store call off the event loop; an unavailable store is a 503."""
    try:
        return await asyncio.to_thread(function, *args)
    except KitError as exc:  # StoreUnavailable, StoreConfigError
        raise ChatError(503, f"the conversation store is unavailable: {exc}; the message was not sent to the agent",
                        exc.kind) from exc


def _chat_error(exc: Exception) -> ChatError:
    if isinstance(exc, LLMConfigError):
        return ChatError(503, str(exc), "config")
    if isinstance(exc, AgentConfigError):
        return ChatError(500, str(exc), "config")
    return ChatError(502, str(exc), getattr(exc, "kind", "internal"))


def _unknown_conversation(agent: str, conversation_id: str) -> str:
    return (
        f"unknown conversation {conversation_id!r} for agent {agent!r} and this user; "
        "leave out conversation_id to start a new one"
    )


def loopback_url(public_url: str, server: tuple[str, int | None] | None) -> str:
    """Where the portal reaches itself: its public URL when that is on loopback, else the socket
    the request came in on (a wildcard bind address becomes loopback)."""
    if urlsplit(public_url).hostname in _LOOPBACK or server is None or server[1] is None:
        return public_url.rstrip("/")
    host, port = server
    host = _WILDCARD.get(host, host)
    return f"http://[{host}]:{port}" if ":" in host else f"http://{host}:{port}"


def portal_variables(request: Request) -> dict[str, str]:
    """``PORTAL_URL`` and ``PORTAL_TOKEN`` for the agent's servers: this portal over loopback, from
    ``request.app.state.config`` (a ``PortalConfig``); no token: an empty one (its header is not sent)."""
    config = request.app.state.config
    return {"PORTAL_URL": loopback_url(config.public_url, request.scope.get("server")),
            "PORTAL_TOKEN": config.token or ""}


def build_chat_router(
    *, config_dir: Path | None = None, store: StoreHolder | None = None, pack: Pack | None = None,
    telemetry: Telemetry | None = None,
) -> APIRouter:
    """The router with ``POST /api/agents/{name}/chat``.
    ``telemetry`` None reads the environment (:meth:`Telemetry.from_env`)."""
    service = ChatService(
        config_dir=config_dir, store=store, pack=pack, telemetry=telemetry or Telemetry.from_env()
    )

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        yield
        await service.aclose()

    router = APIRouter(lifespan=lifespan)

    @router.post(CHAT_PATH)
    async def chat(name: str, request: Request) -> JSONResponse:
        try:
            body = ChatRequest.model_validate_json(await request.body())
        except ValidationError as exc:
            return JSONResponse({"error": f"invalid chat request: {describe(exc, top='body')}"}, status_code=400)
        try:
            answer = await service.chat(name, body, portal_variables(request), user_of(request), request.app.state)
        except ChatError as exc:
            return JSONResponse({"error": str(exc)}, status_code=exc.status)
        return JSONResponse(answer.model_dump(mode="json"))

    return router

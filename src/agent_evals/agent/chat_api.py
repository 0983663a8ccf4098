"""``POST /api/agents/{name}/chat``: the production agent, served by the portal.

Request ``{"conversation_id"?: str, "message": str}``; answer::

    {"conversation_id": "...", "reply": "...",
     "tool_calls": [{"name": ..., "arguments": {...} | null, "outcome": "ok", "is_error": false}],
     "usage": {"prompt_tokens", "completion_tokens", "total_tokens", "calls", "cost"},
     "stop_reason": "reply" | "max_tool_rounds" | "max_tokens"}

Leave ``conversation_id`` out to start a conversation; send the one you got back to
continue it. Each message runs one turn of the same loop the evaluations run
(:func:`agent_evals.agent.loop.run_turn`) with the conversation's history, which the
portal keeps in memory (:mod:`agent_evals.agent.chat_store`): bounded in number,
forgotten on restart. Messages to one conversation are answered one at a time.

The agent reaches the portal's tools through the portal's own MCP endpoint over
loopback with the portal's token, as ``X-Created-By: portal-chat:<agent>``, so its
pull requests say where they came from. One MCP session is opened per message.

Errors answer ``{"error": "<message>"}``: 400 bad request body, 404 unknown agent
(naming the agents) or unknown conversation, 503 LLM not configured (naming the
variables to set), 502 the model or the portal failed, 500 a broken agent configuration.
A failed turn leaves the conversation as it was, so the message can be sent again.

The router is built by :func:`build_chat_router`; ``agent-evals portal serve`` mounts it.
Importing this module does not import the ``openai`` SDK (that happens on the first
model call).
"""

from __future__ import annotations

import logging
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from fastapi import APIRouter, FastAPI, Request
from fastapi.responses import JSONResponse
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from agent_evals.agent.chat_store import (
    DEFAULT_MAX_CONVERSATIONS,
    Conversation,
    ConversationStore,
    new_conversation_id,
)
from agent_evals.agent.config import AgentConfig, AgentConfigError, available_agents, load_agent_config
from agent_evals.agent.factory import Agent, close_model
from agent_evals.agent.portal_tools import PortalConnection, PortalUnavailable
from agent_evals.agent.types import AgentReply, StopReason
from agent_evals.llm.types import ChatModel, LLMConfigError, LLMError
from agent_evals.validation_errors import describe

log = logging.getLogger(__name__)

CHAT_PATH = "/api/agents/{name}/chat"
MAX_MESSAGE_CHARS = 20_000
_LOOPBACK = ("127.0.0.1", "localhost", "::1")
_WILDCARD = {"0.0.0.0": "127.0.0.1", "::": "::1", "": "127.0.0.1"}


class ChatRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    conversation_id: str | None = Field(default=None, min_length=1, max_length=200)
    message: str = Field(min_length=1, max_length=MAX_MESSAGE_CHARS)


class ChatResponse(BaseModel):
    conversation_id: str
    reply: str
    tool_calls: list[dict[str, Any]]  # {name, arguments, outcome, is_error} of each record ToolCall
    usage: dict[str, Any]
    stop_reason: StopReason

    @classmethod
    def of(cls, conversation_id: str, reply: AgentReply) -> ChatResponse:
        calls = [
            {"name": c.name, "arguments": c.arguments, "outcome": c.outcome, "is_error": c.is_error}
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

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


class ChatService:
    """Runs chat turns: agent configurations, one chat model per agent, the conversations."""

    def __init__(self, *, config_dir: Path | None = None, max_conversations: int = DEFAULT_MAX_CONVERSATIONS):
        self.config_dir = config_dir
        self.conversations = ConversationStore(max_conversations)
        self._models: dict[str, ChatModel] = {}

    async def chat(self, name: str, request: ChatRequest, portal: PortalConnection) -> ChatResponse:
        config = self._config(name)
        if request.conversation_id is None:
            conversation = Conversation(id=new_conversation_id(), agent=name)
        else:
            found = self.conversations.get(name, request.conversation_id)
            if found is None:
                raise ChatError(404, _unknown_conversation(name, request.conversation_id))
            conversation = found
        model = self._model(config)
        async with conversation.lock:
            history = [*conversation.history, {"role": "user", "content": request.message}]
            reply = await self._turn(config, model, portal, history, conversation.id)
            conversation.history = [*history, *reply.messages]
        if request.conversation_id is None:
            self.conversations.add(conversation)  # only now: a failed first turn leaves nothing behind
        return ChatResponse.of(conversation.id, reply)

    async def aclose(self) -> None:
        models, self._models = self._models, {}
        for model in models.values():
            await close_model(model)

    async def _turn(
        self, config: AgentConfig, model: ChatModel, portal: PortalConnection, history: list[Any], cid: str
    ) -> AgentReply:
        started = time.perf_counter()
        connection = portal.with_headers({"X-Created-By": f"portal-chat:{config.name}"})
        try:
            async with Agent(config, model, connection) as agent:
                reply = await agent.respond(history)
        except LLMConfigError as exc:
            raise ChatError(503, str(exc)) from exc
        except (LLMError, PortalUnavailable) as exc:
            log.warning("chat %s/%s… failed: %s", config.name, cid[:6], exc)
            raise ChatError(502, str(exc)) from exc
        except AgentConfigError as exc:
            raise ChatError(500, str(exc)) from exc
        log.info(
            "chat %s/%s…: %d tool call(s), %s, %.0f ms",  # a prefix: the id is what lets one continue
            config.name,
            cid[:6],
            len(reply.tool_calls),
            reply.stop_reason,
            (time.perf_counter() - started) * 1000,
        )
        return reply

    def _config(self, name: str) -> AgentConfig:
        agents = available_agents(self.config_dir)
        if name not in agents:
            raise ChatError(404, f"unknown agent {name!r}; agents: {', '.join(agents) or 'none'}")
        try:
            return load_agent_config(name, config_dir=self.config_dir)
        except AgentConfigError as exc:
            raise ChatError(500, str(exc)) from exc

    def _model(self, config: AgentConfig) -> ChatModel:
        """The agent's chat model, built once per agent (its HTTP client is reused)."""
        model = self._models.get(config.name)
        if model is None:
            from agent_evals.llm.settings import chat_model

            try:
                model = chat_model("agent", default_model=config.model, default_max_tokens=config.max_tokens)
            except LLMConfigError as exc:
                raise ChatError(503, f"the agent's LLM is not configured: {exc}") from exc
            self._models[config.name] = model
        return model


def _unknown_conversation(agent: str, conversation_id: str) -> str:
    return (
        f"unknown conversation {conversation_id!r} for agent {agent!r}: conversations are kept in memory, "
        "so it may have been evicted or the portal restarted; leave out conversation_id to start a new one"
    )


def loopback_url(public_url: str, server: tuple[str, int | None] | None) -> str:
    """Where the portal reaches itself: its public URL when that is on loopback, else the socket
    the request came in on (a wildcard bind address becomes loopback)."""
    if urlsplit(public_url).hostname in _LOOPBACK or server is None or server[1] is None:
        return public_url.rstrip("/")
    host, port = server
    host = _WILDCARD.get(host, host)
    return f"http://[{host}]:{port}" if ":" in host else f"http://{host}:{port}"


def portal_connection(request: Request) -> PortalConnection:
    """The connection back to this portal, from ``request.app.state.config`` (a ``PortalConfig``)."""
    config = request.app.state.config
    return PortalConnection(loopback_url(config.public_url, request.scope.get("server")), config.token)


def build_chat_router(
    *, config_dir: Path | None = None, max_conversations: int = DEFAULT_MAX_CONVERSATIONS
) -> APIRouter:
    """The router with ``POST /api/agents/{name}/chat``; its service is ``router.chat_service``."""
    service = ChatService(config_dir=config_dir, max_conversations=max_conversations)

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        yield
        await service.aclose()

    router = APIRouter(lifespan=lifespan)
    router.chat_service = service  # type: ignore[attr-defined]

    @router.post(CHAT_PATH)
    async def chat(name: str, request: Request) -> JSONResponse:
        try:
            body = ChatRequest.model_validate_json(await request.body())
        except ValidationError as exc:
            return JSONResponse({"error": f"invalid chat request: {describe(exc, top='body')}"}, status_code=400)
        try:
            answer = await service.chat(name, body, portal_connection(request))
        except ChatError as exc:
            return JSONResponse({"error": str(exc)}, status_code=exc.status)
        return JSONResponse(answer.model_dump(mode="json"))

    return router

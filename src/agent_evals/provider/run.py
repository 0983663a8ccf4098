"""Run one Promptfoo test case: build the agent and the user, hold the conversation, report.

``call_api`` is what ``providers/agent.py`` exposes to Promptfoo. Every call gets
its own event loop and its own MCP session; nothing is kept between calls, so a
worker's memory stays flat over many conversations.

When the run cannot happen or breaks off (bad configuration, portal down, model
unreachable, a cassette that no longer fits), the answer is a Promptfoo
``error``, with the conversation so far and the pull requests created so far in
``metadata`` so the cleanup hook still finds them.
"""

from __future__ import annotations

import asyncio
import logging
import re
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from agent_evals.agent.factory import close_model, create_agent, load_factory
from agent_evals.agent.types import ConversationalAgent
from agent_evals.cleanup import run_id
from agent_evals.contract import AgentInfo
from agent_evals.conversation.cassette import Cassette, cassette_filename, load_cassette, save_cassette
from agent_evals.conversation.driver import ConversationRecord, describe_error, run_conversation
from agent_evals.conversation.replay import RecordingChatModel, ReplaySession, finish_recording
from agent_evals.conversation.report import build_metadata, render_output, token_usage
from agent_evals.conversation.users import BaseUserSimulator, FixedMessages, SimulatedUser
from agent_evals.llm.types import ChatModel, Usage
from agent_evals.provider.config import ProviderConfig, ProviderConfigError, parse_config
from agent_evals.secrets import redact

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class CaseIdentity:
    """Who this conversation is: the case, the eval run, and a unique trace id for its PRs."""

    case_id: str
    eval_id: str
    test_id: str
    repeat: int

    @classmethod
    def from_context(cls, context: Mapping[str, Any], variant: str | None = None) -> CaseIdentity:
        test = context.get("test") or {}
        metadata = test.get("metadata") or {}
        vars_ = context.get("vars") or {}
        case_id = str(metadata.get("id") or _leading_id(test.get("description")) or f"test{context.get('testIdx', 0)}")
        repeat = int(context.get("repeatIndex") or vars_.get("__repeatIndex") or 0)
        eval_id = run_id(context.get("evaluationId") or vars_.get("__evalId")) or "adhoc"
        suffix = (f".r{repeat}" if repeat else "") + (f"--{variant}" if variant else "")
        return cls(case_id, eval_id, f"{case_id}{suffix}#{uuid.uuid4().hex[:8]}", repeat)


def _leading_id(description: Any) -> str | None:
    match = re.match(r"\s*([A-Za-z]+\d+)\b", str(description or ""))
    return match.group(1) if match else None


def call_api(prompt: str, options: Mapping[str, Any] | None, context: Mapping[str, Any] | None) -> dict[str, Any]:
    """Promptfoo's provider entry point."""
    options = options or {}
    context = context or {}
    try:
        config = parse_config(options.get("config"), context.get("vars"))
    except ProviderConfigError as exc:
        identity = CaseIdentity.from_context(context)
        return _response(ConversationRecord(end="error", error=str(exc)), _unbuilt_agent(options.get("config")),
                         Usage(), identity)
    identity = CaseIdentity.from_context(context, config.variant)
    return asyncio.run(run_case(prompt, config, identity))


async def run_case(prompt: str, config: ProviderConfig, identity: CaseIdentity) -> dict[str, Any]:
    """Hold one conversation (or one turn) and shape Promptfoo's answer; never raises for a failed run."""
    record = ConversationRecord()
    agent_info = _unbuilt_agent(config.model_dump())
    user: BaseUserSimulator | None = None
    cassette: Cassette | None = None
    agent_model: ChatModel | None = None
    session: ReplaySession | None = None
    try:
        session = _replay_session(config, identity)
        if session is not None:
            session.check_user_kind(_user_kind(config))
        cassette = Cassette(case_id=identity.case_id, user={"kind": _user_kind(config)}) if config.record_dir() else None
        user = _build_user(config, prompt, session, cassette)
        agent_model = _agent_model(config, session, cassette)
        agent = _build_agent(config, identity, agent_model)
        agent_info = agent.info
        if cassette is not None:
            cassette.agent = dict(agent_info)
        async with agent:
            await run_conversation(
                agent, user, max_turns=1 if config.mode == "single_turn" else config.max_turns, record=record,
                on_turn=session.check_turn if session else None,
                on_user_message=session.check_user_message if session else None,
            )
        if session is not None:
            session.finish(record)
    except Exception as exc:  # reported as a Promptfoo error, with everything done so far
        record.end = "error"
        record.error = record.error or describe_error(exc)
        log.warning("case %s: %s", identity.case_id, record.error)
        log.debug("case %s failed", identity.case_id, exc_info=True)
        _add_traced_pull_requests(record, identity)
    finally:
        await _close_models(agent_model, user.llm if user is not None else None)
        if cassette is not None:
            _save(cassette, record, config, identity)
    return _response(
        record, agent_info, user.usage if user is not None else Usage(), identity,
        single_turn=config.mode == "single_turn", replayed_from=session.name if session is not None else None,
    )


def _unbuilt_agent(config: Mapping[str, Any] | None) -> AgentInfo:
    """What is known of the agent before it was built (for errors that happen first)."""
    config = config or {}
    temperature = config.get("temperature")
    return {
        "name": str(config.get("agent") or "spoke"),
        "model": str(config.get("model") or ""),
        "temperature": float(temperature) if isinstance(temperature, (int, float)) else None,
        "instructions_sha256": "",
    }


async def _close_models(*models: ChatModel | None) -> None:
    for model in models:
        if model is None:
            continue
        try:
            await close_model(model)
        except Exception as exc:  # noqa: BLE001 - closing an HTTP client must not hide the conversation's result
            log.warning("could not close chat model %s: %s", getattr(model, "model", "?"), exc)


def _user_kind(config: ProviderConfig) -> str:
    if config.mode == "single_turn":
        return "single_turn"
    if config.user_messages is not None:
        return "user_messages"
    return "class" if config.simulated_user and config.simulated_user.class_ else "simulated_user"


def _response(
    record: ConversationRecord,
    agent: AgentInfo,
    user_usage: Usage,
    identity: CaseIdentity,
    *,
    single_turn: bool = False,
    replayed_from: str | None = None,
) -> dict[str, Any]:
    """Promptfoo's answer. A replay spends nothing: Promptfoo's tokens and cost are 0, while
    ``metadata.usage`` keeps what the recorded conversation cost and ``metadata.replay`` names it."""
    metadata = dict(build_metadata(record, agent, user_usage, case_id=identity.case_id))
    metadata["trace"] = {"eval_id": identity.eval_id, "test_id": identity.test_id}
    total = Usage() if replayed_from else record.agent_usage + user_usage
    if replayed_from:
        metadata["replay"] = {"cassette": replayed_from}
    response: dict[str, Any] = {
        "output": render_output(record, single_turn=single_turn),
        "metadata": metadata,
        "tokenUsage": token_usage(total),
        "cost": total.cost,
    }
    if record.error:
        response["error"] = record.error
    return redact(response)


def _replay_session(config: ProviderConfig, identity: CaseIdentity) -> ReplaySession | None:
    folder = config.replay_dir()
    if folder is None:
        return None
    name = cassette_filename(identity.case_id, variant=config.variant, repeat=identity.repeat)
    path = folder / name
    if not path.is_file() and identity.repeat:
        path = folder / cassette_filename(identity.case_id, variant=config.variant)  # repeats share one cassette
    return ReplaySession(load_cassette(path), path.name)


def _save(cassette: Cassette, record: ConversationRecord, config: ProviderConfig, identity: CaseIdentity) -> None:
    folder = config.record_dir()
    assert folder is not None
    path = folder / cassette_filename(identity.case_id, variant=config.variant, repeat=identity.repeat)
    try:
        save_cassette(finish_recording(cassette, record), path)
    except OSError as exc:
        record.error = record.error or f"could not write cassette {path}: {exc}"
        record.end = record.end if record.end else "error"


def _build_user(
    config: ProviderConfig, prompt: str, session: ReplaySession | None, cassette: Cassette | None
) -> BaseUserSimulator:
    if config.mode == "single_turn":
        if not isinstance(prompt, str) or not prompt.strip():
            raise ProviderConfigError("mode single_turn: the prompt is empty; the prompt is the user's one message")
        return FixedMessages([prompt])
    if config.user_messages is not None:
        return FixedMessages(config.user_messages)
    spec = config.simulated_user
    assert spec is not None
    if spec.class_:
        cls = _load_simulator(spec.class_)
        llm = _user_model(config, session, cassette, required=False)
        return cls(params=spec.params, llm=llm)
    llm = _user_model(config, session, cassette, required=True)
    assert llm is not None
    return SimulatedUser(
        llm=llm, goal=spec.goal or "", persona=spec.persona, facts=spec.facts,
        instructions=spec.instructions, temperature=config.user_temperature,
    )


def _user_model(
    config: ProviderConfig, session: ReplaySession | None, cassette: Cassette | None, *, required: bool
) -> ChatModel | None:
    if session is not None:
        return session.model("user")
    from agent_evals.llm.settings import chat_model, llm_configured

    if not required and not llm_configured():
        return None
    model = chat_model("user", model=config.user_model)
    if cassette is not None:
        cassette.user["model"] = model.model
        return RecordingChatModel(model, "user", cassette)
    return model


def _build_agent(config: ProviderConfig, identity: CaseIdentity, chat_model: ChatModel | None) -> ConversationalAgent:
    factory = load_factory(config.factory) if config.factory else create_agent
    instructions = str(config.resolve(config.instructions_file)) if config.instructions_file else None
    headers = {
        "X-Eval-Id": identity.eval_id,
        "X-Test-Id": identity.test_id,
        "X-Created-By": f"agent-evals:{config.agent}",
    }
    return factory(
        config.agent,
        instructions_file=instructions,
        model=config.model,
        temperature=config.temperature,
        max_tool_rounds=config.max_tool_rounds,
        chat_model=chat_model,
        headers=headers,
    )


def _agent_model(config: ProviderConfig, session: ReplaySession | None, cassette: Cassette | None) -> ChatModel | None:
    """The agent's chat model when the provider must own it (replay, recording); else the factory picks."""
    if session is not None:
        return session.model("agent")
    if cassette is None:
        return None
    from agent_evals.agent.config import load_agent_config
    from agent_evals.llm.settings import chat_model

    default = load_agent_config(config.agent).model if not config.factory else None
    return RecordingChatModel(chat_model("agent", model=config.model, default_model=default), "agent", cassette)


def _load_simulator(dotted: str) -> type[BaseUserSimulator]:
    try:
        target = load_factory(dotted)
    except ValueError as exc:
        raise ProviderConfigError(str(exc).replace("factory", "simulator class", 1)) from exc
    if not (isinstance(target, type) and issubclass(target, BaseUserSimulator)):
        raise ProviderConfigError(f"simulator class {dotted!r} is not a subclass of BaseUserSimulator")
    return target


def _add_traced_pull_requests(record: ConversationRecord, identity: CaseIdentity) -> None:
    """After an error, ask the portal for PRs this conversation created that the record missed."""
    from agent_evals.portal_api import PortalAPI, PortalError

    try:
        found = PortalAPI.from_env().list_pull_requests(test_id=identity.test_id)
    except PortalError as exc:  # the portal may be the thing that failed
        log.info("could not list this conversation's PRs from the portal: %s", exc)
        return
    known = {p["id"] for p in record.pull_requests}
    for pr in found:
        if pr.get("id") not in known:
            record.pull_requests.append({"id": pr["id"], "url": pr.get("url", "")})

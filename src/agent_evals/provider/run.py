"""Run one Promptfoo test case: build the agent and the user, hold the conversation, report.

``call_api`` is what ``providers/agent.py`` exposes to Promptfoo. Every call gets its own
event loop and its own MCP session; nothing is kept between calls, so a worker's memory
stays flat over many conversations. ``run_case`` reads as build, converse, judge, report:
the run mode (live, recording, replaying: :mod:`agent_evals.conversation.modes`) is chosen
once and hands the agent, the user and the judge their models.

The suite's pack brings the system under test (:mod:`agent_evals.system`): the conversation's
view of it makes the case's fixtures, names the side effects tool calls made, reads the end
state and undoes what the conversation made.

When the run cannot happen or breaks off, the answer is a Promptfoo ``error`` that starts
with its kind (``[system] …``), with the run record so far in ``metadata`` (the side
effects made so far included), so the cleanup hook still finds them.
"""

from __future__ import annotations

import asyncio
import logging
import time
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agent_evals.agent.config import DEFAULT_AGENT
from agent_evals.agent.factory import create_agent, load_factory
from agent_evals.assertions._config import ConfigError
from agent_evals.assertions.registry import kit_checks, pack_of, parse_check_config
from agent_evals.suites.check_ref import CheckRef
from agent_evals.agent.types import ConversationalAgent
from agent_evals.cleanup import run_id
from agent_evals.conversation.cassette import cassette_filename, load_cassette
from agent_evals.conversation.driver import describe_error, run_conversation, unwrap
from agent_evals.conversation.fingerprints import case_fingerprint, user_fingerprint
from agent_evals.conversation.metering import MeteredModels
from agent_evals.conversation.modes import LiveMode, RecordingMode, ReplayingMode, RunMode, ToolWrapper
from agent_evals.conversation.replay import ReplaySession
from agent_evals.conversation.transcript import render_output, token_usage
from agent_evals.conversation.users import BaseUserSimulator, FixedMessages, SimulatedUser
from agent_evals.llm.budget import stop_if_spent
from agent_evals.llm.caps import max_tokens_for, with_max_tokens
from agent_evals.llm.source import ModelSource
from agent_evals.packs import GenericPack, Pack, load_pack
from agent_evals.provider.config import ProviderConfig, ProviderConfigError, parse_config
from agent_evals.provider.deadline import ConversationTimeout, deadline_s
from agent_evals.provider.fixtures import fill_references
from agent_evals.provider.grading import grade_checks
from agent_evals.provider.promptfoo_assertions import assertion_problems
from agent_evals.provider.judged import informative_checks, judge_row
from agent_evals.provider.tracing import Tracer
from agent_evals.provider.user_review import invalid_error, review_user
from agent_evals.record import AgentInfo, End, ErrorKind, RunRecord, Trace, Usage, UserInfo, UserKind
from agent_evals.record.caps import cap_text, cap_value
from agent_evals.record.row_labels import leading_case_id
from agent_evals.secrets import redact
from agent_evals.system import Conversation, SystemFailure
from agent_evals.llm.settings import llm_configured

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
        case_id = str(metadata.get("id") or leading_case_id(test.get("description")) or f"test{context.get('testIdx', 0)}")
        repeat = int(context.get("repeatIndex") or vars_.get("__repeatIndex") or 0)
        eval_id = run_id(context.get("evaluationId") or vars_.get("__evalId")) or "adhoc"
        suffix = (f".r{repeat}" if repeat else "") + (f"--{variant}" if variant else "")
        return cls(case_id, eval_id, f"{case_id}{suffix}#{uuid.uuid4().hex[:8]}", repeat)

    @property
    def trace(self) -> Trace:
        return Trace(self.eval_id, self.test_id)



def call_api(prompt: str, options: Mapping[str, Any] | None, context: Mapping[str, Any] | None) -> dict[str, Any]:
    """Promptfoo's provider entry point; never raises (a raised error's text would steer Promptfoo's
    retries, and its traceback would be the row)."""
    try:
        return _call_api(prompt, options or {}, context or {})
    except Exception as exc:  # a bug: still one error row with its kind, never a Python traceback row
        log.exception("the provider failed")
        record = _new_record(CaseIdentity.from_context(context or {}), AgentInfo(name=""), "simulated_user")
        record.finish(End.failed("internal", describe_error(exc)))
        return promptfoo_response(record)


def _call_api(prompt: str, options: Mapping[str, Any], context: Mapping[str, Any]) -> dict[str, Any]:
    try:
        config = parse_config(options.get("config"), context.get("vars"))
    except ProviderConfigError as exc:
        identity = CaseIdentity.from_context(context)
        record = _new_record(identity, _unbuilt_agent(options.get("config")), "simulated_user")
        record.finish(End.failed("config", str(exc)))
        return promptfoo_response(record)
    identity = CaseIdentity.from_context(context, config.variant)
    asserts = (context.get("test") or {}).get("assert") or []
    tracer = Tracer.from_context(context, config.otlp_endpoint, identity.case_id)
    return asyncio.run(run_case(prompt, config, identity, asserts=asserts, tracer=tracer))


async def run_case(
    prompt: str, config: ProviderConfig, identity: CaseIdentity, *, asserts: Sequence[Any] = (),
    tracer: Tracer | None = None,
) -> dict[str, Any]:
    """Hold one conversation (or one turn) and shape Promptfoo's answer; never raises for a failed run."""
    record = _new_record(identity, _unbuilt_agent(config.model_dump()), user_kind(config))
    started, limit = time.monotonic(), deadline_s(config.deadline_s, config.timeout)
    mode: RunMode | None = None
    models: MeteredModels | None = None
    pack: Pack | None = None
    system: Conversation | None = None  # the conversation's view of the system under test
    user: BaseUserSimulator | None = None
    checks: list[CheckRef] = []
    try:
        pack = load_pack(config.pack)
        system = pack.system.conversation(identity.trace)
        checks = validated_checks(asserts, pack, base=config.base_dir)
        if problems := pack.fixture_problems(config.fixtures):
            raise ProviderConfigError("; ".join(problems))
        if config.replay_dir() is None:  # the run's budget is spent: end at once (a replay spends nothing)
            stop_if_spent()
        mode = run_mode(config, identity)
        models = MeteredModels(mode.models, record, tracer.model_call if tracer is not None else None)
        mode.start(fingerprints(config, identity.case_id, prompt))
        if config.fixtures:
            record.fixtures = system.create_fixtures(config.fixtures)
            mode.fixtures_made(record.fixtures)
            config, prompt = _with_fixture_values(config, prompt, record.fixtures)
        user = build_user(
            config, prompt, models, models_available=mode.kind == "replay" or _llm_configured(), pack=pack
        )
        agent = build_agent(config, identity, models, mode.wrap_tools, system)
        record.agent = agent.info
        record.user = UserInfo(record.user.kind, user.llm.model if user.llm is not None else None)
        await converse(agent, user, config, record, mode, pack, tracer)
    except Exception as exc:  # reported as a Promptfoo error, with everything done so far
        _end_with_error(record, exc, identity, system)
    try:
        if system is not None and mode is not None:
            _snapshot(record, system, checks)
        if mode is not None and models is not None and pack is not None:
            await review_user(config, record, user, pack, mode, models, started=started, limit_s=limit)
            await judge_row(config, checks, record, mode, models, started=started, limit_s=limit)
    except Exception as exc:  # the judge's failure is the row's error (kind model, timeout, replay, config)
        _end_with_error(record, exc, identity, system)
    finally:
        if models is not None:
            await models.aclose()
    if mode is not None:
        try:
            mode.finish(record)
        except Exception as exc:
            _end_with_error(record, exc, identity, system)
    # the end state is read: undo what the conversation made (its fixtures too, even half-made)
    cleanup = system.undo(record, fixtures=bool(config.fixtures)) if system is not None else None
    response = promptfoo_response(record, single_turn=config.mode == "single_turn", mode=mode, cleanup=cleanup)
    graded = [*checks, *informative_checks(record, checks, asserts)]
    if graded and not _errored(record):  # an error row is not graded (an invalid one is, for the record)
        # graded on exactly the metadata the Python assertions would read from Promptfoo
        response["metadata"]["checks"] = grade_checks(graded, list(asserts), response["metadata"], pack)
    if not reads_stored_metadata(asserts):  # graded on whole values above: what is stored keeps MAX_CHARS of each
        response = capped(response)
    if tracer is not None:
        tracer.finish(record)  # before answering: Promptfoo reads the spans when it grades the row
    return response


def capped(response: dict[str, Any]) -> dict[str, Any]:
    """Promptfoo's answer with every text of the record capped (``record.caps``), but the checks' configs,
    which ``assertions/kit.js`` matches against the test's own."""
    metadata = dict(response["metadata"])
    checks = metadata.pop("checks", None)
    metadata = cap_value(metadata)
    if checks is not None:
        metadata["checks"] = [{**c, "reason": cap_text(str(c.get("reason", "")))} for c in checks]
    out = {**response, "metadata": metadata}
    if "error" in out:
        out["error"] = cap_text(str(out["error"]))
    return out


def reads_stored_metadata(asserts: Sequence[Any]) -> bool:
    """A Python assertion Promptfoo runs itself (a kit check on the Python path, a team's own) reads the
    row's metadata as stored, so the stored record keeps whole values for it."""
    return any(isinstance(a, Mapping) and str(a.get("type", "")).removeprefix("not-") == "python" for a in asserts)


def _errored(record: RunRecord) -> bool:
    return record.end is None or record.end.reason == "error"


def validated_checks(asserts: Sequence[Any], pack: Pack | None = None, *, base: Path | None = None) -> list[CheckRef]:
    """The test's kit checks, each config checked by its own parser, each of the core or of the suite's
    pack, and every assertion of a type Promptfoo knows whose ``file://`` (relative to ``base``, the
    suite's folder) exists: a bad one is a config error before the conversation, not a failure after it."""
    checks = kit_checks(list(asserts), pack)
    problems = []
    for position, item in enumerate(asserts):
        if isinstance(item, Mapping):
            label = f"assertion {position + 1} ({item.get('type') or 'no type'}, metric {item.get('metric') or 'none'})"
            problems += [f"{label}: {p}" for p in assertion_problems(item, base or Path.cwd())]
    for check in checks:
        owner = pack_of(check.name, pack)
        if pack is not None and owner is not None and owner != pack.name:
            problems.append(
                f"assertion {check.position + 1} ({check.name}) is a check of the {owner} pack; this suite's pack is "
                f"{pack.name} (provider config pack:)"
            )
            continue
        try:
            parse_check_config(check.name, check.config, pack)
        except ConfigError as exc:
            problems.append(f"assertion {check.position + 1} ({check.name}, metric {check.metric or 'none'}): {exc}")
    if problems:
        raise ProviderConfigError("; ".join(problems))
    return checks


def _snapshot(record: RunRecord, system: Conversation, checks: Sequence[CheckRef]) -> None:
    """Read the end state for grading; a system that cannot be read makes the row an error (kind ``system``).
    After an error of the system (or of the configuration) it is not asked again.

    The side effects the conversation made are also those the system finds by its trace, so they are
    known whichever tool made them.
    """
    if record.end is not None and record.end.reason == "error" and record.end.error_kind in ("system", "config"):
        return
    try:
        record.snapshot = system.snapshot(record, checks)
    except SystemFailure as exc:
        if record.end is None or record.end.reason != "error":
            record.end = End.failed("system", f"could not read the end state for grading: {exc}")
        return
    if record.snapshot is None:
        return
    if (why := system.spoiled(record, record.snapshot)) is not None and (record.end is None or record.end.reason != "error"):
        record.end = End.failed("system", why)


async def converse(
    agent: ConversationalAgent, user: BaseUserSimulator, config: ProviderConfig, record: RunRecord, mode: RunMode,
    pack: Pack, tracer: Tracer | None = None,
) -> None:
    """The conversation, within its deadline (:mod:`agent_evals.provider.deadline`), traced when asked."""
    limit = deadline_s(config.deadline_s, config.timeout)
    on_turn, on_message, on_tool = mode.on_turn, mode.on_user_message, None
    if tracer is not None:
        on_turn, on_message = _both(tracer.turn_ended, mode.on_turn), _both(tracer.turn_started, mode.on_user_message)
        on_tool = tracer.tool_call

    async def talk() -> None:
        async with agent:
            await run_conversation(
                agent,
                user,
                record=record,
                max_turns=1 if config.mode == "single_turn" else config.max_turns,
                find_side_effect=pack.system.side_effect,
                on_turn=on_turn,
                on_user_message=on_message,
                on_tool_call=on_tool,
            )

    try:
        await asyncio.wait_for(talk(), limit)
    except TimeoutError:
        raise ConversationTimeout(
            f"the conversation ran past its deadline of {limit:g} s after {record.user_messages_sent} user "
            "message(s) (deadline_s in the provider config, AGENT_EVALS_DEADLINE_S)"
        ) from None


def _both(first: Any, second: Any) -> Any:
    def both(*args: Any) -> None:
        first(*args)
        second(*args)

    return both


def _new_record(identity: CaseIdentity, agent: AgentInfo, kind: UserKind) -> RunRecord:
    return RunRecord(case_id=identity.case_id, agent=agent, user=UserInfo(kind), trace=identity.trace)


def error_kind(exc: BaseException) -> ErrorKind:
    kind = getattr(unwrap(exc), "kind", None)
    # any exception's text `kind` is kept as it is (a KitError's is an ErrorKind; others are not checked here)
    return kind if isinstance(kind, str) else "internal"  # type: ignore[return-value]


def _end_with_error(
    record: RunRecord, exc: BaseException, identity: CaseIdentity, system: Conversation | None = None
) -> None:
    kind = error_kind(exc)
    record.finish(End.failed(kind, describe_error(exc)))
    log.warning("case %s: [%s] %s", identity.case_id, kind, describe_error(exc))
    log.log(logging.WARNING if kind == "internal" else logging.DEBUG, "case %s failed", identity.case_id, exc_info=exc)
    if system is not None:  # the side effects made before the error that the record missed
        system.found_again(record)


def _unbuilt_agent(config: Mapping[str, Any] | None) -> AgentInfo:
    """What is known of the agent before it was built (for errors that happen first)."""
    config = config or {}
    temperature = config.get("temperature")
    return AgentInfo(
        name=str(config.get("agent") or ""),
        model=str(config.get("model") or ""),
        temperature=float(temperature) if isinstance(temperature, int | float) else None,
    )


def user_kind(config: ProviderConfig) -> UserKind:
    if config.mode == "single_turn":
        return "single_turn"
    if config.user_messages is not None:
        return "user_messages"
    return "class" if config.simulated_user and config.simulated_user.class_ else "simulated_user"


def user_definition(config: ProviderConfig) -> Any:
    """What the user is, for its fingerprint."""
    if config.user_messages is not None:
        return config.user_messages
    spec = config.simulated_user
    if spec is None:
        return None
    if spec.class_:
        return {"class": spec.class_, "params": spec.params}
    return {
        "goal": spec.goal, "persona": spec.persona, "facts": spec.facts, "instructions": spec.instructions,
        "temperature": config.user_temperature,
    }


def fingerprints(config: ProviderConfig, case_id: str, prompt: str) -> dict[str, Any]:
    single = config.mode == "single_turn"
    return {
        "case": case_fingerprint(case_id, prompt if single else None, config.fixtures),
        "user": user_fingerprint(user_kind(config), None if single else user_definition(config)),
    }


def promptfoo_response(
    record: RunRecord, *, single_turn: bool = False, mode: RunMode | None = None, cleanup: dict[str, Any] | None = None
) -> dict[str, Any]:
    """Promptfoo's answer. A replay spends nothing: Promptfoo's tokens and cost are 0, while
    ``metadata.usage`` keeps what the recorded conversation cost and ``metadata.replay`` names it.

    An error answer says so to Promptfoo's scheduler (``rateLimitKind: quota``): the kit retried
    the model already, and Promptfoo must never run the whole conversation again."""
    replay = mode.replay_info() if mode is not None else None
    if replay is not None:
        record.replay = replay
    total = Usage() if replay is not None else record.total_usage()
    response: dict[str, Any] = {
        "output": render_output(record, single_turn=single_turn),
        "metadata": record.to_metadata(),
        "tokenUsage": token_usage(total),
        "cost": total.cost,
    }
    if cleanup is not None:
        response["metadata"]["cleanup"] = cleanup
    end = record.end
    if end is not None and end.reason == "error":
        response["error"] = f"[{end.error_kind}] {end.error}"
        response["metadata"]["rateLimitKind"] = "quota"
    elif (invalid := invalid_error(record)) is not None:  # the user spoiled it: neither a pass nor a fail
        response["error"] = invalid
        response["metadata"]["rateLimitKind"] = "quota"
    return redact(response)


def run_mode(config: ProviderConfig, identity: CaseIdentity) -> RunMode:
    """Live, recording or replaying, from the config (and the environment)."""
    folder = config.replay_dir()
    if folder is not None:
        path = folder / cassette_filename(identity.case_id, variant=config.variant, repeat=identity.repeat)
        if not path.is_file() and identity.repeat:
            path = folder / cassette_filename(identity.case_id, variant=config.variant)  # repeats share one cassette
        return ReplayingMode(ReplaySession(load_cassette(path), path.name, allow_stale=config.allow_stale))
    record_dir = config.record_dir()
    if record_dir is not None:
        name = cassette_filename(identity.case_id, variant=config.variant, repeat=identity.repeat)
        return RecordingMode(record_dir / name, identity.case_id)
    return LiveMode()


def _with_fixture_values(
    config: ProviderConfig, prompt: str, fixtures: list[dict[str, Any]]
) -> tuple[ProviderConfig, str]:
    """The user's messages, goal, facts and params, and the prompt, with ``$fixture.<key>.<field>`` filled in."""
    changes: dict[str, Any] = {}
    if config.user_messages is not None:
        changes["user_messages"] = fill_references(config.user_messages, fixtures)
    if config.simulated_user is not None:
        spec = config.simulated_user
        changes["simulated_user"] = spec.model_copy(update={
            "goal": fill_references(spec.goal, fixtures), "facts": fill_references(spec.facts, fixtures),
            "instructions": fill_references(spec.instructions, fixtures), "params": fill_references(spec.params, fixtures),
        })
    return config.model_copy(update=changes), fill_references(prompt, fixtures)


def build_user(
    config: ProviderConfig, prompt: str, models: ModelSource, *, models_available: bool = True,
    pack: Pack | None = None,
) -> BaseUserSimulator:
    if config.mode == "single_turn":
        if not isinstance(prompt, str) or not prompt.strip():
            raise ProviderConfigError("mode single_turn: the prompt is empty; the prompt is the user's one message")
        return FixedMessages([prompt])
    if config.user_messages is not None:
        return FixedMessages(config.user_messages)
    spec = config.simulated_user
    assert spec is not None
    cap = max_tokens_for("user", max_tokens=config.user_max_tokens, setting="user_max_tokens")
    if spec.class_:
        cls = _load_simulator(spec.class_)
        # a custom simulator gets the user model when one is configured (or replayed), else None
        llm = with_max_tokens(models.chat_model("user", model=config.user_model), cap) if models_available else None
        try:
            return cls(params=spec.params, llm=llm)
        except (ValueError, TypeError) as exc:  # the simulator rejected its params
            raise ProviderConfigError(str(exc)) from exc
    return SimulatedUser(
        llm=models.chat_model("user", model=config.user_model), goal=spec.goal or "", persona=spec.persona,
        facts=spec.facts, instructions=spec.instructions, temperature=config.user_temperature, max_tokens=cap,
        framing=(pack or GenericPack()).user_framing,
    )


def _llm_configured() -> bool:
    return llm_configured()


def build_agent(
    config: ProviderConfig, identity: CaseIdentity, models: ModelSource, wrap_tools: ToolWrapper | None,
    system: Conversation | None = None,
) -> ConversationalAgent:
    """The agent, its requests tagged with the conversation's trace (``X-Created-By`` names the agent);
    the system's ``variables`` (a per-conversation workspace) go to a factory that takes them."""
    factory = load_factory(config.factory) if config.factory else create_agent
    instructions = str(config.resolve(config.instructions_file)) if config.instructions_file else None
    name = config.agent or (DEFAULT_AGENT if not config.factory else "agent")
    system = system or Conversation(identity.trace)
    headers = {**system.headers, "X-Created-By": f"agent-evals:{name}"}
    extra: dict[str, Any] = {"max_tokens": config.max_tokens} if config.max_tokens is not None else {}  # custom factories may lack it
    if system.variables:  # none from the portal: the factory's signature is unchanged for it
        extra["variables"] = dict(system.variables)
    return factory(
        config.agent,
        instructions_file=instructions,
        model=config.model,
        temperature=config.temperature,
        max_tool_rounds=config.max_tool_rounds,
        models=models,
        wrap_tools=wrap_tools,
        headers=headers,
        **extra,
    )


def _load_simulator(dotted: str) -> type[BaseUserSimulator]:
    try:
        target = load_factory(dotted)
    except ValueError as exc:
        raise ProviderConfigError(str(exc).replace("factory", "simulator class", 1)) from exc
    if not (isinstance(target, type) and issubclass(target, BaseUserSimulator)):
        raise ProviderConfigError(f"simulator class {dotted!r} is not a subclass of BaseUserSimulator")
    return target

"""Choose the chat model implementation and model names from the environment.

Endpoint, first match wins (see ``docs/llm.md``):

1. ``AZURE_OPENAI_ENDPOINT`` → Azure OpenAI, with ``AZURE_OPENAI_API_KEY`` or
   ``AZURE_OPENAI_AD_TOKEN`` (the key wins if both are set), else DefaultAzureCredential
   when ``azure-identity`` is installed; ``AZURE_OPENAI_API_VERSION`` (default
   :data:`DEFAULT_AZURE_API_VERSION`).
2. ``OPENAI_BASE_URL`` → an OpenAI-compatible server (``OPENAI_API_KEY`` optional).
3. ``OPENAI_API_KEY`` → OpenAI.

Model per role: the explicit ``model`` argument, else ``AGENT_MODEL`` / ``USER_MODEL`` /
``JUDGE_MODEL``, else ``default_model``, else (user and judge only) ``AGENT_MODEL``.
Knobs: ``LLM_MAX_RETRIES`` (retries after the first attempt, default 3),
``LLM_TIMEOUT_S`` (per attempt, default 60), ``LLM_PRICES`` (see :mod:`.pricing`),
``LLM_TOOL_CHOICE`` (``auto`` | ``required`` | ``none`` | ``omit``, default ``auto``).

Completion cap per role: :mod:`agent_evals.llm.caps` (``max_tokens`` and
``default_max_tokens`` of :func:`chat_model`, ``LLM_MAX_TOKENS_AGENT|USER|JUDGE``).
One key per role (a gateway's virtual keys, e.g. a LiteLLM proxy's, for budgets and cost per
role): ``LLM_API_KEY_AGENT`` / ``LLM_API_KEY_USER`` / ``LLM_API_KEY_JUDGE`` replace the
endpoint's key for that role. Across processes: ``LLM_MAX_IN_FLIGHT`` (requests in flight per endpoint, :mod:`.in_flight`)
and ``LLM_BUDGET_LEDGER`` (the run's spend limit, :mod:`.budget`, set by ``agent-evals run``).

All problems found are reported together in one :class:`LLMConfigError`. Secrets never
appear in what this module returns, logs or raises.
"""

from __future__ import annotations

import importlib.util
import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field, replace

from agent_evals.llm.budget import BudgetLedger, ledgers_from_env
from agent_evals.llm.endpoint import Endpoint, Secret, safe_url
from agent_evals.llm.in_flight import InFlightLimit, in_flight_from_env
from agent_evals.llm.caps import DEFAULT_MAX_TOKENS, caps_from_env, max_tokens_problem, pick_cap
from agent_evals.llm.pricing import PriceTable
from agent_evals.llm.chat_request import DEFAULT_TOOL_CHOICE, TOOL_CHOICES, ToolChoice
from agent_evals.llm.retry import RetryPolicy
from agent_evals.llm.types import ChatModel, LLMConfigError, Role
from agent_evals.record import is_one_of
from agent_evals.llm.openai_chat import OpenAIChatModel

DEFAULT_AZURE_API_VERSION = "2024-10-21"
DEFAULT_MAX_RETRIES = 3
DEFAULT_TIMEOUT_S = 60.0
MAX_RETRIES_LIMIT = 10
TIMEOUT_LIMIT_S = 3600.0

ROLE_MODEL_ENV: Mapping[Role, str] = {"agent": "AGENT_MODEL", "user": "USER_MODEL", "judge": "JUDGE_MODEL"}
ROLE_KEY_ENV: Mapping[Role, str] = {"agent": "LLM_API_KEY_AGENT", "user": "LLM_API_KEY_USER", "judge": "LLM_API_KEY_JUDGE"}

NO_ENDPOINT_MESSAGE = (
    "No LLM endpoint configured: set AZURE_OPENAI_ENDPOINT (+ AZURE_OPENAI_API_KEY or "
    "AZURE_OPENAI_AD_TOKEN) for Azure OpenAI, or OPENAI_API_KEY for OpenAI, or OPENAI_BASE_URL "
    "for an OpenAI-compatible server (vLLM, Ollama, llama.cpp, LM Studio)"
)


@dataclass(frozen=True)
class LLMSettings:
    """Everything read from the environment except the model names."""

    endpoint: Endpoint
    retry: RetryPolicy
    timeout_s: float
    prices: PriceTable
    tool_choice: ToolChoice = DEFAULT_TOOL_CHOICE
    max_tokens: Mapping[Role, int] = field(default_factory=lambda: dict(DEFAULT_MAX_TOKENS))
    """The cap per role from ``LLM_MAX_TOKENS_<ROLE>``, else :data:`DEFAULT_MAX_TOKENS`."""
    in_flight: InFlightLimit | None = None
    """``LLM_MAX_IN_FLIGHT``: requests in flight to this endpoint, across processes."""
    budget: tuple[BudgetLedger, ...] = ()
    """``LLM_BUDGET_LEDGER``: the spend limits every call checks."""


def load_settings(env: Mapping[str, str] | None = None) -> LLMSettings:
    """Read the endpoint and knobs; raises one LLMConfigError listing every problem."""
    env = os.environ if env is None else env
    settings, problems = _collect(env)
    if settings is None:
        raise LLMConfigError(_join(problems))
    return settings


def chat_model(
    role: Role,
    *,
    model: str | None = None,
    default_model: str | None = None,
    max_tokens: int | None = None,
    default_max_tokens: int | None = None,
    env: Mapping[str, str] | None = None,
) -> ChatModel:
    """The chat model for ``role`` from the environment (see the module docstring); every
    request it sends carries the role's completion cap unless the caller passes one."""
    env = os.environ if env is None else env
    settings, problems = _collect(env)
    name, _source = resolve_model(role, model=model, default_model=default_model, env=env)
    if name is None:
        problems.append(_no_model_message(role))
    for value, setting in ((max_tokens, "max_tokens"), (default_max_tokens, "default max_tokens")):
        if value is not None and (problem := max_tokens_problem(value, setting)):
            problems.append(problem)
    if settings is None or name is None or problems:
        raise LLMConfigError(_join(problems))
    cap = pick_cap(role, settings.max_tokens, env, max_tokens, default_max_tokens)
    return OpenAIChatModel(
        role_endpoint(settings.endpoint, role, env),
        name,
        retry=settings.retry,
        timeout_s=settings.timeout_s,
        prices=settings.prices,
        max_tokens=cap,
        tool_choice=settings.tool_choice,
        role=role,
        budget=settings.budget,
        in_flight=settings.in_flight,
    )


def role_endpoint(endpoint: Endpoint, role: Role, env: Mapping[str, str]) -> Endpoint:
    """The endpoint with the role's own key (``LLM_API_KEY_<ROLE>``) when one is set."""
    key = _get(env, ROLE_KEY_ENV[role])
    if key is None:
        return endpoint
    return replace(endpoint, api_key=Secret(key), azure_ad_token=None)


def resolve_model(
    role: Role,
    *,
    model: str | None = None,
    default_model: str | None = None,
    env: Mapping[str, str] | None = None,
) -> tuple[str | None, str]:
    """``(model name or None, where it came from)`` for ``role``."""
    if role not in ROLE_MODEL_ENV:
        raise ValueError(f"unknown role {role!r}; allowed: {', '.join(ROLE_MODEL_ENV)}")
    env = os.environ if env is None else env
    role_var = ROLE_MODEL_ENV[role]
    candidates = [
        (model, "explicit model"),
        (_get(env, role_var), role_var),
        (default_model, "default model"),
    ]
    if role != "agent":
        candidates.append((_get(env, "AGENT_MODEL"), "AGENT_MODEL"))
    for name, source in candidates:
        if name and name.strip():
            return name.strip(), source
    return None, "unset"


def llm_configured(env: Mapping[str, str] | None = None) -> bool:
    """True when an endpoint is fully configured (model names are not checked)."""
    return _collect(os.environ if env is None else env)[0] is not None


def describe_llm_settings(env: Mapping[str, str] | None = None) -> str:
    """One line for logs and reports: endpoint kind, URL, auth method, models; no secrets."""
    env = os.environ if env is None else env
    settings, problems = _collect(env)
    models = ", ".join(_describe_model(role, env) for role in ROLE_MODEL_ENV)
    if settings is None:
        return f"LLM: not configured ({'; '.join(problems)}); models: {models}"
    endpoint = settings.endpoint
    where = f"{endpoint.kind} at {endpoint.display_url}"
    if endpoint.kind == "azure":
        auth = (endpoint.azure_auth or "").replace("_", " ")
        where += f" (api-version {endpoint.api_version}, auth: {auth})"
    elif endpoint.api_key is None:
        where += " (no API key)"
    retries = settings.retry.max_attempts - 1
    caps = ", ".join(f"{role} {cap}" for role, cap in settings.max_tokens.items())
    own_keys = [role for role, name in ROLE_KEY_ENV.items() if _get(env, name)]
    if own_keys:
        where += f" (a key of its own for: {', '.join(own_keys)})"
    return (
        f"LLM: {where}; models: {models}; retries: {retries}, timeout: {settings.timeout_s:g} s per attempt; "
        f"max_tokens: {caps}; tool_choice: {settings.tool_choice}"
    )


def _describe_model(role: Role, env: Mapping[str, str]) -> str:
    name, source = resolve_model(role, env=env)
    return f"{role}={name} ({source})" if name else f"{role}=unset (set {ROLE_MODEL_ENV[role]})"


def _collect(env: Mapping[str, str]) -> tuple[LLMSettings | None, list[str]]:
    problems: list[str] = []
    endpoint = _endpoint(env, problems)
    max_retries = _int_setting(env, "LLM_MAX_RETRIES", DEFAULT_MAX_RETRIES, MAX_RETRIES_LIMIT, problems)
    timeout_s = _timeout_setting(env, problems)
    tool_choice = _tool_choice_setting(env, problems)
    caps = caps_from_env(env, problems)
    try:
        prices = PriceTable.from_env(env)
    except LLMConfigError as exc:
        problems.append(str(exc))
        prices = None
    budget = _budget_setting(env, problems)
    if endpoint is None or problems or prices is None:
        return None, problems
    in_flight = in_flight_from_env(env, f"{endpoint.kind} {endpoint.url}", problems)
    if problems:
        return None, problems
    retry = RetryPolicy(max_attempts=max_retries + 1)
    return LLMSettings(endpoint, retry, timeout_s, prices, tool_choice, caps, in_flight, budget), problems


def _budget_setting(env: Mapping[str, str], problems: list[str]) -> tuple[BudgetLedger, ...]:
    ledgers = ledgers_from_env(env)
    for ledger in ledgers:
        if not ledger.path.is_file():
            problems.append(f"LLM_BUDGET_LEDGER names {ledger.path}, which is not a file (agent-evals run writes it)")
    return ledgers


def _tool_choice_setting(env: Mapping[str, str], problems: list[str]) -> ToolChoice:
    raw = _get(env, "LLM_TOOL_CHOICE")
    if raw is None:
        return DEFAULT_TOOL_CHOICE
    if not is_one_of(raw, TOOL_CHOICES):
        problems.append(f"LLM_TOOL_CHOICE must be one of {', '.join(TOOL_CHOICES)}, got {raw!r}")
        return DEFAULT_TOOL_CHOICE
    return raw


def _endpoint(env: Mapping[str, str], problems: list[str]) -> Endpoint | None:
    azure_url, base_url, api_key = (
        _get(env, "AZURE_OPENAI_ENDPOINT"),
        _get(env, "OPENAI_BASE_URL"),
        _get(env, "OPENAI_API_KEY"),
    )
    if azure_url:
        return _azure_endpoint(env, azure_url, problems)
    if base_url:
        if not _valid_url("OPENAI_BASE_URL", base_url, problems):
            return None
        return Endpoint.compatible(base_url, api_key=api_key)
    if api_key:
        return Endpoint.openai(api_key)
    problems.append(NO_ENDPOINT_MESSAGE)
    return None


def _azure_endpoint(env: Mapping[str, str], url: str, problems: list[str]) -> Endpoint | None:
    key, token = _get(env, "AZURE_OPENAI_API_KEY"), _get(env, "AZURE_OPENAI_AD_TOKEN")
    valid = _valid_url("AZURE_OPENAI_ENDPOINT", url, problems)
    if not key and not token and not azure_identity_available():
        problems.append(
            "AZURE_OPENAI_ENDPOINT is set but no credential: set AZURE_OPENAI_API_KEY or "
            "AZURE_OPENAI_AD_TOKEN, or install azure-identity to use DefaultAzureCredential"
        )
        return None
    if not valid:
        return None
    version = _get(env, "AZURE_OPENAI_API_VERSION") or DEFAULT_AZURE_API_VERSION
    return Endpoint.azure(url, api_version=version, api_key=key, ad_token=None if key else token)


def azure_identity_available() -> bool:
    """Whether the optional ``azure-identity`` package can be imported (without importing it)."""
    if "azure.identity" in sys.modules:
        return True
    try:
        return importlib.util.find_spec("azure.identity") is not None
    except (ImportError, ValueError):  # no "azure" namespace package at all
        return False


def _valid_url(name: str, url: str, problems: list[str]) -> bool:
    if url.startswith(("http://", "https://")):
        return True
    problems.append(f"{name} must be an http:// or https:// URL, got {safe_url(url)!r}")
    return False


def _int_setting(env: Mapping[str, str], name: str, default: int, limit: int, problems: list[str]) -> int:
    raw = _get(env, name)
    if raw is None:
        return default
    try:
        value = int(raw)
    except ValueError:
        value = -1
    if not 0 <= value <= limit:
        problems.append(f"{name} must be a whole number from 0 to {limit}, got {raw!r}")
        return default
    return value


def _timeout_setting(env: Mapping[str, str], problems: list[str]) -> float:
    raw = _get(env, "LLM_TIMEOUT_S")
    if raw is None:
        return DEFAULT_TIMEOUT_S
    try:
        value = float(raw)
    except ValueError:
        value = -1.0
    if not 0 < value <= TIMEOUT_LIMIT_S:
        problems.append(
            f"LLM_TIMEOUT_S must be a number of seconds above 0 and at most {TIMEOUT_LIMIT_S:g}, got {raw!r}"
        )
        return DEFAULT_TIMEOUT_S
    return value


def _get(env: Mapping[str, str], name: str) -> str | None:
    value = env.get(name)
    return value.strip() if value and value.strip() else None


def _no_model_message(role: Role) -> str:
    var = ROLE_MODEL_ENV[role]
    fallback = "" if role == "agent" else " (or AGENT_MODEL, which every role falls back to)"
    return f"No model for role {role!r}: set {var}{fallback} to the model or Azure deployment name"


def _join(problems: list[str]) -> str:
    if len(problems) == 1:
        return problems[0]
    return "LLM settings are incomplete:\n" + "\n".join(f"- {p}" for p in problems)

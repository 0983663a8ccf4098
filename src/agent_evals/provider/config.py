"""The provider's configuration: the provider's ``config`` merged with the test's ``vars``.

```yaml
providers:
  - id: file://../../providers/agent.py
    label: my-agent
    config:
      agent: my-agent               # agent_config/agents/<agent> (default: the factory's default agent)
      factory: mypkg.agents:create_agent   # optional: your own agent factory
      instructions_file: alt.md     # optional overrides, for comparison runs
      model: gpt-4o
      temperature: 0.0
      max_tokens: 1024              # optional: the agent's completion cap (else LLM_MAX_TOKENS_AGENT, agent.yaml, 2048)
      mode: conversation            # or single_turn: the prompt is the one user message
      max_turns: 15
      deadline_s: 600               # a conversation past this ends as an error of kind timeout
      user_model: gpt-4.1-mini      # optional, else USER_MODEL
      user_max_tokens: 200          # optional: the simulated user's completion cap (else LLM_MAX_TOKENS_USER, 300)
      record: cassettes/            # or AGENT_EVALS_RECORD_DIR
      replay: golden                # or AGENT_EVALS_REPLAY_DIR; "golden" = <suite>/golden
      variant: alt                  # tells this provider's cassettes apart from another's
      allow_stale: false            # replay a cassette whose fingerprints changed (or AGENT_EVALS_ALLOW_STALE=1)
      pack: generic                 # the domain pack (agent_evals.packs): a built-in pack's name, or a dotted path
      otlp_endpoint: http://127.0.0.1:4318/v1/traces   # where spans go when the suite enables tracing
      budget_usd: 5.0               # agent-evals run caps this suite's spend (agent, user, judge) at it
      user_checks: {skip: [off_goal]}   # the checks of the simulated user (default: all; false: none)
tests:
  - vars:
      simulated_user: {goal: ..., persona: ..., facts: {...}, instructions: ...}
      # or user_messages: [...]
      # or simulated_user: {class: mypkg.users:MyUser, params: {...}}
      max_turns: 6
      fixtures: [{<kind>: {key: failing, ...}}]   # what the case relies on, in the pack's form
      # user messages, the simulated user's goal and facts and the prompt may name a fixture's
      # values: $fixture.failing.url, $fixture.failing.id
```
A test's ``simulated_user`` / ``user_messages`` / ``max_turns`` / ``fixtures`` win over the provider's.
Promptfoo splits a list of strings in a test's vars into one test per string, so suites that
use ``user_messages`` set ``defaultTest: {options: {disableVarExpansion: true}}``
(see ``docs/provider.md``).
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from agent_evals.conversation.driver import DEFAULT_MAX_TURNS, MAX_TURNS_LIMIT
from agent_evals.llm.caps import MAX_TOKENS_LIMIT
from agent_evals.provider.modes import ALLOW_STALE_ENV, GOLDEN, RECORD_ENV, REPLAY_ENV
from agent_evals.record import KitError, UserCheck
from agent_evals.validation_errors import describe

EXPANDED_MESSAGES = (
    "vars.user_messages arrived as one string, not a list: Promptfoo turns a list of strings in a test's vars "
    "into one test per string. Set `options: {disableVarExpansion: true}` in the suite's defaultTest (or the test), "
    "or PROMPTFOO_DISABLE_VAR_EXPANSION=1; a JSON list in a string ('[\"a\", \"b\"]') works too"
)


class ProviderConfigError(KitError, ValueError):
    """The provider config or the test's user definition is wrong; the message says what (kind ``config``)."""

    kind = "config"


class SimulatedUserSpec(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    goal: str | None = None
    persona: str | None = None
    facts: Any = None
    instructions: str | None = None
    class_: str | None = Field(default=None, alias="class")
    params: dict[str, Any] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _goal_or_class(self) -> SimulatedUserSpec:
        if not self.class_ and not (self.goal and self.goal.strip()):
            raise ValueError("simulated_user needs a 'goal' (or a 'class' for a custom simulator)")
        return self


class UserChecksSpec(BaseModel):
    """``user_checks: {skip: [...]}``: the user checks a suite switches off (docs/user-checks.md)."""

    model_config = ConfigDict(extra="forbid")

    skip: list[UserCheck] = Field(default_factory=list)


class ProviderConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    agent: str | None = None  # agent_config/agents/<agent>, or the name your factory knows; None: the factory's default
    factory: str | None = None
    instructions_file: str | None = None
    model: str | None = None
    temperature: float | None = Field(default=None, ge=0.0, le=2.0)
    max_tool_rounds: int | None = Field(default=None, ge=1, le=50)
    max_tokens: int | None = Field(default=None, ge=1, le=MAX_TOKENS_LIMIT)
    mode: Literal["conversation", "single_turn"] = "conversation"
    max_turns: int = Field(default=DEFAULT_MAX_TURNS, ge=1, le=MAX_TURNS_LIMIT)
    deadline_s: float | None = Field(default=None, gt=0, le=24 * 3600)
    timeout: float | None = Field(default=None, gt=0)  # Promptfoo's own per-call limit (ms), read for the deadline
    simulated_user: SimulatedUserSpec | None = None
    user_messages: list[str] | None = None
    fixtures: list[Any] | None = None  # what the case relies on (the pack's form), made before the conversation
    user_model: str | None = None
    user_temperature: float | None = Field(default=0.3, ge=0.0, le=2.0)
    user_max_tokens: int | None = Field(default=None, ge=1, le=MAX_TOKENS_LIMIT)
    record: str | None = None
    replay: str | None = None
    variant: str | None = None
    allow_stale: bool = False
    pack: str = "generic"
    otlp_endpoint: str | None = None
    budget_usd: float | None = Field(default=None, gt=0)  # read by the runner (agent_evals.runner.budget)
    user_checks: bool | UserChecksSpec = True  # the checks of the simulated user (agent_evals.user_checks)
    base_path: str | None = Field(default=None, alias="basePath")

    @model_validator(mode="after")
    def _one_user(self) -> ProviderConfig:
        if self.simulated_user is not None and self.user_messages is not None:
            raise ValueError("give either simulated_user or user_messages, not both")
        if self.user_messages is not None and not all(isinstance(m, str) and m.strip() for m in self.user_messages):
            raise ValueError("user_messages must be a list of non-empty strings")
        if self.record and self.replay:
            raise ValueError("record and replay are exclusive")
        return self

    @property
    def base_dir(self) -> Path:
        return Path(self.base_path) if self.base_path else Path.cwd()

    def resolve(self, path: str) -> Path:
        candidate = Path(path).expanduser()
        return candidate if candidate.is_absolute() else self.base_dir / candidate

    def record_dir(self) -> Path | None:
        return self.resolve(self.record) if self.record else None

    def replay_dir(self) -> Path | None:
        if not self.replay:
            return None
        return self.base_dir / GOLDEN if self.replay == GOLDEN else self.resolve(self.replay)


_TEST_KEYS = ("simulated_user", "user_messages", "max_turns", "fixtures")


def parse_config(
    provider_config: Mapping[str, Any] | None,
    test_vars: Mapping[str, Any] | None,
    env: Mapping[str, str] | None = None,
) -> ProviderConfig:
    """Merge the provider's config, the test's user definition and the environment."""
    env = os.environ if env is None else env
    merged: dict[str, Any] = {k: v for k, v in dict(provider_config or {}).items() if v is not None}
    merged.pop("workers", None)  # Promptfoo's own keys
    merged.pop("pythonExecutable", None)
    retries = merged.pop("maxRetries", 0)
    if retries not in (0, None):
        raise ProviderConfigError(
            f"maxRetries: {retries!r} is refused: a Promptfoo retry runs the whole conversation again (new pull "
            "requests, new tokens). The kit retries each model call itself (LLM_MAX_RETRIES, honouring "
            "Retry-After); leave maxRetries out or set it to 0"
        )
    test_vars = test_vars or {}
    if any(test_vars.get(k) is not None for k in ("simulated_user", "user_messages")):
        merged.pop("simulated_user", None)
        merged.pop("user_messages", None)
    for key in _TEST_KEYS:
        if test_vars.get(key) is not None:
            merged[key] = _json_text(test_vars[key])
    if isinstance(merged.get("user_messages"), str):
        raise ProviderConfigError(EXPANDED_MESSAGES)
    if "record" not in merged and env.get(RECORD_ENV):
        merged["record"] = env[RECORD_ENV]
    if "replay" not in merged and env.get(REPLAY_ENV):
        merged["replay"] = env[REPLAY_ENV]
    if "allow_stale" not in merged and env.get(ALLOW_STALE_ENV, "").strip().lower() in ("1", "true", "yes"):
        merged["allow_stale"] = True
    try:
        config = ProviderConfig.model_validate(merged)
    except ValidationError as exc:
        raise ProviderConfigError("bad provider configuration: " + describe(exc)) from exc
    if config.mode == "conversation" and config.simulated_user is None and config.user_messages is None:
        raise ProviderConfigError(
            "no user definition: set vars.simulated_user (goal, persona, facts) or vars.user_messages in the test, "
            "or the same in the provider config, or use mode: single_turn"
        )
    return config


def _json_text(value: Any) -> Any:
    """Vars from CSV or ``--var`` arrive as text: a JSON object or list in text is parsed."""
    if isinstance(value, str) and value.strip()[:1] in ("{", "["):
        try:
            return json.loads(value)
        except ValueError:
            return value  # validation then says what is wrong
    return value

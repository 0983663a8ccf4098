"""The conversation deadline: a conversation that runs too long ends as an error of kind
``timeout``, with everything done so far, before Promptfoo's Python worker timeout kills it.

Promptfoo gives a Python provider call ``REQUEST_TIMEOUT_MS`` (default 300 000 ms) or the
provider's ``config.timeout``; past it, the row is a JavaScript stack trace with nothing of the
conversation, and the worker keeps running it. The kit's deadline (``deadline_s`` in the
provider config, else ``AGENT_EVALS_DEADLINE_S``, else :data:`DEFAULT_DEADLINE_S`) is therefore
kept :data:`MARGIN_S` below Promptfoo's limit; ``agent-evals run`` sets ``REQUEST_TIMEOUT_MS``
to the deadline plus the margin, so under the runner the deadline is exactly what was asked.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from agent_evals.record import KitError

DEADLINE_ENV = "AGENT_EVALS_DEADLINE_S"
DEFAULT_DEADLINE_S = 900.0
PROMPTFOO_DEFAULT_TIMEOUT_MS = 300_000
MARGIN_S = 30.0
MAX_DEADLINE_S = 24 * 3600.0


class DeadlineError(KitError, ValueError):
    kind = "config"


class ConversationTimeout(KitError):
    """The conversation ran past its deadline (kind ``timeout``)."""

    kind = "timeout"


def deadline_s(configured: float | None, promptfoo_timeout_ms: float | None = None,
               env: Mapping[str, str] | None = None) -> float:
    """The deadline of one conversation, in seconds (see the module docstring)."""
    env = os.environ if env is None else env
    wanted = configured if configured is not None else _env_deadline(env)
    limit_ms = promptfoo_timeout_ms or _env_ms(env.get("REQUEST_TIMEOUT_MS")) or PROMPTFOO_DEFAULT_TIMEOUT_MS
    return max(1.0, min(wanted, limit_ms / 1000 - MARGIN_S))


def runner_request_timeout_ms(deadline: float) -> int:
    """What the runner gives Promptfoo as ``REQUEST_TIMEOUT_MS`` for a deadline."""
    return int((deadline + MARGIN_S + 5) * 1000)


def configured_deadline_s(env: Mapping[str, str] | None = None) -> float:
    """``AGENT_EVALS_DEADLINE_S`` or the default (raises DeadlineError for a bad value)."""
    return _env_deadline(os.environ if env is None else env)


def _env_deadline(env: Mapping[str, str]) -> float:
    raw = env.get(DEADLINE_ENV, "").strip()
    if not raw:
        return DEFAULT_DEADLINE_S
    try:
        value = float(raw)
    except ValueError:
        value = -1.0
    if not 0 < value <= MAX_DEADLINE_S:
        raise DeadlineError(f"{DEADLINE_ENV} must be a number of seconds above 0 and at most {MAX_DEADLINE_S:g}, "
                            f"got {raw!r}")
    return value


def _env_ms(raw: str | None) -> float | None:
    try:
        value = float(raw) if raw else None
    except ValueError:
        return None
    return value if value and value > 0 else None

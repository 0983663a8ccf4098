"""Bounded retries with exponential backoff and jitter, visible and testable.

Nothing below retries (:mod:`agent_evals.llm.chat_http` sends one request per attempt);
:func:`call_with_retries` does the retrying. An attempt reports a classified failure by raising
:class:`AttemptError` with a :class:`Failure`:

* retried: ``rate_limited`` (429), ``server_error`` (5xx), ``timeout`` (client timeout
  or HTTP 408) and ``connection`` (refused, reset, DNS…);
* not retried: ``rejected`` (400, 401, 403, 404, 422… — retrying cannot help) and
  ``bad_reply`` (a 200 whose body is not a usable chat completion; a server that sends
  garbage once usually sends it again, so we fail fast with a clear message).

A server can override this with the header ``x-should-retry: true|false`` (OpenAI sends
it; the scripted server sends ``false`` when its script has run out).

The wait before retry *n* (1-based) is ``base_delay_s * 2**(n-1)``, reduced by up to
``jitter`` (a fraction) at random, unless the server said how long to wait
(``retry-after-ms``, or ``Retry-After`` in seconds or as an HTTP date), which is honoured
as given. Every wait is capped at ``max_delay_s``. Each retry is logged at WARNING with
the failure and the wait; the final failure is an :class:`~agent_evals.llm.types.LLMError`
whose one-line message says whether the server answered (:func:`final_message`)::

    HTTP 503 from the model server at api.example.com (model gpt-4o, after 4 attempts): busy
    model gpt-4o at 127.0.0.1:8080 unreachable after 4 attempts: connection refused — is …
"""

from __future__ import annotations

import asyncio
import logging
import random
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from email.utils import parsedate_to_datetime
from typing import Literal, TypeVar

from agent_evals.llm.types import LLMError

log = logging.getLogger(__name__)

T = TypeVar("T")

FailureKind = Literal["rate_limited", "server_error", "timeout", "connection", "rejected", "bad_reply"]
RETRYABLE_KINDS: frozenset[str] = frozenset({"rate_limited", "server_error", "timeout", "connection"})

Sleep = Callable[[float], Awaitable[None]]
Clock = Callable[[], float]
Random = Callable[[], float]


@dataclass(frozen=True)
class Target:
    """What is called: a model on a server (``host[:port]``), for logs and error messages."""

    model: str
    host: str

    def __str__(self) -> str:
        return f"model {self.model} at {self.host}"


@dataclass(frozen=True)
class Failure:
    """One failed attempt, described without secrets (``detail`` and ``hint`` end up in messages).

    ``detail`` is what happened; for an HTTP answer (``status`` set) it is what the server
    said, shortened. ``hint`` says what to check, for common mistakes ("" when none).
    """

    kind: FailureKind
    detail: str
    status: int | None = None
    headers: Mapping[str, str] = field(default_factory=dict)
    hint: str = ""

    @property
    def summary(self) -> str:
        """``HTTP 503: busy`` for an HTTP answer, else the detail (for the retry log)."""
        return f"HTTP {self.status}: {self.detail}" if self.status is not None else self.detail

    @property
    def retryable(self) -> bool:
        """By kind, unless the server said otherwise with ``x-should-retry: true|false``."""
        said = next((v.strip().lower() for k, v in self.headers.items() if k.lower() == "x-should-retry"), "")
        if said in ("true", "false"):
            return said == "true"
        return self.kind in RETRYABLE_KINDS


class AttemptError(Exception):
    """Raised by an attempt to report a classified :class:`Failure` to the retry loop."""

    def __init__(self, failure: Failure) -> None:
        super().__init__(failure.detail)
        self.failure = failure


@dataclass(frozen=True)
class RetryPolicy:
    """How many attempts and how long to wait between them."""

    max_attempts: int = 4
    base_delay_s: float = 0.5
    max_delay_s: float = 30.0
    jitter: float = 0.25

    def __post_init__(self) -> None:
        if self.max_attempts < 1:
            raise ValueError(f"max_attempts must be at least 1, got {self.max_attempts}")
        if self.base_delay_s < 0 or self.max_delay_s < 0:
            raise ValueError("delays must not be negative")
        if not 0 <= self.jitter <= 1:
            raise ValueError(f"jitter must be a fraction between 0 and 1, got {self.jitter}")

    def backoff_s(self, retry: int, rng: Random = random.random) -> float:
        """Exponential wait before retry number ``retry`` (1-based), with jitter, capped."""
        delay = min(self.max_delay_s, self.base_delay_s * 2.0 ** (retry - 1))
        return delay * (1 - self.jitter * rng())

    def wait_s(self, failure: Failure, retry: int, *, now: float, rng: Random = random.random) -> float:
        """The server's requested wait if it gave one, else the backoff; never above the cap."""
        asked = retry_after_s(failure.headers, now=now)
        wait = asked if asked is not None else self.backoff_s(retry, rng)
        return min(self.max_delay_s, wait)


def retry_after_s(headers: Mapping[str, str], *, now: float) -> float | None:
    """Seconds the server asked us to wait, from ``retry-after-ms`` or ``Retry-After``.

    ``now`` is the current epoch time (used for the HTTP-date form). Unparseable values
    are ignored (None); a date in the past means 0.
    """
    lowered = {k.lower(): v for k, v in headers.items()}
    millis = _non_negative_float(lowered.get("retry-after-ms"))
    if millis is not None:
        return millis / 1000
    value = lowered.get("retry-after")
    if value is None:
        return None
    seconds = _non_negative_float(value)
    if seconds is not None:
        return seconds
    try:
        when = parsedate_to_datetime(value.strip())
    except (TypeError, ValueError, IndexError):
        return None
    if when.tzinfo is None:  # RFC 7231 dates are GMT
        return None
    return max(0.0, when.timestamp() - now)


def _non_negative_float(value: str | None) -> float | None:
    if value is None:
        return None
    try:
        number = float(value.strip())
    except ValueError:
        return None
    return number if number >= 0 and number == number and number != float("inf") else None


async def call_with_retries(
    attempt: Callable[[], Awaitable[T]],
    *,
    policy: RetryPolicy,
    target: Target,
    sleep: Sleep = asyncio.sleep,
    clock: Clock = time.time,
    rng: Random = random.random,
) -> T:
    """Run ``attempt`` until it succeeds, fails for good, or the attempts run out.

    ``target`` names what is called in logs and errors (:class:`Target`). ``sleep``, ``clock`` (epoch seconds) and ``rng`` are injectable
    for tests. Exceptions other than :class:`AttemptError` propagate untouched.
    """
    for number in range(1, policy.max_attempts + 1):
        try:
            return await attempt()
        except AttemptError as exc:
            failure = exc.failure
        if not failure.retryable:
            raise LLMError(final_message(target, failure, attempts=number)) from None
        if number == policy.max_attempts:
            break
        wait = policy.wait_s(failure, number, now=clock(), rng=rng)
        log.warning(
            "%s: attempt %d/%d failed (%s); retrying in %.2f s",
            target,
            number,
            policy.max_attempts,
            failure.summary,
            wait,
        )
        await sleep(wait)
    raise LLMError(final_message(target, failure, attempts=policy.max_attempts)) from None


def final_message(target: Target, failure: Failure, *, attempts: int) -> str:
    """The error text after the last attempt: one line saying whether the server answered,
    what it said or what happened, how often it was tried, and what to check."""
    tries = "1 attempt" if attempts == 1 else f"{attempts} attempts"
    if failure.status is not None:
        after = f", after {tries}" if attempts > 1 else ""
        text = f"HTTP {failure.status} from the model server at {target.host} (model {target.model}{after}): {failure.detail}"
    elif failure.kind == "bad_reply":
        text = f"{target} sent an unusable reply: {failure.detail}"
    elif failure.kind == "timeout":
        text = f"{target} did not answer after {tries}: {failure.detail}"
    elif failure.kind == "connection":
        text = f"{target} unreachable after {tries}: {failure.detail}"
    else:
        text = f"{target} failed: {failure.detail}"
    return f"{text} — {failure.hint}" if failure.hint else text

"""The retry loop and wait computation, without any HTTP."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from email.utils import format_datetime

import pytest

from agent_evals.llm.retry import AttemptError, Failure, RetryPolicy, Target, call_with_retries, retry_after_s
from agent_evals.llm.types import LLMError

from .llm_fakes import RecordedSleeps

NOW = 1_700_000_000.0


def http_date(epoch: float) -> str:
    return format_datetime(datetime.fromtimestamp(epoch, tz=UTC), usegmt=True)


@pytest.mark.parametrize(
    ("headers", "expected"),
    [
        ({"Retry-After": "3"}, 3.0),
        ({"retry-after": "1.5"}, 1.5),
        ({"retry-after-ms": "250"}, 0.25),
        ({"retry-after-ms": "250", "Retry-After": "9"}, 0.25),  # the precise one wins
        ({"Retry-After": http_date(NOW + 7)}, 7.0),
        ({"Retry-After": http_date(NOW - 60)}, 0.0),  # a date in the past: go now
        ({}, None),
        ({"Retry-After": "soon"}, None),  # unparseable: fall back to backoff
        ({"Retry-After": "-1"}, None),
        ({"retry-after-ms": "nan"}, None),
    ],
)
def test_retry_after_forms(headers: dict[str, str], expected: float | None) -> None:
    assert retry_after_s(headers, now=NOW) == expected


def test_backoff_doubles_with_jitter_and_is_capped() -> None:
    policy = RetryPolicy(base_delay_s=1.0, max_delay_s=5.0, jitter=0.5)
    assert [policy.backoff_s(n, rng=lambda: 0.0) for n in (1, 2, 3, 4)] == [1.0, 2.0, 4.0, 5.0]
    assert [policy.backoff_s(n, rng=lambda: 1.0) for n in (1, 2, 3, 4)] == [0.5, 1.0, 2.0, 2.5]


def test_server_wait_is_honoured_but_capped() -> None:
    policy = RetryPolicy(max_delay_s=10.0)
    assert policy.wait_s(Failure("rate_limited", "x", 429, {"Retry-After": "4"}), 1, now=NOW) == 4.0
    assert policy.wait_s(Failure("rate_limited", "x", 429, {"Retry-After": "3600"}), 1, now=NOW) == 10.0


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"max_attempts": 0}, "max_attempts must be at least 1"),
        ({"jitter": 1.5}, "jitter must be a fraction"),
        ({"base_delay_s": -1}, "delays must not be negative"),
    ],
)
def test_policy_rejects_bad_values(kwargs: dict[str, float], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        RetryPolicy(**kwargs)  # type: ignore[arg-type]


def run(failures: list[Failure], policy: RetryPolicy, sleeps: RecordedSleeps) -> tuple[str, int]:
    """Fail with ``failures`` in turn, then succeed; returns the result and the attempt count."""
    attempts = 0

    async def attempt() -> str:
        nonlocal attempts
        attempts += 1
        if attempts <= len(failures):
            raise AttemptError(failures[attempts - 1])
        return "ok"

    result = asyncio.run(
        call_with_retries(
            attempt, policy=policy, target=Target("m", "h"), sleep=sleeps, clock=lambda: NOW, rng=lambda: 0.0
        )
    )
    return result, attempts


@pytest.mark.parametrize("kind", ["rate_limited", "server_error", "timeout", "connection"])
def test_transient_failures_are_retried(kind: str, sleeps: RecordedSleeps) -> None:
    failure = Failure(kind, "boom")  # type: ignore[arg-type]
    assert run([failure, failure], RetryPolicy(base_delay_s=1), sleeps) == ("ok", 3)
    assert sleeps.waits == [1.0, 2.0]


@pytest.mark.parametrize(
    ("failure", "message"),
    [
        (Failure("rejected", "bad", 400), "HTTP 400 from the model server at h (model m): bad"),
        (
            Failure("rejected", "Not Found", 404, hint="check that OPENAI_BASE_URL ends with /v1"),
            "HTTP 404 from the model server at h (model m): Not Found — check that OPENAI_BASE_URL ends with /v1",
        ),
        (Failure("bad_reply", "no choices"), "model m at h sent an unusable reply: no choices"),
        (
            Failure("server_error", "done", 500, {"x-should-retry": "false"}),
            "HTTP 500 from the model server at h (model m): done",
        ),
    ],
)
def test_permanent_failures_are_not_retried(failure: Failure, message: str, sleeps: RecordedSleeps) -> None:
    with pytest.raises(LLMError) as caught:
        run([failure], RetryPolicy(), sleeps)
    assert str(caught.value) == message
    assert sleeps.waits == []


def test_server_may_ask_to_retry_a_client_error(sleeps: RecordedSleeps) -> None:
    failure = Failure("rejected", "HTTP 409: conflict", 409, {"X-Should-Retry": "true"})
    assert run([failure], RetryPolicy(), sleeps) == ("ok", 2)


def test_exhausted_attempts_report_the_last_failure(sleeps: RecordedSleeps) -> None:
    failures = [Failure("timeout", "timed out"), Failure("server_error", "bad gateway", 502)]
    with pytest.raises(LLMError) as caught:
        run(failures, RetryPolicy(max_attempts=2), sleeps)
    # the server answered: the message says so, with what it said, never "unreachable"
    assert str(caught.value) == "HTTP 502 from the model server at h (model m, after 2 attempts): bad gateway"
    assert len(sleeps.waits) == 1


@pytest.mark.parametrize(
    ("failure", "message"),
    [
        (
            Failure("connection", "connection refused", hint="is the model server running at http://h/v1?"),
            "model m at h unreachable after 2 attempts: connection refused — is the model server running at http://h/v1?",
        ),
        (Failure("timeout", "no answer within 5 s (timeout)"), "model m at h did not answer after 2 attempts: no answer within 5 s (timeout)"),
    ],
)
def test_no_answer_says_so_with_its_hint(failure: Failure, message: str, sleeps: RecordedSleeps) -> None:
    with pytest.raises(LLMError) as caught:
        run([failure, failure], RetryPolicy(max_attempts=2), sleeps)
    assert str(caught.value) == message


def test_failure_summary_names_the_status_for_the_retry_log() -> None:
    assert Failure("server_error", "busy", 503).summary == "HTTP 503: busy"
    assert Failure("timeout", "no answer").summary == "no answer"


def test_single_attempt_policy_never_sleeps(sleeps: RecordedSleeps) -> None:
    with pytest.raises(LLMError, match="unreachable after 1 attempt: boom"):
        run([Failure("connection", "boom")], RetryPolicy(max_attempts=1), sleeps)
    assert sleeps.waits == []


def test_other_exceptions_propagate_untouched(sleeps: RecordedSleeps) -> None:
    async def attempt() -> str:
        raise KeyError("bug")

    with pytest.raises(KeyError):
        asyncio.run(call_with_retries(attempt, policy=RetryPolicy(), target=Target("m", "h"), sleep=sleeps))
    assert sleeps.waits == []

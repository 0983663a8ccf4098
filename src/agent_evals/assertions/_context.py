"""From Promptfoo's assertion context to a grade function, and back to a result.

Promptfoo calls ``get_assert(output, context)``; `grade_from_context` takes the
assertion's ``config`` and the provider metadata out of ``context`` and calls a grade
function ``grade(config, metadata) -> GradingResult``. Grade functions are wrapped
with `grader`, which turns a `ConfigError` or `MetadataError` into ``pass: false``
with a reason that starts with the assertion's name; other exceptions are bugs and
propagate (Promptfoo then fails the assertion with the traceback).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from typing import Any, Protocol

from agent_evals.assertions._config import ConfigError
from agent_evals.assertions._result import GradingResult, fail
from agent_evals.assertions._run import MetadataError
from agent_evals.record import MARKER as PROVIDER_MARKER_KEY
from agent_evals.record.fixture_refs import FixtureReferenceError, fill_references, references


class GradeFunction(Protocol):
    def __call__(self, config: Any, metadata: Any) -> GradingResult: ...


def grader(name: str) -> Callable[[Callable[..., GradingResult]], Callable[..., GradingResult]]:
    """Decorate a grade function: configuration and metadata errors become failed results."""

    def decorate(function: Callable[..., GradingResult]) -> Callable[..., GradingResult]:
        @functools.wraps(function)
        def graded(config: Any, metadata: Any, **kwargs: Any) -> GradingResult:
            try:
                return function(_with_fixture_values(config, metadata), metadata, **kwargs)
            except (ConfigError, FixtureReferenceError) as err:
                return fail(f"{name}: invalid config: {err}")
            except MetadataError as err:
                return fail(f"{name}: {err}")

        return graded

    return decorate


def _with_fixture_values(config: Any, metadata: Any) -> Any:
    """The config with each ``$fixture.<key>.<field>`` replaced by the value of the case's fixture
    (the run record's ``fixtures``): e.g. ``args: {id: $fixture.failing.id}``."""
    if not references(config):
        return config
    fixtures = metadata.get("fixtures") if isinstance(metadata, Mapping) else None
    return fill_references(config, fixtures if isinstance(fixtures, list) else [])


def metadata_from_context(context: Any) -> Any:
    """The provider metadata: ``providerResponse.metadata``, else ``context.metadata``.

    The first candidate carrying the agent_evals marker wins; without a marker the first
    non-empty candidate is returned (so the error can list its keys).
    """
    if not isinstance(context, Mapping):
        return None
    response = context.get("providerResponse")
    candidates = [
        response.get("metadata") if isinstance(response, Mapping) else None,
        context.get("metadata"),
    ]
    present = [item for item in candidates if isinstance(item, Mapping) and item]
    marked = [item for item in present if PROVIDER_MARKER_KEY in item]
    chosen = marked or present
    return chosen[0] if chosen else None


def config_from_context(context: Any) -> Any:
    """The assertion's ``config:`` (None when the suite gave none)."""
    return context.get("config") if isinstance(context, Mapping) else None


def grade_from_context(grade: GradeFunction, context: Any) -> GradingResult:
    """Call ``grade(config, metadata)`` with the parts of a Promptfoo assertion context."""
    return grade(config_from_context(context), metadata_from_context(context))

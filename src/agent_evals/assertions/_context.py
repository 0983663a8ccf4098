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
from agent_evals.assertions._result import GradingResult, fail, make_result
from agent_evals.assertions._run import MetadataError

from agent_evals.record import MARKER as PROVIDER_MARKER_KEY
from agent_evals.record.fixture_refs import FixtureReferenceError, fill_references, references
from agent_evals.record.row_labels import NOT_GRADED


class GradeFunction(Protocol):
    def __call__(self, config: Any, metadata: Any, *, negated: bool = False) -> GradingResult: ...


def grader(name: str) -> Callable[[Callable[..., GradingResult]], Callable[..., GradingResult]]:
    """Decorate a grade function: configuration and metadata errors become failed results;
    ``negated=True`` grades the check's ``not-`` form (:func:`negate`)."""

    def decorate(function: Callable[..., GradingResult]) -> Callable[..., GradingResult]:
        @functools.wraps(function)
        def graded(config: Any, metadata: Any, *, negated: bool = False, **kwargs: Any) -> GradingResult:
            try:
                result = function(_with_fixture_values(config, metadata), metadata, **kwargs)
            except (ConfigError, FixtureReferenceError) as err:
                return fail(f"{name}: invalid config: {err}")  # never a verdict about the agent: not negated
            except MetadataError as err:
                return fail(f"{name}: {err}")
            return negate(name, result) if negated else result

        return graded

    return decorate


def negate(name: str, result: GradingResult) -> GradingResult:
    """The ``not-`` form of a check's verdict: it passes when the check fails, with the score
    ``1 - score`` and the check's reason kept. What is not a verdict stays as it is: a check
    that was NOT GRADED (or whose config or metadata is bad) fails, never passes. The check's
    own named scores are left out: they measure the opposite of what the negated check asks."""
    if str(result.get("reason", "")).startswith(NOT_GRADED):
        return result
    passed = not result["pass"]
    why = "passes: the check fails, as the not- form asks" if passed else "fails: the check passes, which the not- form forbids"
    return make_result(passed, f"not-{name} {why}: {result['reason']}", score=1.0 - float(result["score"]))


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


def grade_from_context(grade: GradeFunction, context: Any, *, negated: bool = False) -> GradingResult:
    """Call ``grade(config, metadata)`` with the parts of a Promptfoo assertion context
    (``negated``: the check's ``not-`` form, as ``get_assert_not`` asks)."""
    config = config_from_context(context)
    if not negated and _inverted_by_promptfoo(grade, context, config):
        raise ValueError(
            "this kit check is negated with not-python, but the suite's hook (hooks/kit.js:beforeEach) did not turn it "
            "into the kit's own negation: Promptfoo would invert it and a check that cannot be graded would pass; "
            "add the kit's hooks to the suite's extensions (docs/assertions.md)"
        )
    return grade(config, metadata_from_context(context), negated=negated)


def _inverted_by_promptfoo(grade: GradeFunction, context: Any, config: Any) -> bool:
    """Whether this assertion is the test's ``not-python`` entry of this check, left as written."""
    name = str(getattr(grade, "__module__", "")).rpartition(".")[2]
    test = context.get("test") if isinstance(context, Mapping) else None
    asserts = test.get("assert") if isinstance(test, Mapping) else None
    return any(
        isinstance(a, Mapping) and a.get("type") == "not-python"
        and str(a.get("value") or "").endswith(f"assertions/{name}.py") and a.get("config") == config
        for a in asserts or ()
    ) and not any(
        isinstance(a, Mapping) and a.get("type") == "python"
        and str(a.get("value") or "").endswith(f"assertions/{name}.py") and a.get("config") == config
        for a in asserts or ()
    )

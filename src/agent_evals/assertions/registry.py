"""The kit's checks by name, and how to tell one in a Promptfoo test's ``assert`` list.

A kit check is written in a suite as a Python assertion whose file is
``assertions/<name>.py`` (``type: python, value: file://../../assertions/<name>.py``); the
suites' hook turns it into ``assertions/kit.js:<name>``, answered from the provider's grading
(:mod:`agent_evals.provider.grading`), which this module recognises too.
:func:`check_name` recognises one; :func:`parse_check_config` validates its ``config``
with the check's own parser (the one grading uses), so the preflight and the provider
reject a bad config before the run instead of failing the case.
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Mapping
from functools import cache
from types import ModuleType
from typing import Any

from agent_evals.suites.check_ref import CheckRef

JUDGED_CHECKS = ("goal_reached", "expected_statements", "trajectory_quality")  # asked of the judge model
CORE_CHECKS = (
    "tool_sequence", "tool_not_executed", "argument_match", "function_call_metrics", "conversation", "reply_contains",
    "reply_grounded", "tool_order", "tool_errors", "repeated_calls", *JUDGED_CHECKS,
)


@cache
def pack_checks() -> dict[str, dict[str, str]]:
    """``{pack: {check: module}}`` of the kit's built-in packs."""
    from agent_evals.packs import built_in  # lazy: keeps agent_evals.assertions.grader_version's start-up as small as it is

    return {name: dict(pack.checks) for name, pack in built_in().items() if pack.checks}


@cache
def kit_check_names() -> tuple[str, ...]:
    return CORE_CHECKS + tuple(name for checks in pack_checks().values() for name in checks)


def pack_of(name: str) -> str | None:
    """The built-in pack a check belongs to; None for a core check (or an unknown name)."""
    return next((pack for pack, checks in pack_checks().items() if name in checks), None)
# Written so that Python's ``re`` and JavaScript's ``RegExp`` read them alike (hooks/kit.js uses them too).
KIT_FILE_PATTERN = r"(?:^|/)assertions/(\w+)\.py(?::(\w+))?$"  # assertions/<check>.py[:<function>]
KIT_JS_PATTERN = r"(?:^|/)assertions/kit\.js:(\w+)$"  # the same check, answered from the provider
_KIT_FILE = re.compile(KIT_FILE_PATTERN)
_KIT_JS = re.compile(KIT_JS_PATTERN)
NEGATED_JS = "not_"  # kit.js:not_<check>: the check's not- form, as the hook writes `not-python` on assertions/<check>.py
NEGATED_PY = "get_assert_not"  # assertions/<check>.py:get_assert_not: the same, graded in its own process


def check_name(assertion: Mapping[str, Any]) -> str | None:
    """``tool_sequence`` for ``{type: python, value: file://…/assertions/tool_sequence.py}`` (or the
    fast form the suites' hook makes of it, ``{type: javascript, value: file://…/assertions/kit.js:tool_sequence}``;
    or their ``not-`` forms), else None."""
    form = check_form(assertion)
    return form[0] if form is not None else None


def check_form(assertion: Mapping[str, Any]) -> tuple[str, bool] | None:
    """``(name, negated)`` of a kit check in any of its forms: ``python`` / ``not-python`` on
    ``assertions/<check>.py`` (``:get_assert_not`` negated), ``javascript`` on ``kit.js:<check>``
    (``kit.js:not_<check>`` negated); else None."""
    kind = assertion.get("type")
    value = str(assertion.get("value") or "").removeprefix("file://")
    if kind == "javascript":
        match = _KIT_JS.search(value)
        name = match.group(1) if match is not None else ""
        if name.startswith(NEGATED_JS) and name[len(NEGATED_JS):] in kit_check_names():
            return name[len(NEGATED_JS):], True
        return (name, False) if name in kit_check_names() else None
    if kind not in ("python", "not-python"):
        return None
    match = _KIT_FILE.search(value)
    if match is None or match.group(1) not in kit_check_names():
        return None
    return match.group(1), kind == "not-python" or match.group(2) == NEGATED_PY


def kit_checks(asserts: Any) -> list[CheckRef]:
    """The kit checks among a test's assertions, in order."""
    out = []
    for position, item in enumerate(asserts if isinstance(asserts, list) else []):
        if isinstance(item, Mapping) and (form := check_form(item)) is not None:
            informative = item.get("weight") == 0 and not isinstance(item.get("weight"), bool)
            out.append(CheckRef(form[0], item.get("config"), item.get("metric"), position, informative, form[1]))
    return out


def check_module(name: str) -> ModuleType:
    if name in CORE_CHECKS:
        return importlib.import_module(f"agent_evals.assertions.{name}")
    pack = pack_of(name)
    if pack is None:
        raise KeyError(f"unknown kit check {name!r}; known: {', '.join(kit_check_names())}")
    return importlib.import_module(pack_checks()[pack][name])


def parse_check_config(name: str, config: Any) -> Any:
    """The check's parsed config; raises ``ConfigError`` with the check's own message."""
    return check_module(name).parse_config(config)

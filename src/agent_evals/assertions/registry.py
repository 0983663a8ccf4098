"""The kit's checks by name, and how to tell one in a Promptfoo test's ``assert`` list.

A kit check is written in a suite as a Python assertion whose file is
``assertions/<name>.py`` (``type: python, value: file://../../assertions/<name>.py``); the
suites' hook turns it into ``assertions/kit.js:<name>``, answered from the provider's grading
(:mod:`agent_evals.provider.grading`), which this module recognises too.
:func:`check_name` recognises one; :func:`parse_check_config` validates its ``config``
with the check's own parser (the one grading uses), so the preflight and the provider
reject a bad config before the run instead of failing the case.

The checks a suite can name are the core's, the built-in packs' and its own pack's
(``Pack.checks``, whatever the pack's name or origin: pass the suite's pack as ``pack``). A name
no one knows, a pack's check that shadows a core check, or a check module that cannot be
imported or lacks ``parse_config``, ``grade`` or an integer ``VERSION`` is a
:class:`KitCheckError` (kind ``config``), one line.
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Mapping
from functools import cache
from types import ModuleType
from typing import TYPE_CHECKING, Any

from agent_evals.record import KitError
from agent_evals.suites.check_ref import CheckRef

if TYPE_CHECKING:
    from agent_evals.packs.base import Pack

JUDGED_CHECKS = ("goal_reached", "expected_statements", "trajectory_quality")  # asked of the judge model
CORE_CHECKS = (
    "tool_sequence", "tool_not_executed", "argument_match", "function_call_metrics", "conversation", "reply_contains",
    "reply_grounded", "tool_order", "tool_errors", "repeated_calls", *JUDGED_CHECKS,
)
CHECK_PARTS = ("parse_config", "grade", "VERSION")  # what a check's module defines (VERSION: an integer)


class KitCheckError(KitError, KeyError):
    """A kit check that cannot be had: a name neither the core nor a pack knows, a pack's check named
    like a core check, or a check module that cannot be imported or lacks a part (kind ``config``)."""

    kind = "config"

    def __str__(self) -> str:  # one line, not KeyError's quoted repr
        return str(self.args[0]) if self.args else ""


@cache
def _built_in_checks() -> dict[str, dict[str, str]]:
    from agent_evals.packs import built_in  # lazy: keeps agent_evals.assertions.grader_version's start-up as small as it is

    return {name: dict(pack.checks) for name, pack in built_in().items() if pack.checks}


def pack_checks(pack: Pack | None = None) -> dict[str, dict[str, str]]:
    """``{pack: {check: module}}``: the kit's built-in packs' and ``pack``'s, the suite's own, whatever its
    name or origin (a dotted path, a package outside the kit). The suite's pack comes first; a built-in
    pack's check of the same name is left out (the suite's pack cannot use it anyway)."""
    built = _built_in_checks()
    if pack is None or not pack.checks:
        return built
    if clash := sorted(set(pack.checks) & set(CORE_CHECKS)):
        raise KitCheckError(f"pack {pack.name!r}: check {clash[0]!r} has the name of a core check; rename it")
    others = {name: {c: m for c, m in checks.items() if c not in pack.checks}
              for name, checks in built.items() if name != pack.name}
    return {pack.name: dict(pack.checks), **{name: checks for name, checks in others.items() if checks}}


def check_modules(pack: Pack | None = None) -> tuple[str, ...]:
    """The module of every kit check a suite running with ``pack`` can name (the core's, then the packs'):
    what the run's warm server imports before it forks the workers that grade with them."""
    core = tuple(f"agent_evals.assertions.{name}" for name in CORE_CHECKS)
    packs = (module for checks in pack_checks(pack).values() for module in checks.values())
    return tuple(dict.fromkeys((*core, *packs)))


def kit_check_names(pack: Pack | None = None) -> tuple[str, ...]:
    """Every kit check a suite running with ``pack`` can name: the core's, then the packs'."""
    return CORE_CHECKS + tuple(name for checks in pack_checks(pack).values() for name in checks)


def pack_of(name: str, pack: Pack | None = None) -> str | None:
    """The pack a check belongs to (``pack``: the suite's, besides the built-in ones); None for a core
    check (or an unknown name)."""
    if name in CORE_CHECKS:
        return None
    return next((owner for owner, checks in pack_checks(pack).items() if name in checks), None)


# Written so that Python's ``re`` and JavaScript's ``RegExp`` read them alike (hooks/kit.js uses them too).
KIT_FILE_PATTERN = r"(?:^|/)assertions/(\w+)\.py(?::(\w+))?$"  # assertions/<check>.py[:<function>]
KIT_JS_PATTERN = r"(?:^|/)assertions/kit\.js:(\w+)$"  # the same check, answered from the provider
_KIT_FILE = re.compile(KIT_FILE_PATTERN)
_KIT_JS = re.compile(KIT_JS_PATTERN)
NEGATED_JS = "not_"  # kit.js:not_<check>: the check's not- form, as the hook writes `not-python` on assertions/<check>.py
NEGATED_PY = "get_assert_not"  # assertions/<check>.py:get_assert_not: the same, graded in its own process


def check_name(assertion: Mapping[str, Any], pack: Pack | None = None) -> str | None:
    """``tool_sequence`` for ``{type: python, value: file://…/assertions/tool_sequence.py}`` (or the
    fast form the suites' hook makes of it, ``{type: javascript, value: file://…/assertions/kit.js:tool_sequence}``;
    or their ``not-`` forms), else None."""
    form = check_form(assertion, pack)
    return form[0] if form is not None else None


def check_form(assertion: Mapping[str, Any], pack: Pack | None = None) -> tuple[str, bool] | None:
    """``(name, negated)`` of a kit check in any of its forms: ``python`` / ``not-python`` on
    ``assertions/<check>.py`` (``:get_assert_not`` negated), ``javascript`` on ``kit.js:<check>``
    (``kit.js:not_<check>`` negated); else None. ``pack``: the suite's, whose checks count too."""
    kind = assertion.get("type")
    value = str(assertion.get("value") or "").removeprefix("file://")
    known = kit_check_names(pack)
    if kind == "javascript":
        match = _KIT_JS.search(value)
        name = match.group(1) if match is not None else ""
        if name.startswith(NEGATED_JS) and name[len(NEGATED_JS):] in known:
            return name[len(NEGATED_JS):], True
        return (name, False) if name in known else None
    if kind not in ("python", "not-python"):
        return None
    match = _KIT_FILE.search(value)
    if match is None or match.group(1) not in known:
        return None
    return match.group(1), kind == "not-python" or match.group(2) == NEGATED_PY


def kit_checks(asserts: Any, pack: Pack | None = None) -> list[CheckRef]:
    """The kit checks among a test's assertions, in order (``pack``: the suite's, whose checks count too)."""
    out = []
    for position, item in enumerate(asserts if isinstance(asserts, list) else []):
        if isinstance(item, Mapping) and (form := check_form(item, pack)) is not None:
            informative = item.get("weight") == 0 and not isinstance(item.get("weight"), bool)
            out.append(CheckRef(form[0], item.get("config"), item.get("metric"), position, informative, form[1]))
    return out


def check_module(name: str, pack: Pack | None = None) -> ModuleType:
    """The module of a kit check (``pack``: the suite's); raises :class:`KitCheckError`, one line, for a name
    no one knows and for a pack's check whose module cannot be imported or lacks a part."""
    checks = pack_checks(pack)  # a pack's check named like a core check is an error here too
    if name in CORE_CHECKS:
        return importlib.import_module(f"agent_evals.assertions.{name}")
    owner = pack_of(name, pack)
    if owner is None:
        packs = f"of pack {pack.name} or of a built-in pack" if pack is not None else "of a built-in pack"
        raise KitCheckError(f"unknown kit check {name!r}: not a core check, nor a check {packs}; known: "
                            f"{', '.join(kit_check_names(pack))}")
    path = checks[owner][name]
    try:
        module = importlib.import_module(path)
    except ImportError as exc:
        raise KitCheckError(f"pack {owner!r}: check {name!r} names module {path!r}, which cannot be imported: {exc}") from None
    version = getattr(module, "VERSION", None)
    missing = [part for part in CHECK_PARTS[:2] if not callable(getattr(module, part, None))]
    missing += [] if isinstance(version, int) and not isinstance(version, bool) else ["an integer VERSION"]
    if missing:
        raise KitCheckError(f"pack {owner!r}: check {name!r} (module {path}) has no {', '.join(missing)}")
    return module


def parse_check_config(name: str, config: Any, pack: Pack | None = None) -> Any:
    """The check's parsed config; raises ``ConfigError`` with the check's own message."""
    return check_module(name, pack).parse_config(config)

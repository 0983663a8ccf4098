"""What a failing reason of a kit assertion names: the tools and the JSON paths (pure).

The kit's reasons start with the assertion's name and follow fixed formats
(``docs/assertions.md``); this reads them back:

- ``tool_sequence``: the missing and unexpected tools (``missing X after Y``,
  ``unexpected X (call 3; not expected)``, ``first difference …: expected X, got Y``);
- ``tool_not_executed``: the forbidden tools that were called;
- ``argument_match``: the tool, and each mismatching argument's pointer
  (``  /config/location: expected …``);
- ``function_call_metrics``: unmatched expected and unexpected calls, arguments that differ;
- a pack's checks: the submitting tool (``submitted: X call 3``), each pointer line of a
  change or schema error (``  + /config/location: …``) and a tool that ``succeeded at`` where
  it must not.

A reason of another assertion (Promptfoo's own, ``icontains-all``…) names neither.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

_NAME = r"[A-Za-z_][\w.*?\[\]-]*"
_POINTER_LINE = re.compile(r"^\s+(?:[-+~] )?(/[^\s:]*): ", re.M)
_SUBMITTED = re.compile(rf"submitted: ({_NAME}) call \d+")
_NEVER_CALLED = re.compile(rf"({_NAME}) was never called")
_MISSING = re.compile(r"(?:^|; )missing (.+?)(?= after | at the start| at position | \(|; |$)")
_UNEXPECTED = re.compile(rf"({_NAME}) \(call \d+;")
_UNEXPECTED_RUN = re.compile(r"(?:^|; )unexpected (.+?) from position \d+")
_DIFFERENCE = re.compile(rf"first difference at position \d+: expected ({_NAME}), got ({_NAME})")
_FORBIDDEN = re.compile(rf"(?:called: |; )({_NAME})(?: \(matches [^)]*\))? in turn \d+")
_ARG_CALL = re.compile(rf"^({_NAME}) \(call \d+, turn \d+\):$", re.M)
_ARG_HEAD = re.compile(rf"^argument_match: ({_NAME}) ")
_FCM_PAIR = re.compile(rf"^\s+expected #\d+ {_NAME} ↔ call \d+ ({_NAME}): .*?(?:; differ: (.+))?$", re.M)
_FCM_UNPAIRED = re.compile(rf"^\s+expected #\d+ ({_NAME}): no matching call$", re.M)
_FCM_EXTRA = re.compile(rf"^\s+call \d+ ({_NAME}): not expected$", re.M)
_PR_MADE = re.compile(rf"({_NAME}) succeeded at")
_COUNT = re.compile(r" ×\d+$")


@dataclass(frozen=True, slots=True)
class Named:
    """The tools and JSON paths one failing reason names, in order, without repeats."""

    tools: tuple[str, ...] = ()
    paths: tuple[str, ...] = ()


def named_in(reason: str) -> Named:
    """The tools and paths a failing reason of a kit assertion names (empty for others)."""
    assertion = reason.split(":", 1)[0].split(" ", 1)[0]
    reader = _READERS.get(assertion)
    if reader is None:
        if assertion not in _pack_check_names():
            return Named()
        reader = _pack_check
    tools, paths = reader(reason)
    return Named(_unique(tools), _unique(paths))


def _tool_sequence(reason: str) -> tuple[list[str], list[str]]:
    problems = "; ".join(reason.split("; ")[2:])  # after "tool_sequence MODE: expected …; actual …"
    tools: list[str] = []
    for match in _MISSING.finditer(problems):
        tools += _names(match.group(1))
    for match in _UNEXPECTED_RUN.finditer(problems):
        tools += _names(match.group(1))
    tools += _UNEXPECTED.findall(problems)
    for match in _DIFFERENCE.finditer(problems):
        tools += [match.group(1), match.group(2)]
    return tools, []


def _tool_not_executed(reason: str) -> tuple[list[str], list[str]]:
    return _FORBIDDEN.findall(reason.split("; forbidden: ")[0]), []


def _argument_match(reason: str) -> tuple[list[str], list[str]]:
    tools = _ARG_CALL.findall(reason) or [m.group(1) for m in [_ARG_HEAD.match(reason)] if m]
    return tools, _POINTER_LINE.findall(reason)


def _submission(reason: str) -> tuple[list[str], list[str]]:
    head = reason.splitlines()[0]
    tools = _SUBMITTED.findall(head) or _NEVER_CALLED.findall(head)
    return tools, _POINTER_LINE.findall(reason)


def _function_call_metrics(reason: str) -> tuple[list[str], list[str]]:
    tools, paths = [], []
    for tool, differ in _FCM_PAIR.findall(reason):
        if differ:
            tools.append(tool)
            paths += [f"/{name.strip()}" for name in differ.split(",")]
    tools += _FCM_UNPAIRED.findall(reason) + _FCM_EXTRA.findall(reason)
    return tools, paths


def _pack_check(reason: str) -> tuple[list[str], list[str]]:
    """A domain pack's check: the submitting tool and the pointer lines, or a tool that must not have succeeded."""
    tools, paths = _submission(reason)
    return tools + _PR_MADE.findall(reason), paths


def _pack_check_names() -> frozenset[str]:
    from agent_evals.assertions.registry import CORE_CHECKS, kit_check_names  # lazy: keeps agent_evals.golden.record's start-up as small as it is

    return frozenset(kit_check_names()) - frozenset(CORE_CHECKS)


def _names(text: str) -> list[str]:
    return [_COUNT.sub("", part.strip()) for part in text.split(", ") if part.strip()]


def _unique(items: list[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(items))


_READERS: dict[str, Callable[[str], tuple[list[str], list[str]]]] = {
    "tool_sequence": _tool_sequence,
    "tool_not_executed": _tool_not_executed,
    "argument_match": _argument_match,
    "function_call_metrics": _function_call_metrics,
}

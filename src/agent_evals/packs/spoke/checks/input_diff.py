"""``input_diff``: the submitted configuration differs from its source by exactly the expected changes.

Config: ``source`` (required: a spoke name, read from the end-state snapshot the provider
takes from the portal, or an inline object), ``expected_changes`` (required:
``{JSON Pointer: value}``, ``{}`` for "no change"; the value `REMOVED` = ``"$removed"``
means removed), ``ignore_paths`` (pointer prefixes or globs), ``tool`` (default
``create_spoke_pull_request``), ``argument`` (default ``config``). The submitted
configuration is chosen by `agent_evals.packs.spoke.checks.submission.select_submission`.
Named scores: ``expected_changes_made`` (fraction), ``no_collateral_changes`` (1.0 when
nothing else changed, else 0.0; the count is in the reason).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from agent_evals.authoring import (
    REMOVED,
    ChangeReport,
    ConfigError,
    ConfigReader,
    EntryOutcome,
    ExpectedChange,
    GradingResult,
    PointerError,
    Snapshot,
    check_changes,
    describe,
    fail,
    grader,
    make_result,
    render,
    require_snapshot,
)
from agent_evals.packs.spoke.checks.submission import DEFAULT_ARGUMENT, DEFAULT_TOOL, submitted

VERSION = 1  # the check's version, recorded with each verdict: bump it when a verdict can change (docs/assertions.md)

NAME = "input_diff"


@dataclass(frozen=True)
class InputDiffConfig:
    source: str | dict[str, Any]
    expected_changes: tuple[ExpectedChange, ...]
    ignore_paths: tuple[str, ...] = ()
    tool: str = DEFAULT_TOOL
    argument: str = DEFAULT_ARGUMENT


def parse_config(raw: Any) -> InputDiffConfig:
    """Read and check the config (raises ConfigError)."""
    reader = ConfigReader(raw, ("source", "expected_changes", "ignore_paths", "tool", "argument"))
    source = reader.require(
        "source", "a spoke name (read through the portal) or an inline configuration object"
    )
    if isinstance(source, Mapping):
        source = dict(source)
    elif not isinstance(source, str) or not source.strip():
        raise ConfigError(f"config.source must be a spoke name or an object, got {describe(source)}")
    changes = reader.mapping(
        "expected_changes", required=True, what=f"an object {{JSON Pointer: value or {REMOVED!r}}}"
    )
    ignore = reader.string_list(
        "ignore_paths", required=False, what="a list of JSON Pointer prefixes or globs"
    )
    for pattern in ignore:
        if not pattern.startswith("/") and not any(char in pattern for char in "*?["):
            raise ConfigError(
                f"config.ignore_paths: {pattern!r} is neither a JSON Pointer (starting with '/') nor a glob"
            )
    return InputDiffConfig(
        source=source,
        expected_changes=tuple(
            _expected_change(pointer, value) for pointer, value in (changes or {}).items()
        ),
        ignore_paths=ignore,
        tool=reader.string("tool", DEFAULT_TOOL, what="a tool name or glob"),
        argument=reader.string("argument", DEFAULT_ARGUMENT, what="an argument name"),
    )


def _expected_change(pointer: Any, value: Any) -> ExpectedChange:
    try:
        change = ExpectedChange(pointer, value)
    except PointerError as err:
        raise ConfigError(f"config.expected_changes: {err}") from None
    if change.removal and pointer == "":
        raise ConfigError(f"config.expected_changes: the whole document ('') cannot be {REMOVED}")
    return change


@grader(NAME)
def grade(config: Any, metadata: Any) -> GradingResult:
    """Grade the submitted configuration in ``metadata`` against its source."""
    cfg = parse_config(config)
    found = submitted(NAME, metadata, cfg.tool, cfg.argument)
    if not isinstance(found, tuple):
        return found
    run, submission = found
    snapshot = require_snapshot(run) if isinstance(cfg.source, str) else None
    source, source_label = _load_source(cfg.source, snapshot)
    if source is None:
        return fail(f"{NAME}: {source_label}")
    try:
        report = check_changes(source, submission.config, cfg.expected_changes, cfg.ignore_paths)
    except PointerError as err:
        raise ConfigError(
            f"config.expected_changes cannot apply to the source ({source_label}): {err}"
        ) from None
    context = f"submitted: {submission.describe()}; source: {source_label}"
    return make_result(
        report.passed,
        _reason(report, context),
        score=report.score,
        named_scores={
            "expected_changes_made": report.made_fraction,
            "no_collateral_changes": 0.0 if report.collateral else 1.0,
        },
    )


def spoke_resource(name: str) -> str:
    """The snapshot resource key of a source spoke."""
    return f"spoke/{name}"


def _load_source(source: str | dict[str, Any], snapshot: Snapshot | None) -> tuple[Any, str]:
    """(source configuration, label), or (None, why it could not be read)."""
    if isinstance(source, dict):
        return source, "inline object"
    key = spoke_resource(source)
    resources = snapshot.resources if snapshot is not None else {}
    if key not in resources:
        return None, (
            f"spoke {source!r} is not in the end-state snapshot (the provider reads the sources the case's "
            "input_diff assertions name when the conversation ends)"
        )
    spoke = resources[key]
    if spoke is None:
        return None, f"spoke {source!r} does not exist in the test repository (portal answered 404)"
    config = spoke.get("config") if isinstance(spoke, Mapping) else None
    if not isinstance(config, dict):
        return None, f"the portal's spoke {source!r} has no configuration object"
    return config, f"spoke {source!r} from the portal"


def _reason(report: ChangeReport, context: str) -> str:
    total = len(report.entries)
    if report.passed:
        made = f"all {total} expected change(s) made" if total else "no change expected, none made"
        return f"{NAME}: {made}, no other changes ({context})"
    head = (
        f"{NAME}: {report.made} of {total} expected change(s) made, "
        f"{len(report.collateral)} unexpected change(s)"
    )
    lines = [f"{head} ({context})"]
    if report.collateral:
        lines.append("unexpected changes (- removed, + added, ~ changed):")
        lines += [f"  {change.describe()}" for change in report.collateral]
    missing = [entry for entry in report.entries if entry.status == "missing"]
    if missing:
        lines.append("missing changes (still as in the source):")
        lines += [f"  {e.change.pointer}: expected {_shown(e)}, still {render(e.source)}" for e in missing]
    wrong = [entry for entry in report.entries if entry.status == "wrong"]
    if wrong:
        lines.append("wrong values:")
        for entry in wrong:
            lines.append(f"  {entry.change.pointer}: expected {_shown(entry)}, got {render(entry.actual)}")
            if len(entry.details) > 1 or entry.scope != entry.change.pointer:
                lines += [f"    {detail}" for detail in entry.details]
    return "\n".join(lines)


def _shown(entry: EntryOutcome) -> str:
    """The expected value; an array-element removal also shows the array it leaves."""
    if not entry.change.removal:
        return render(entry.change.value)
    if entry.scope != entry.change.pointer:
        return f"removed, so {entry.scope} becomes {render(entry.expected)}"
    return "removed"

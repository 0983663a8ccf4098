"""``spoke_json_valid``: the submitted configuration is valid and the created PR's validation succeeded.

Config: ``tool`` (default ``create_spoke_pull_request``), ``argument`` (default
``config``), ``check_pull_request`` (default true: every PR the record's ``side_effects``
name (kind ``pull_request``) must have ``validation_status: succeeded``, and there must be one).
The schema is the portal's (``GET /api/schema``, read into the end-state snapshot when
the conversation ended): ``schema`` plus ``additional_schema`` when not null. Named
score: ``schema_valid`` (1.0 when the submission has no schema error, else 0.0); the
number of schema errors is in the reason. Everything is read from the metadata.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from agent_evals.authoring import (
    BadSchema,
    ConfigReader,
    GradingResult,
    SchemaIssue,
    Snapshot,
    fail,
    grader,
    make_result,
    require_snapshot,
    schema_issues,
)
from agent_evals.packs.spoke.checks.submission import DEFAULT_ARGUMENT, DEFAULT_TOOL, submitted
from agent_evals.packs.spoke.created_prs import created_pull_requests, snapshot_pull_request

VERSION = 1  # the check's version, recorded with each verdict: bump it when a verdict can change (docs/assertions.md)

NAME = "spoke_json_valid"
SCHEMA_RESOURCE = "schema"


@dataclass(frozen=True)
class SpokeJsonValidConfig:
    tool: str = DEFAULT_TOOL
    argument: str = DEFAULT_ARGUMENT
    check_pull_request: bool = True


def parse_config(raw: Any) -> SpokeJsonValidConfig:
    """Read and check the config (raises ConfigError)."""
    reader = ConfigReader(raw, ("tool", "argument", "check_pull_request"))
    return SpokeJsonValidConfig(
        tool=reader.string("tool", DEFAULT_TOOL, what="a tool name or glob"),
        argument=reader.string("argument", DEFAULT_ARGUMENT, what="an argument name"),
        check_pull_request=reader.boolean("check_pull_request", True),
    )


@grader(NAME)
def grade(config: Any, metadata: Any) -> GradingResult:
    """Validate the submitted configuration and the PRs' validation status, from the snapshot."""
    cfg = parse_config(config)
    found = submitted(NAME, metadata, cfg.tool, cfg.argument)
    if not isinstance(found, tuple):
        return found
    run, submission = found
    snapshot = require_snapshot(run)
    schema = snapshot.resources.get(SCHEMA_RESOURCE)
    try:
        if not isinstance(schema, dict) or not isinstance(schema.get("schema"), dict):
            raise BadSchema("the snapshot has no portal schema (resource 'schema' with a 'schema' object)")
        issues = schema_issues(
            submission.config,
            {"schema": schema.get("schema"), "additional_schema": schema.get("additional_schema")},
        )
    except BadSchema as err:
        return fail(f"{NAME}: the portal's schema is unusable: {err}")
    ids = [p.id for p in created_pull_requests(run)]
    pr_lines, pr_ok = _pull_requests(snapshot, ids) if cfg.check_pull_request else ([], True)
    passed = not issues and pr_ok
    return make_result(
        passed,
        _reason(issues, pr_lines, passed, f"submitted: {submission.describe()}"),
        named_scores={"schema_valid": 0.0 if issues else 1.0},
    )


def _pull_requests(snapshot: Snapshot, ids: list[int]) -> tuple[list[str], bool]:
    """Lines about each PR's validation, and whether all succeeded."""
    if not ids:
        return ["no pull request was created in the conversation (the record has no pull_request side effect)"], False
    lines, ok = [], True
    for pr_id in ids:
        pr = snapshot_pull_request(snapshot, pr_id)
        if pr is None:
            lines.append(f"PR {pr_id} does not exist on the portal")
            ok = False
            continue
        status = pr.get("validation_status")
        lines.append(f"PR {pr_id} validation {status}")
        if status != "succeeded":
            ok = False
            for error in pr.get("validation_errors") or []:
                rule = f" ({error.get('rule')})" if error.get("rule") else ""
                lines.append(f"  {error.get('path') or '/'}: {error.get('message')}{rule}")
    return lines, ok


def _reason(issues: list[SchemaIssue], pr_lines: list[str], passed: bool, context: str) -> str:
    if passed:
        prs = "; ".join(pr_lines)
        return f"{NAME}: valid against the portal's schema" + (f"; {prs}" if prs else "") + f" ({context})"
    head = (
        f"{NAME}: {len(issues)} schema error(s)" if issues else f"{NAME}: valid against the portal's schema"
    )
    lines = [f"{head} ({context})"]
    if issues:
        lines.append("schema errors:")
        lines += [f"  {issue.describe()}" for issue in issues]
    lines += pr_lines
    return "\n".join(lines)

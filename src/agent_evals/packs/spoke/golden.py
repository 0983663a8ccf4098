"""The spoke pack's golden-plan placeholders (see :mod:`agent_evals.golden.plan`).

``$source``     the spoke the case copies (the case's ``input_diff`` source, else the ``$copy``
                of the plan's ``submitted``)
``$name``       the new spoke's name
``$submitted``  the configuration the case expects to be submitted: the plan's ``submitted``
                (a configuration, or ``{"$copy": spoke, "changes": {…}}``), else the case's
                ``input_diff`` source with ``expected_changes`` applied
``$summary``    a short text summary of ``$submitted``
``$pr_url``     the URL the last ``create_spoke_pull_request`` call returned (live)
``{"$copy": spoke, "changes": {pointer: value}}``  a seed spoke with changes applied
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from functools import cache
from typing import Any

from agent_evals.authoring import (
    Case,
    ExpectedChange,
    Live,
    PlanError,
    PlanValues,
    Unavailable,
    expected_document,
    tool_result,
)
from agent_evals.packs.spoke.seeds import seed_spoke_text

PR_TOOL = "create_spoke_pull_request"


@cache
def seed_spoke(name: str) -> dict[str, Any]:
    """A fresh copy of a seed spoke's configuration."""
    text = seed_spoke_text(name)
    if text is None:
        raise PlanError(f"unknown seed spoke {name!r}")
    return json.loads(text)


def apply_changes(source: Mapping[str, Any], changes: Mapping[str, Any]) -> dict[str, Any]:
    """``source`` with each JSON pointer of ``changes`` set to its value."""
    return expected_document(dict(source), [ExpectedChange(p, v) for p, v in changes.items()])


def submission(case: Case, entry: Mapping[str, Any]) -> dict[str, Any] | None:
    """The configuration the case expects the agent to submit."""
    if "submitted" in entry:
        submitted = entry["submitted"]
        if not isinstance(submitted, Mapping):
            raise PlanError(f"{case.id}: submitted must be a spoke configuration or {{$copy: spoke, changes: {{…}}}}")
        return _expand(submitted) or dict(submitted)
    diff = case.check_config("input_diff")
    if diff and isinstance(diff.get("source"), str):
        return apply_changes(seed_spoke(diff["source"]), diff.get("expected_changes") or {})
    return None


def summary(config: Mapping[str, Any]) -> str:
    subnets = ", ".join(f"{s['name']} {s['addressPrefix']}" for s in config.get("subnets", []))
    tags = config.get("tags", {})
    private_link = "enabled" if config.get("privateLink", {}).get("enabled") else "not enabled"
    return (
        f"Here is the configuration for **{config['name']}**:\n"
        f"- environment: {config['environment']}, region: {config['location']}\n"
        f"- address space: {', '.join(config['addressSpace'])}\n"
        f"- subnets: {subnets}\n"
        f"- private link: {private_link}\n"
        f"- cost centre {tags.get('costCenter')}, owner {tags.get('owner')}"
    )


def plan_values(case: Case, entry: Mapping[str, Any]) -> PlanValues:
    submitted = submission(case, entry)
    planned = entry.get("submitted")
    source = (case.check_config("input_diff") or {}).get("source") or (
        planned.get("$copy") if isinstance(planned, Mapping) else None)
    missing = ("the case has no input_diff check (whose source and expected_changes make it) and its plan entry no "
               "`submitted:` (a configuration, or {$copy: <seed spoke>, changes: {<JSON pointer>: <value>}})")
    values: dict[str, Any] = {
        "$pr_url": Live(lambda request: str(tool_result(request, PR_TOOL)["url"])),
        "$submitted": submitted if submitted is not None else Unavailable(missing),
        "$summary": summary(submitted) if submitted is not None else Unavailable(missing),
        "$source": source if source is not None else Unavailable(missing.replace("`submitted:`", "`submitted:` $copy")),
    }
    if submitted is not None and submitted.get("name") is not None:
        values["$name"] = submitted["name"]
    return PlanValues(values, expand=_expand)


def _expand(value: Mapping[str, Any]) -> Any | None:
    if "$copy" in value:
        return apply_changes(seed_spoke(value["$copy"]), value.get("changes") or {})
    return None

"""spoke_json_valid: schema errors with paths, additional schema, the PR's validation status (from the snapshot)."""

from __future__ import annotations

import pytest

from agent_evals.packs.spoke.checks.spoke_json_valid import SCHEMA_RESOURCE, grade

from ._assertion_support import call, metadata, portal_pull_request, snapshot, version_2

C = "create_spoke_pull_request"
SCHEMA = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "required": ["name", "settings"],
    "properties": {
        "name": {"type": "string"},
        "settings": {
            "type": "object",
            "properties": {
                "retries": {"type": "integer", "minimum": 0},
                "regions": {"type": "array", "items": {"enum": ["eu", "us"]}},
            },
        },
    },
}
ADDITIONAL = {"properties": {"name": {"pattern": "^[a-z]+$"}}}
VALID = {"name": "billing", "settings": {"retries": 3, "regions": ["eu"]}}


# the end state: the portal's schema, PR 1 validated, PR 2 failed its validation (no PR 9)
PORTAL = snapshot(
    schema=SCHEMA,
    additional_schema=ADDITIONAL,
    pull_requests=[
        portal_pull_request(1),
        portal_pull_request(
            2,
            validation_status="failed",
            validation_errors=[{"path": "/settings/retries", "message": "must be <= 10", "rule": "retries-limit"}],
        ),
    ],
)


def submitted(config: dict, prs: list[int], state: dict | None = PORTAL) -> dict:
    return metadata(
        [call(C, {"spoke_name": "billing", "config": config}, turn=2)], pull_requests=prs, snapshot=state
    )


def test_valid_config_and_succeeded_pr() -> None:
    result = grade({}, submitted(VALID, [1]))
    assert result == {
        "pass": True,
        "score": 1.0,
        "reason": "spoke_json_valid: valid against the portal's schema; PR 1 validation succeeded "
        "(submitted: create_spoke_pull_request call 1, turn 2, the only call with a configuration)",
        "namedScores": {"schema_valid": 1.0},
    }


def test_schema_errors_with_paths() -> None:
    config = {"name": "Billing", "settings": {"retries": "3", "regions": ["eu", "asia"]}}
    result = grade({}, submitted(config, [1]))
    assert result["pass"] is False
    assert result["namedScores"] == {"schema_valid": 0.0}
    assert result["reason"] == (
        "spoke_json_valid: 3 schema error(s) "
        "(submitted: create_spoke_pull_request call 1, turn 2, the only call with a configuration)\n"
        "schema errors:\n"
        "  /name: 'Billing' does not match '^[a-z]+$' (additional_schema)\n"
        "  /settings/regions/1: 'asia' is not one of ['eu', 'us'] (schema)\n"
        "  /settings/retries: '3' is not of type 'integer' (schema)\n"
        "PR 1 validation succeeded"
    )


def test_missing_required_key_is_reported_at_the_root() -> None:
    result = grade({}, submitted({"name": "billing"}, [1]))
    assert result["pass"] is False and result["namedScores"] == {"schema_valid": 0.0}
    assert "  /: 'settings' is a required property (schema)" in result["reason"]


def test_failed_pr_validation() -> None:
    result = grade({}, submitted(VALID, [1, 2]))
    assert result["pass"] is False
    assert result["namedScores"] == {"schema_valid": 1.0}  # the submission itself is valid
    assert result["reason"].endswith(
        "PR 1 validation succeeded\nPR 2 validation failed\n  /settings/retries: must be <= 10 (retries-limit)"
    )


def test_no_pr_created() -> None:
    result = grade({}, submitted(VALID, []))
    assert result["pass"] is False
    assert (
        "no pull request was created in the conversation (the record has no pull_request side effect)"
        in result["reason"]
    )
    assert grade({"check_pull_request": False}, submitted(VALID, []))["pass"] is True


def test_pr_not_in_the_snapshot() -> None:
    result = grade({}, submitted(VALID, [1, 9]))
    assert result["pass"] is False
    assert "PR 9 does not exist on the portal" in result["reason"]


@pytest.mark.parametrize("prs", [[1], [1, 2], [1, 9], []])
def test_a_version_2_row_is_graded_as_before(prs: list[int]) -> None:
    """Its snapshot's pull requests and schema are read from their version-3 places: same verdict, same reason."""
    row = submitted(VALID, prs)
    assert "portal_url" in version_2(row)["snapshot"]
    assert grade({}, version_2(row)) == grade({}, row)


def test_null_additional_schema() -> None:
    state = snapshot(schema=SCHEMA, additional_schema=None)
    config = {"name": "Billing", "settings": {}}  # only the additional schema forbids the capital
    assert grade({"check_pull_request": False}, submitted(config, [], state))["pass"] is True
    state = snapshot(schema=SCHEMA, additional_schema=ADDITIONAL)
    assert grade({"check_pull_request": False}, submitted(config, [], state))["pass"] is False


@pytest.mark.parametrize(
    ("resources", "reason"),
    [
        (
            {SCHEMA_RESOURCE: {"schema": {"type": "nonsense"}, "additional_schema": None}},
            "spoke_json_valid: the portal's schema is unusable: schema is not a valid JSON Schema",
        ),
        (
            {SCHEMA_RESOURCE: {"additional_schema": None}},
            "spoke_json_valid: the portal's schema is unusable: the snapshot has no portal schema "
            "(resource 'schema' with a 'schema' object)",
        ),
        (
            {},
            "spoke_json_valid: the portal's schema is unusable: the snapshot has no portal schema "
            "(resource 'schema' with a 'schema' object)",
        ),
    ],
    ids=["invalid schema", "no schema object", "no schema resource"],
)
def test_bad_or_missing_schema(resources: dict, reason: str) -> None:
    state = snapshot(pull_requests=[portal_pull_request(1)], resources=resources)
    result = grade({}, submitted(VALID, [1], state))
    assert result["pass"] is False
    assert result["reason"].startswith(reason)


def test_missing_snapshot() -> None:
    result = grade({}, submitted(VALID, [1], state=None))
    assert result == {
        "pass": False,
        "score": 0.0,
        "reason": "spoke_json_valid: the metadata has no end-state snapshot ('snapshot'): the provider takes one "
        "when the conversation ends; this row comes from another provider or an older kit",
    }


def test_grading_never_calls_the_portal(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PORTAL_URL", "http://127.0.0.1:9")  # nothing listens there
    assert grade({}, submitted(VALID, [1]))["pass"] is True


def test_no_submission() -> None:
    result = grade({}, metadata([call("get_spoke")]))
    assert result["reason"] == (
        "spoke_json_valid: create_spoke_pull_request was never called, so there is no submitted configuration "
        "(calls: get_spoke)"
    )


@pytest.mark.parametrize(
    ("config", "message"),
    [
        ({"check_pull_request": "yes"}, 'config.check_pull_request must be true or false, got str "yes"'),
        ({"argument": 3}, "config.argument must be an argument name, got int 3"),
        ({"schema": {}}, "unknown config key 'schema'; allowed keys: tool, argument, check_pull_request"),
    ],
)
def test_malformed_config(config: dict, message: str) -> None:
    assert grade(config, submitted(VALID, [1]))["reason"] == f"spoke_json_valid: invalid config: {message}"

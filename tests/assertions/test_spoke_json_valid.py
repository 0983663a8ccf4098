"""spoke_json_valid: schema errors with paths, additional schema, the PR's validation status."""

from __future__ import annotations

import pytest

from agent_evals.assertions.spoke_json_valid import grade
from agent_evals.portal_api import PortalAPI

from ._assertion_support import StubPortal, call, metadata

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


@pytest.fixture
def portal(portal_stub: StubPortal, portal_client: PortalAPI) -> PortalAPI:
    portal_stub.route(
        "GET",
        "/api/schema",
        200,
        {"schema": SCHEMA, "additional_schema": ADDITIONAL, "file_name_rules": None},
    )
    portal_stub.add_pull_request(1)
    portal_stub.add_pull_request(
        2,
        validation_status="failed",
        validation_errors=[
            {"path": "/settings/retries", "message": "must be <= 10", "rule": "retries-limit"}
        ],
    )
    return portal_client


def submitted(config: dict, prs: list[int]) -> dict:
    return metadata([call(C, {"spoke_name": "billing", "config": config}, turn=2)], pull_requests=prs)


def test_valid_config_and_succeeded_pr(portal: PortalAPI) -> None:
    result = grade({}, submitted(VALID, [1]), portal=portal)
    assert result == {
        "pass": True,
        "score": 1.0,
        "reason": "spoke_json_valid: valid against the portal's schema; PR 1 validation succeeded "
        "(submitted: create_spoke_pull_request call 1, turn 2, the only call with a configuration)",
        "namedScores": {"schema_errors": 0.0},
    }


def test_schema_errors_with_paths(portal: PortalAPI) -> None:
    config = {"name": "Billing", "settings": {"retries": "3", "regions": ["eu", "asia"]}}
    result = grade({}, submitted(config, [1]), portal=portal)
    assert result["pass"] is False
    assert result["namedScores"] == {"schema_errors": 3.0}
    assert result["reason"] == (
        "spoke_json_valid: 3 schema error(s) "
        "(submitted: create_spoke_pull_request call 1, turn 2, the only call with a configuration)\n"
        "schema errors:\n"
        "  /name: 'Billing' does not match '^[a-z]+$' (additional_schema)\n"
        "  /settings/regions/1: 'asia' is not one of ['eu', 'us'] (schema)\n"
        "  /settings/retries: '3' is not of type 'integer' (schema)\n"
        "PR 1 validation succeeded"
    )


def test_missing_required_key_is_reported_at_the_root(portal: PortalAPI) -> None:
    result = grade({}, submitted({"name": "billing"}, [1]), portal=portal)
    assert "  /: 'settings' is a required property (schema)" in result["reason"]


def test_failed_pr_validation(portal: PortalAPI) -> None:
    result = grade({}, submitted(VALID, [1, 2]), portal=portal)
    assert result["pass"] is False
    assert result["reason"].endswith(
        "PR 1 validation succeeded\nPR 2 validation failed\n  /settings/retries: must be <= 10 (retries-limit)"
    )


def test_no_pr_created(portal: PortalAPI) -> None:
    result = grade({}, submitted(VALID, []), portal=portal)
    assert result["pass"] is False
    assert (
        "no pull request was created in the conversation (metadata pull_requests is empty)"
        in result["reason"]
    )
    assert grade({"check_pull_request": False}, submitted(VALID, []), portal=portal)["pass"] is True


def test_unknown_pr(portal: PortalAPI) -> None:
    assert "PR 9 does not exist on the portal" in grade({}, submitted(VALID, [9]), portal=portal)["reason"]


def test_null_additional_schema(portal_stub: StubPortal, portal_client: PortalAPI) -> None:
    portal_stub.route(
        "GET", "/api/schema", 200, {"schema": SCHEMA, "additional_schema": None, "file_name_rules": None}
    )
    result = grade(
        {"check_pull_request": False},
        submitted({"name": "Billing", "settings": {}}, []),
        portal=portal_client,
    )
    assert result["pass"] is True


def test_bad_schema_and_unreachable_portal(portal_stub: StubPortal, portal_client: PortalAPI) -> None:
    portal_stub.route("GET", "/api/schema", 200, {"schema": {"type": "nonsense"}, "additional_schema": None})
    result = grade({}, submitted(VALID, [1]), portal=portal_client)
    assert result["pass"] is False
    assert result["reason"].startswith(
        "spoke_json_valid: the portal's schema is unusable: schema is not a valid JSON Schema"
    )
    portal_stub.route("GET", "/api/schema", 200, {"additional_schema": None})
    result = grade({}, submitted(VALID, [1]), portal=portal_client)
    assert (
        result["reason"]
        == "spoke_json_valid: the portal's schema is unusable: GET /api/schema has no 'schema' object"
    )
    down = PortalAPI("http://127.0.0.1:9", timeout=1)
    result = grade({}, submitted(VALID, [1]), portal=down)
    assert result["reason"].startswith(
        "spoke_json_valid: could not check through the portal: the portal at http://127.0.0.1:9 is not reachable"
    )


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

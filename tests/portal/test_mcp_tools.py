"""Every MCP tool through a real MCP client over HTTP against a real portal process."""

from __future__ import annotations

from typing import Any

import pytest

from .helpers import Mcp, new_spoke

TOOLS = {
    "list_spokes",
    "get_spoke",
    "get_spoke_schema",
    "validate_spoke_config",
    "create_spoke_pull_request",
    "get_pull_request",
    "list_pull_requests",
    "complete_pull_request",
    "search_docs",
    "get_doc",
}
ESCAPES = [
    "../etc/passwd",
    "/etc/passwd",
    "spokes/crm-dev-neu",
    "..",
    "crm\x00dev",
    "crm-dév",
    "Crm-Dev",
    "x" * 100,
    "crm-dev-neu.json",
    "%2e%2e%2f",
]


def test_tools_are_listed_with_descriptions(mcp: Mcp) -> None:
    tools = {tool.name: tool for tool in mcp.tools()}
    assert set(tools) == TOOLS
    for tool in tools.values():
        assert tool.description and len(tool.description) > 40, tool.name
        for name, schema in tool.input_schema.get("properties", {}).items():
            assert schema.get("description"), f"{tool.name}.{name} has no description"
    create = tools["create_spoke_pull_request"].input_schema
    assert set(create["properties"]) == {"spoke_name", "config", "title", "description", "source_spoke"}
    assert set(create["required"]) == {"spoke_name", "config", "title", "description"}


def test_complete_pull_request_is_marked_administrators_only(mcp: Mcp) -> None:
    (tool,) = [t for t in mcp.tools() if t.name == "complete_pull_request"]
    assert tool.description.startswith(
        "ADMINISTRATORS ONLY - agents and assistants must never call this tool."
    )
    assert tool.annotations is not None and tool.annotations.destructive_hint is True


def test_list_spokes(mcp: Mcp, seeds: dict[str, Any]) -> None:
    spokes = mcp.ok("list_spokes")["spokes"]
    assert [s["name"] for s in spokes] == sorted(seeds)
    first = spokes[0]
    assert first == {
        "name": "analytics-test-sdc",
        "file": "spokes/analytics-test-sdc.json",
        "environment": "test",
        "location": "swedencentral",
        "address_space": ["10.60.0.0/21"],
        "application": "analytics",
        "owner": "bi-team@contoso.com",
        "cost_center": "CC-5210",
        "private_link": True,
    }


@pytest.mark.parametrize(
    ("arguments", "expected"),
    [
        (
            {"environment": "prod"},
            [
                "crm-prod-neu",
                "datalake-prod-sdc",
                "hr-portal-prod-weu",
                "iot-ingest-prod-neu",
                "payments-prod-weu",
            ],
        ),
        ({"environment": "test", "location": "West Europe"}, ["hr-portal-test-weu", "payments-test-weu"]),
        ({"location": "swedencentral"}, ["analytics-test-sdc", "datalake-dev-sdc", "datalake-prod-sdc"]),
        ({"location": "germanywestcentral"}, []),
    ],
)
def test_list_spokes_filters(mcp: Mcp, arguments: dict[str, str], expected: list[str]) -> None:
    assert [s["name"] for s in mcp.ok("list_spokes", arguments)["spokes"]] == expected


def test_list_spokes_bad_filters(mcp: Mcp) -> None:
    assert "unknown location 'eastus'; allowed: westeurope, northeurope" in mcp.error(
        "list_spokes", {"location": "eastus"}
    )
    assert "environment" in mcp.error("list_spokes", {"environment": "staging"})


def test_get_spoke(mcp: Mcp, seeds: dict[str, Any]) -> None:
    result = mcp.call("get_spoke", {"name": "crm-dev-neu"})
    assert result.structured_content == {
        "name": "crm-dev-neu",
        "file": "spokes/crm-dev-neu.json",
        "config": seeds["crm-dev-neu"],
    }


def test_get_unknown_spoke_names_it(mcp: Mcp) -> None:
    assert mcp.error("get_spoke", {"name": "crm-prod-weu"}) == (
        "Error executing tool get_spoke: unknown spoke 'crm-prod-weu': there is no spokes/crm-prod-weu.json "
        "on main (list_spokes shows the existing ones)"
    )


@pytest.mark.parametrize("name", ESCAPES)
def test_names_that_escape_the_repository_are_rejected(mcp: Mcp, name: str) -> None:
    assert "invalid spoke name" in mcp.error("get_spoke", {"name": name})
    assert "invalid spoke name" in mcp.error("validate_spoke_config", {"config": {}, "spoke_name": name})
    assert "invalid spoke name" in mcp.error(
        "create_spoke_pull_request",
        {"spoke_name": name, "config": new_spoke(), "title": "t", "description": "d"},
    )


@pytest.mark.parametrize(
    ("field", "value", "expected"),
    [
        ("title", "Add\x00billing", "the title contains a NUL byte ('\\x00') at character 4; write it as plain text "
                                   "on one line"),
        ("title", "Add\nbilling", "the title contains a line break ('\\n') at character 4; write it as plain text "
                                  "on one line"),
        ("description", "Copy\x00of", "the description contains a NUL byte ('\\x00') at character 5; write it as "
                                      "plain text"),
        ("description", "bell\x07", "the description contains a control character ('\\x07') at character 5; write "
                                    "it as plain text"),
    ],
)
def test_a_control_character_in_a_title_or_description_says_what_was_wrong(
    mcp: Mcp, field: str, value: str, expected: str
) -> None:
    arguments = {"spoke_name": "billing-dev-weu", "config": new_spoke(), "title": "t", "description": "d\nmore"}
    arguments[field] = value
    assert mcp.error("create_spoke_pull_request", arguments) == f"Error executing tool create_spoke_pull_request: {expected}"


def test_get_spoke_schema_without_settings(mcp: Mcp) -> None:
    info = mcp.ok("get_spoke_schema")
    assert info["schema"]["title"] == "Spoke network configuration"
    assert info["additional_schema"] is None and info["file_name_rules"] is None


def test_validate_valid_config(mcp: Mcp, seeds: dict[str, Any]) -> None:
    assert mcp.ok("validate_spoke_config", {"config": new_spoke()}) == {"valid": True, "errors": []}
    assert mcp.ok("validate_spoke_config", {"config": seeds["crm-dev-neu"], "spoke_name": "crm-dev-neu"})[
        "valid"
    ]


def test_validate_invalid_config_reports_json_paths(mcp: Mcp) -> None:
    config = new_spoke(environment="prod", location="eastus")
    config["subnets"][1]["addressPrefix"] = "10.80.0.0/26"
    del config["tags"]["owner"]
    result = mcp.ok("validate_spoke_config", {"config": config})
    assert result["valid"] is False
    assert result["errors"] == [
        {
            "path": "/tags/owner",
            "rule": "schema",
            "message": "missing required property 'owner' (E-mail address of the team or person "
            "accountable for the spoke)",
        },
        {
            "path": "/location",
            "rule": "allowed-location",
            "message": "location 'eastus' is not an allowed region; allowed: westeurope, northeurope, "
            "swedencentral, germanywestcentral",
        },
        {
            "path": "/subnets/1/addressPrefix",
            "rule": "subnet-overlap",
            "message": "subnet 'snet-data' (10.80.0.0/26) overlaps subnet 'snet-app' "
            "(10.80.0.0/24, subnets/0)",
        },
        {
            "path": "/privateLink/enabled",
            "rule": "prod-private-link",
            "message": "prod spokes must enable private link (privateLink.enabled: true)",
        },
    ]


def test_validate_rejects_a_non_object_config(mcp: Mcp) -> None:
    assert "config" in mcp.error("validate_spoke_config", {"config": ["not", "an", "object"]})


def test_search_docs_and_get_doc(mcp: Mcp) -> None:
    found = mcp.ok("search_docs", {"query": "private link prod", "limit": 2})
    assert found["query"] == "private link prod"
    assert [r["id"] for r in found["results"]] == ["private-link-and-nsg", "validation-gate"]
    assert set(found["results"][0]) == {"id", "title", "snippet", "score"}
    page = mcp.ok("get_doc", {"doc_id": "private-link-and-nsg"})
    assert page["title"] == "Private link and network security rules"
    assert "prod spokes must enable private link" in page["content"]


def test_doc_errors(mcp: Mcp) -> None:
    assert "unknown document 'faq'; available:" in mcp.error("get_doc", {"doc_id": "faq"})
    assert "no searchable words" in mcp.error("search_docs", {"query": "   "})
    assert "limit" in mcp.error("search_docs", {"query": "spoke", "limit": 500})


def test_unknown_pull_request(mcp: Mcp) -> None:
    assert (
        mcp.error("get_pull_request", {"id": 999})
        == "Error executing tool get_pull_request: unknown pull request 999"
    )
    assert "unknown pull request 999" in mcp.error("complete_pull_request", {"id": 999})
    assert "greater than or equal to 1" in mcp.error("get_pull_request", {"id": 0})

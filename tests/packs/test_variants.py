"""The spoke pack's case derivations: a copy's expected changes, rows that make no valid case, and
every generated case of spoke-create-variants checked with the portal's own validator."""

from __future__ import annotations

import json
from typing import Any

import pytest
import yaml

from agent_evals.packs.spoke.golden import apply_changes, seed_spoke
from agent_evals.packs.spoke.variants import derive_copy, derive_overlapping_copy, seed_configs
from agent_evals.packs.spoke.portal.rules import Hub
from agent_evals.packs.spoke.portal.snapshot import parse_hub
from agent_evals.packs.spoke.portal.settings import PortalSettings
from agent_evals.packs.spoke.portal.validation import SpokeValidator
from agent_evals.suites.files import load_suite
from agent_evals.suites.discovery import select

ROW = {"source": "crm-dev-neu", "name": "crm-dev-weu", "region": "West Europe", "range": "10.20.32.0/22"}


def _case_config(suite: str, case_id: str, check: str) -> dict[str, Any]:
    test = next(t for t in load_suite(select(suite)[0]).tests if t.case_id == case_id)
    return next(dict(a["config"]) for a in test.asserts if str(a.get("value", "")).endswith(f"/{check}.py"))


def test_a_copy_expects_the_changes_a_hand_written_case_states() -> None:
    derived = derive_copy(ROW)
    assert derived["expected_changes"] == _case_config("spoke-create", "C01", "input_diff")["expected_changes"]
    assert (derived["location"], derived["region_code"], derived["environment"]) == ("westeurope", "weu", "dev")
    assert derived["subnets"] == "snet-app 10.20.32.0/24, snet-data 10.20.33.0/26"
    assert derived["tag_clause"] == "" and derived["tag_facts"] == {}


def test_tags_and_an_environment_change() -> None:
    row = {**ROW, "name": "crm-test-weu", "environment": "test", "tags": "owner=qa@contoso.com; costCenter=CC-2310"}
    derived = derive_copy(row)
    assert {k: v for k, v in derived["expected_changes"].items() if not k.startswith(("/subnets", "/addressSpace"))} == {
        "/name": "crm-test-weu", "/environment": "test", "/location": "westeurope",
        "/tags/costCenter": "CC-2310", "/tags/owner": "qa@contoso.com",
    }
    assert derived["tag_clause"] == ", with owner e-mail qa@contoso.com, cost centre CC-2310"


@pytest.mark.parametrize(
    ("change", "problem"),
    [
        ({"range": "10.20.33.0/22"}, "address range '10.20.33.0/22' is not a network: its host bits are set (the network "
                                     "is 10.20.32.0/22)"),
        ({"range": "10.20.32/22x"}, "address range '10.20.32/22x' is not an IPv4 range in CIDR form (like 10.20.32.0/22)"),
        ({"range": "11.0.0.0/22"}, "address range '11.0.0.0/22' is not a private range"),
        ({"range": "10.20.32.0/24"}, "range 10.20.32.0/24 is too small for crm-dev-neu's subnets: snet-data would be "
                                     "10.20.33.0/26, outside it"),
        ({"range": "10.20.24.0/22"}, "range 10.20.24.0/22 overlaps spoke crm-dev-neu (10.20.24.0/22): the portal would "
                                     "block this copy"),
        ({"range": "10.0.8.0/22"}, "range 10.0.8.0/22 overlaps the hub hub-weu (10.0.0.0/16)"),
        ({"source": "crm-dev-nue"}, "source spoke 'crm-dev-nue' is not in the seed data; did you mean crm-dev-neu?"),
        ({"region": "mars"}, "region 'mars' is not a region of the landing zone; allowed: westeurope (weu)"),
        ({"name": "crm-dev-neu"}, "name 'crm-dev-neu' is already a spoke on main"),
        ({"name": "crm-weu"}, "name 'crm-weu' does not end with -dev-weu"),
        ({"name": "crm-prod-weu", "environment": "prod"}, "a prod copy of crm-dev-neu needs private link"),
        ({"tags": "costCenter=2310"}, "tag costCenter '2310' is not CC- and four digits: the schema rejects it"),
        ({"tags": "owner"}, "tags: 'owner' is not key=value"),
        ({"range": ""}, "column 'range' is empty; a spoke copy needs it"),
    ],
)
def test_a_row_that_makes_no_valid_copy_says_why_in_one_line(change: dict[str, str], problem: str) -> None:
    with pytest.raises(ValueError) as caught:
        derive_copy({**ROW, **change})
    assert str(caught.value).startswith(problem) and "\n" not in str(caught.value)


def test_an_overlapping_copy_must_overlap() -> None:
    derived = derive_overlapping_copy({**ROW, "range": "10.20.24.0/22"})
    assert (derived["overlaps"], derived["overlaps_range"]) == ("crm-dev-neu", "10.20.24.0/22")
    with pytest.raises(ValueError, match="overlaps no spoke and not the hub: the portal would accept this copy"):
        derive_overlapping_copy(ROW)


def _validator() -> tuple[SpokeValidator, Hub]:
    from importlib import resources

    hub = json.loads(resources.files("agent_evals.packs.spoke.portal").joinpath("seed", "hub.json").read_text())
    return SpokeValidator(PortalSettings()), parse_hub(hub)


def _generated() -> list[dict[str, Any]]:
    suite = select("spoke-create-variants")[0]
    return yaml.safe_load((suite.folder / "cases" / "generated.yaml").read_text())


@pytest.mark.parametrize("case", _generated(), ids=lambda c: c["metadata"]["id"])
def test_the_portal_accepts_each_valid_copy_and_blocks_each_overlapping_one(case: dict[str, Any]) -> None:
    """The derivations follow the portal's business rules: its own validator agrees with every case."""
    validator, hub = _validator()
    plan = yaml.safe_load((select("spoke-create-variants")[0].folder / "golden" / "plan.generated.yaml").read_text())
    if case["metadata"]["group"] == "copy":
        diff = next(a["config"] for a in case["assert"] if a["value"].endswith("/input_diff.py"))
        config = apply_changes(seed_spoke(diff["source"]), diff["expected_changes"])
        result = validator.validate(config, hub=hub, spokes=seed_configs())
        assert result.valid, result.errors
    else:
        call = next(s["call"]["validate_spoke_config"] for s in plan["cases"][case["metadata"]["id"]]["agent"]
                    if "call" in s and "validate_spoke_config" in s["call"])
        config = apply_changes(seed_spoke(call["config"]["$copy"]), call["config"]["changes"])
        result = validator.validate(config, hub=hub, spokes=seed_configs())
        rules = {e.rule for e in result.errors}
        assert not result.valid and rules <= {"address-space-overlap-spoke", "address-space-overlap-hub"}, rules

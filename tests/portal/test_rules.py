"""Business rules and schema through SpokeValidator: every rule passing and failing.

Each case mutates a valid new spoke (billing-dev-weu, 10.80.0.0/22) and lists the exact
(path, rule) pairs expected, so the failing cases sit beside the passing ones.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from agent_evals.packs.spoke.portal.models import RULE_IDS, ValidationResult
from agent_evals.packs.spoke.portal.rules import ALL_RULES, parse_port_range
from agent_evals.packs.spoke.portal.settings import PortalSettings
from agent_evals.packs.spoke.portal.validation import SpokeValidator

from .helpers import new_spoke, seed_hub, seed_spokes

Mutation = Callable[[dict[str, Any]], None]
SSH_FROM = {
    "name": "ssh-in",
    "priority": 300,
    "direction": "Inbound",
    "access": "Allow",
    "protocol": "Tcp",
    "sourceAddressPrefix": "Internet",
    "destinationAddressPrefix": "*",
    "destinationPortRange": "22",
}


def validate(config: object, spoke_name: str | None = None) -> ValidationResult:
    return SpokeValidator(PortalSettings()).validate(
        config, hub=seed_hub(), spokes=seed_spokes(), spoke_name=spoke_name
    )


def found(result: ValidationResult) -> set[tuple[str, str]]:
    return {(e.path, e.rule) for e in result.errors}


def setp(*path: Any, value: Any) -> Mutation:
    def mutate(config: dict[str, Any]) -> None:
        target = config
        for key in path[:-1]:
            target = target[key]
        target[path[-1]] = value

    return mutate


def add_rule(**changes: Any) -> Mutation:
    def mutate(config: dict[str, Any]) -> None:
        rule = {**SSH_FROM, **changes}
        for key in [k for k, v in changes.items() if v is None]:
            rule.pop(key)
        config["subnets"][0]["nsgRules"].append(rule)

    return mutate


EXPOSED = {("/subnets/0/nsgRules/3", "management-port-exposed")}
CASES: list[tuple[str, Mutation, set[tuple[str, str]]]] = [
    ("valid as is", lambda c: None, set()),
    (
        "overlaps the hub",
        setp("addressSpace", value=["10.80.0.0/22", "10.0.200.0/24"]),
        {("/addressSpace/1", "address-space-overlap-hub")},
    ),
    (
        "overlaps another spoke",
        setp("addressSpace", value=["10.80.0.0/22", "10.10.24.0/24"]),
        {("/addressSpace/1", "address-space-overlap-spoke")},
    ),
    (
        "overlaps itself",
        setp("addressSpace", value=["10.80.0.0/22", "10.80.2.0/24"]),
        {("/addressSpace/1", "address-space-self-overlap")},
    ),
    (
        "public range",
        setp("addressSpace", value=["10.80.0.0/22", "52.10.0.0/24"]),
        {("/addressSpace/1", "private-address-space")},
    ),
    (
        "host bits set",
        setp("subnets", 1, "addressPrefix", value="10.80.1.7/26"),
        {("/subnets/1/addressPrefix", "cidr")},
    ),
    (
        "bad octet",
        setp("subnets", 1, "addressPrefix", value="10.80.300.0/26"),
        {("/subnets/1/addressPrefix", "cidr")},
    ),
    ("prefix /33", setp("addressSpace", value=["10.80.0.0/33"]), {("/addressSpace/0", "cidr")}),
    (
        "subnet outside",
        setp("subnets", 1, "addressPrefix", value="10.81.0.0/26"),
        {("/subnets/1/addressPrefix", "subnet-in-address-space")},
    ),
    (
        "subnets overlap",
        setp("subnets", 1, "addressPrefix", value="10.80.0.128/26"),
        {("/subnets/1/addressPrefix", "subnet-overlap")},
    ),
    (
        "subnet name twice",
        setp("subnets", 1, "name", value="snet-app"),
        {("/subnets/1/name", "subnet-name-unique")},
    ),
    ("ssh from Internet", add_rule(), EXPOSED),
    ("ssh from *", add_rule(sourceAddressPrefix="*"), EXPOSED),
    ("ssh from 0.0.0.0/0", add_rule(sourceAddressPrefix="0.0.0.0/0"), EXPOSED),
    ("ssh from Any", add_rule(sourceAddressPrefix="Any"), EXPOSED),
    ("rdp from Internet", add_rule(destinationPortRange="3389"), EXPOSED),
    ("range 20-25 includes 22", add_rule(destinationPortRange="20-25"), EXPOSED),
    ("range 3380-3390 includes 3389", add_rule(destinationPortRange="3380-3390"), EXPOSED),
    ("any port", add_rule(destinationPortRange="*"), EXPOSED),
    ("any protocol", add_rule(protocol="*"), EXPOSED),
    ("22 in a port list", add_rule(destinationPortRange=None, destinationPortRanges=["443", "22"]), EXPOSED),
    ("ssh from the bastion is fine", add_rule(sourceAddressPrefix="10.0.2.0/26"), set()),
    ("https from Internet is fine", add_rule(destinationPortRange="443"), set()),
    ("range 23-3388 misses both", add_rule(destinationPortRange="23-3388"), set()),
    ("deny ssh from Internet is fine", add_rule(access="Deny"), set()),
    ("outbound ssh is fine", add_rule(direction="Outbound"), set()),
    ("icmp is fine", add_rule(protocol="Icmp", destinationPortRange="*"), set()),
    (
        "priority used twice",
        setp("subnets", 0, "nsgRules", 1, "priority", value=100),
        {("/subnets/0/nsgRules/1/priority", "nsg-priority-unique")},
    ),
    (
        "same priority, other direction",
        add_rule(priority=100, direction="Outbound", sourceAddressPrefix="*", destinationPortRange="443"),
        set(),
    ),
    (
        "port above 65535",
        setp("subnets", 0, "nsgRules", 1, "destinationPortRange", value="70000"),
        {("/subnets/0/nsgRules/1/destinationPortRange", "nsg-port-range")},
    ),
    (
        "range backwards",
        setp("subnets", 0, "nsgRules", 1, "destinationPortRange", value="25-20"),
        {("/subnets/0/nsgRules/1/destinationPortRange", "nsg-port-range")},
    ),
    (
        "both port fields",
        setp("subnets", 0, "nsgRules", 1, "destinationPortRanges", value=["22"]),
        {("/subnets/0/nsgRules/1", "nsg-port-range")},
    ),
    (
        "no port field",
        lambda c: c["subnets"][0]["nsgRules"][1].pop("destinationPortRange"),
        {("/subnets/0/nsgRules/1", "nsg-port-range")},
    ),
    (
        "prod without private link",
        setp("environment", value="prod"),
        {("/privateLink/enabled", "prod-private-link")},
    ),
    (
        "prod with private link",
        lambda c: c.update(
            environment="prod",
            privateLink={"enabled": True, "privateDnsZones": ["privatelink.vaultcore.azure.net"]},
        ),
        set(),
    ),
    (
        "private link without zones",
        setp("privateLink", value={"enabled": True, "privateDnsZones": []}),
        {("/privateLink/privateDnsZones", "private-dns-zones")},
    ),
    ("region not allowed", setp("location", value="eastus"), {("/location", "allowed-location")}),
    ("name taken", setp("name", value="payments-prod-weu"), {("/name", "unique-name")}),
    ("unknown hub", setp("hubPeering", "hubName", value="hub-neu"), {("/hubPeering/hubName", "hub-name")}),
    (
        "gateway transit",
        setp("hubPeering", "allowGatewayTransit", value=True),
        {("/hubPeering/allowGatewayTransit", "peering-gateway-transit")},
    ),
    ("missing owner", lambda c: c["tags"].pop("owner"), {("/tags/owner", "schema")}),
    ("unknown field", setp("firewall", value=True), {("/firewall", "schema")}),
    ("unknown environment", setp("environment", value="staging"), {("/environment", "schema")}),
    ("bad cost centre", setp("tags", "costCenter", value="4100"), {("/tags/costCenter", "schema")}),
]


@pytest.mark.parametrize(("mutation", "expected"), [(m, e) for _, m, e in CASES], ids=[c[0] for c in CASES])
def test_rule_table(mutation: Mutation, expected: set[tuple[str, str]]) -> None:
    config = new_spoke()
    mutation(config)
    result = validate(config)
    assert found(result) == expected, [e.model_dump() for e in result.errors]
    assert result.valid is (not expected)


def test_every_rule_has_a_failing_case() -> None:
    covered = {rule for _, _, expected in CASES for _, rule in expected}
    covered |= {"name-matches-file", "file-name-rule", "additional-schema"}  # tested below / in test_settings
    assert covered == set(RULE_IDS)
    assert len(ALL_RULES) == len(RULE_IDS) - 3  # schema, additional-schema and file-name-rule are not rules


def test_changing_a_spoke_does_not_overlap_itself(seeds: dict[str, dict[str, Any]]) -> None:
    config = seeds["payments-dev-weu"]
    assert validate(config, spoke_name="payments-dev-weu").valid
    # The same configuration as a *new* spoke clashes with the one on main.
    assert found(validate(config)) == {
        ("/name", "unique-name"),
        ("/addressSpace/0", "address-space-overlap-spoke"),
    }


def test_name_must_match_the_file() -> None:
    result = validate(new_spoke(), spoke_name="billing-dev-neu")
    assert found(result) == {("/name", "name-matches-file")}
    assert "spokes/billing-dev-neu.json" in result.errors[0].message


def test_messages_explain_what_to_do() -> None:
    config = new_spoke()
    add_rule(destinationPortRange="20-25")(config)
    config["addressSpace"].append("10.10.24.0/24")
    config["subnets"][1]["addressPrefix"] = "10.80.1.7/26"
    messages = {e.rule: e.message for e in validate(config).errors}
    assert messages["management-port-exposed"] == (
        "inbound rule 'ssh-in' allows port 22 (SSH) from 'Internet'; management ports must never be open to "
        "the Internet. Use Azure Bastion in the hub as the source instead"
    )
    assert messages["address-space-overlap-spoke"] == (
        "10.10.24.0/24 overlaps spoke 'payments-dev-weu' (10.10.24.0/22) on main; choose a free range"
    )
    assert messages["cidr"] == "'10.80.1.7/26' has host bits set; did you mean 10.80.1.0/26?"


def test_schema_message_names_the_field_meaning() -> None:
    config = new_spoke()
    config["tags"].pop("costCenter")
    (error,) = validate(config).errors
    assert error.message == (
        "missing required property 'costCenter' (Cost centre charged for the spoke's resources, e.g. CC-4100)"
    )


@pytest.mark.parametrize("config", [None, [], "spoke", 42], ids=["null", "list", "string", "number"])
def test_non_object_config_is_a_schema_error(config: object) -> None:
    result = validate(config)
    assert not result.valid
    assert [(e.path, e.rule) for e in result.errors] == [("", "schema")]


def test_garbage_inside_does_not_crash_the_rules() -> None:
    config = new_spoke()
    config["subnets"] = [None, {"addressPrefix": 5, "nsgRules": "x"}, {"nsgRules": [None, {"priority": "x"}]}]
    config["addressSpace"] = "10.80.0.0/22"
    config["privateLink"] = []
    result = validate(config)
    assert not result.valid
    # The schema reports the shapes; the rules skip what they cannot read instead of crashing.
    assert {e.rule for e in result.errors} == {"schema", "nsg-port-range"}


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("*", (0, 65535)),
        ("22", (22, 22)),
        ("20-25", (20, 25)),
        (" 443 ", (443, 443)),
        ("65535", (65535, 65535)),
        ("65536", None),
        ("25-20", None),
        ("", None),
        ("ssh", None),
        (22, None),
    ],
)
def test_parse_port_range(value: object, expected: tuple[int, int] | None) -> None:
    assert parse_port_range(value) == expected

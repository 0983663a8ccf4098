"""Network security group rules: valid port ranges, unique priorities, no exposed management ports."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from agent_evals.packs.spoke.portal.models import Issue
from agent_evals.packs.spoke.portal.rules._common import Config, RuleContext, as_list, issue, nsg_rules

MANAGEMENT_PORTS: dict[int, str] = {22: "SSH", 3389: "RDP"}
INTERNET_SOURCES: frozenset[str] = frozenset({"internet", "*", "any", "0.0.0.0/0", "0.0.0.0"})
_PORT_RANGE = re.compile(r"^(\*|(\d{1,5})(?:-(\d{1,5}))?)$")
_MAX_PORT = 65535


def parse_port_range(value: object) -> tuple[int, int] | None:
    """``"*"`` -> (0, 65535), ``"22"`` -> (22, 22), ``"20-25"`` -> (20, 25); ``None`` if invalid."""
    if not isinstance(value, str):
        return None
    match = _PORT_RANGE.fullmatch(value.strip())
    if match is None:
        return None
    if match.group(1) == "*":
        return 0, _MAX_PORT
    low = int(match.group(2))
    high = int(match.group(3)) if match.group(3) else low
    if low > high or high > _MAX_PORT:
        return None
    return low, high


def _port_fields(rule: Mapping[str, Any]) -> list[tuple[list[str | int], object]]:
    fields: list[tuple[list[str | int], object]] = []
    if "destinationPortRange" in rule:
        fields.append((["destinationPortRange"], rule["destinationPortRange"]))
    for k, value in enumerate(as_list(rule.get("destinationPortRanges"))):
        fields.append((["destinationPortRanges", k], value))
    return fields


def check_port_ranges(config: Config, ctx: RuleContext) -> list[Issue]:
    """Exactly one of destinationPortRange / destinationPortRanges, with ports 0-65535, low <= high."""
    issues = []
    for s, r, rule in nsg_rules(config):
        base: list[str | int] = ["subnets", s, "nsgRules", r]
        has_single, has_list = "destinationPortRange" in rule, "destinationPortRanges" in rule
        if has_single == has_list:
            which = "both" if has_single else "neither"
            issues.append(
                issue(
                    base,
                    f"security rule sets {which} of destinationPortRange and "
                    "destinationPortRanges; set exactly one",
                    "nsg-port-range",
                )
            )
        for parts, value in _port_fields(rule):
            if isinstance(value, str) and _PORT_RANGE.fullmatch(value) and parse_port_range(value) is None:
                issues.append(
                    issue(
                        base + parts,
                        f"{value!r} is not a valid port range (0-65535, low-high)",
                        "nsg-port-range",
                    )
                )
    return issues


def check_priorities(config: Config, ctx: RuleContext) -> list[Issue]:
    """Security rule priorities are unique per direction within a subnet's NSG."""
    issues = []
    seen: dict[tuple[int, object, object], tuple[int, object]] = {}
    for s, r, rule in nsg_rules(config):
        key = (s, rule.get("direction"), rule.get("priority"))
        if not isinstance(key[2], int):
            continue
        if key in seen:
            first, name = seen[key]
            issues.append(
                issue(
                    ["subnets", s, "nsgRules", r, "priority"],
                    f"priority {key[2]} is already used by {key[1]} rule {name!r} "
                    f"(nsgRules/{first}) of this subnet",
                    "nsg-priority-unique",
                )
            )
        else:
            seen[key] = (r, rule.get("name"))
    return issues


def _exposed_ports(rule: Mapping[str, Any]) -> list[int]:
    ranges = [parse_port_range(value) for _, value in _port_fields(rule)]
    return [port for port in MANAGEMENT_PORTS if any(rng and rng[0] <= port <= rng[1] for rng in ranges)]


def _from_internet(rule: Mapping[str, Any]) -> bool:
    source = rule.get("sourceAddressPrefix")
    return isinstance(source, str) and source.strip().lower() in INTERNET_SOURCES


def _is_inbound_allow(rule: Mapping[str, Any]) -> bool:
    return (
        str(rule.get("direction", "")).lower() == "inbound"
        and str(rule.get("access", "")).lower() == "allow"
        and str(rule.get("protocol", "")).lower() != "icmp"
    )


def check_management_ports(config: Config, ctx: RuleContext) -> list[Issue]:
    """No inbound Allow rule opens SSH (22) or RDP (3389) to the Internet, *, Any or 0.0.0.0/0."""
    issues = []
    for s, r, rule in nsg_rules(config):
        if not (_is_inbound_allow(rule) and _from_internet(rule)):
            continue
        for port in _exposed_ports(rule):
            issues.append(
                issue(
                    ["subnets", s, "nsgRules", r],
                    f"inbound rule {rule.get('name')!r} allows port {port} ({MANAGEMENT_PORTS[port]}) from "
                    f"{rule.get('sourceAddressPrefix')!r}; management ports must never be open to the "
                    "Internet. Use Azure Bastion in the hub as the source instead",
                    "management-port-exposed",
                )
            )
    return issues

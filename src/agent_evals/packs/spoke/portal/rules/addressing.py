"""Address planning rules: well-formed private ranges that overlap nothing they shouldn't."""

from __future__ import annotations

import ipaddress
from collections.abc import Mapping

from agent_evals.packs.spoke.portal.models import Issue
from agent_evals.packs.spoke.portal.rules._common import (
    Config,
    RuleContext,
    address_space,
    as_list,
    cidr_or_none,
    issue,
    looks_like_cidr,
    subnets,
)

PRIVATE_RANGES: tuple[ipaddress.IPv4Network, ...] = tuple(
    ipaddress.IPv4Network(c) for c in ("10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16")
)


def _cidr_fields(config: Config) -> list[tuple[list[str | int], object]]:
    fields: list[tuple[list[str | int], object]] = [
        (["addressSpace", i], value) for i, value in enumerate(as_list(config.get("addressSpace")))
    ]
    fields += [(["subnets", i, "addressPrefix"], s.get("addressPrefix")) for i, s in subnets(config)]
    return fields


def check_cidrs(config: Config, ctx: RuleContext) -> list[Issue]:
    """CIDRs that have the right shape but are not valid networks (bad octet, /33, host bits)."""
    issues = []
    for parts, value in _cidr_fields(config):
        if not looks_like_cidr(value):
            continue  # wrong shape: the schema reports it
        network = cidr_or_none(value)
        if network is None:
            issues.append(issue(parts, f"{value!r} is not a valid IPv4 CIDR range", "cidr"))
        elif str(network) != value:
            issues.append(issue(parts, f"{value!r} has host bits set; did you mean {network}?", "cidr"))
    return issues


def check_private(config: Config, ctx: RuleContext) -> list[Issue]:
    """The address space uses private (RFC 1918) ranges only."""
    return [
        issue(
            ["addressSpace", i],
            f"{net} is not a private range; use 10.0.0.0/8 (see the address plan)",
            "private-address-space",
        )
        for i, net in address_space(config)
        if not any(net.subnet_of(private) for private in PRIVATE_RANGES)
    ]


def check_self_overlap(config: Config, ctx: RuleContext) -> list[Issue]:
    """Address space entries don't overlap each other."""
    entries = list(address_space(config))
    return [
        issue(
            ["addressSpace", j],
            f"{b} overlaps {a} (addressSpace/{i}) of the same spoke",
            "address-space-self-overlap",
        )
        for n, (i, a) in enumerate(entries)
        for j, b in entries[n + 1 :]
        if a.overlaps(b)
    ]


def check_hub_overlap(config: Config, ctx: RuleContext) -> list[Issue]:
    """The address space doesn't overlap the hub network."""
    hub_nets = [n for n in (cidr_or_none(c) for c in ctx.hub.address_space) if n is not None]
    return [
        issue(
            ["addressSpace", i],
            f"{net} overlaps the hub '{ctx.hub.name}' ({hub}); the hub range is reserved",
            "address-space-overlap-hub",
        )
        for i, net in address_space(config)
        for hub in hub_nets
        if net.overlaps(hub)
    ]


def check_spoke_overlap(config: Config, ctx: RuleContext) -> list[Issue]:
    """The address space doesn't overlap any other spoke on main."""
    issues = []
    for i, net in address_space(config):
        for stem in sorted(ctx.others):
            for _, other in address_space(ctx.others[stem]):
                if net.overlaps(other):
                    issues.append(
                        issue(
                            ["addressSpace", i],
                            f"{net} overlaps spoke '{stem}' ({other}) on main; choose a free range",
                            "address-space-overlap-spoke",
                        )
                    )
    return issues


def check_subnets_inside(config: Config, ctx: RuleContext) -> list[Issue]:
    """Every subnet lies inside one address space entry."""
    space = [net for _, net in address_space(config)]
    if not space:
        return []  # no usable address space: reported elsewhere
    shown = ", ".join(str(n) for n in space)
    issues = []
    for i, subnet in subnets(config):
        net = cidr_or_none(subnet.get("addressPrefix"))
        if net is not None and not any(net.subnet_of(s) for s in space):
            issues.append(
                issue(
                    ["subnets", i, "addressPrefix"],
                    f"subnet {_name(subnet)} ({net}) is outside the address space ({shown})",
                    "subnet-in-address-space",
                )
            )
    return issues


def check_subnet_overlap(config: Config, ctx: RuleContext) -> list[Issue]:
    """Subnets don't overlap each other (reported on the later subnet)."""
    parsed = [(i, s, cidr_or_none(s.get("addressPrefix"))) for i, s in subnets(config)]
    nets = [(i, s, n) for i, s, n in parsed if n is not None]
    return [
        issue(
            ["subnets", j, "addressPrefix"],
            f"subnet {_name(b)} ({nb}) overlaps subnet {_name(a)} ({na}, subnets/{i})",
            "subnet-overlap",
        )
        for k, (i, a, na) in enumerate(nets)
        for j, b, nb in nets[k + 1 :]
        if na.overlaps(nb)
    ]


def check_subnet_names(config: Config, ctx: RuleContext) -> list[Issue]:
    """Subnet names are unique within the spoke."""
    seen: dict[str, int] = {}
    issues = []
    for i, subnet in subnets(config):
        name = subnet.get("name")
        if not isinstance(name, str):
            continue
        if name.lower() in seen:
            issues.append(
                issue(
                    ["subnets", i, "name"],
                    f"subnet name {name!r} is already used by subnets/{seen[name.lower()]}",
                    "subnet-name-unique",
                )
            )
        else:
            seen[name.lower()] = i
    return issues


def _name(subnet: Mapping[str, object]) -> str:
    name = subnet.get("name")
    return repr(name) if isinstance(name, str) else "(unnamed)"

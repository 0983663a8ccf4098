"""Shared pieces of the business rules: the context they run in and tolerant accessors.

Rules run even when the schema failed, so that one validation round reports every
problem. They therefore read the configuration through these accessors, which skip
parts of the wrong shape (the schema reports those) instead of raising.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from agent_evals.packs.spoke.portal.models import Issue, RuleId
from agent_evals.packs.spoke.portal.schema import pointer

Config = Mapping[str, Any]
_CIDR_SHAPE = re.compile(r"^(\d{1,3}\.){3}\d{1,3}/\d{1,2}$")


@dataclass(frozen=True)
class Hub:
    """The hub network every spoke peers with (from ``hub.json`` on main)."""

    name: str
    address_space: tuple[str, ...]
    bastion_prefix: str | None = None


@dataclass(frozen=True)
class RuleContext:
    """What the rules compare a configuration against.

    ``others`` maps the file stem of every spoke on main to its configuration, minus
    the spoke being changed (``target``). ``target`` is ``None`` for a new spoke.
    """

    hub: Hub
    others: Mapping[str, Config] = field(default_factory=dict)
    target: str | None = None


def issue(parts: list[str | int], message: str, rule: RuleId) -> Issue:
    return Issue(path=pointer(parts), message=message, rule=rule)


def cidr_or_none(value: object) -> ipaddress.IPv4Network | None:
    """The network of a well-formed CIDR string, else ``None`` (host bits tolerated)."""
    if not isinstance(value, str) or not _CIDR_SHAPE.fullmatch(value):
        return None
    try:
        return ipaddress.IPv4Network(value, strict=False)
    except ValueError:
        return None


def looks_like_cidr(value: object) -> bool:
    return isinstance(value, str) and _CIDR_SHAPE.fullmatch(value) is not None


def as_list(value: object) -> list[Any]:
    return value if isinstance(value, list) else []


def address_space(config: Config) -> Iterator[tuple[int, ipaddress.IPv4Network]]:
    """(index, network) of every parseable address space entry."""
    for index, value in enumerate(as_list(config.get("addressSpace"))):
        network = cidr_or_none(value)
        if network is not None:
            yield index, network


def subnets(config: Config) -> Iterator[tuple[int, Mapping[str, Any]]]:
    """(index, subnet) of every subnet that is an object."""
    for index, subnet in enumerate(as_list(config.get("subnets"))):
        if isinstance(subnet, Mapping):
            yield index, subnet


def nsg_rules(config: Config) -> Iterator[tuple[int, int, Mapping[str, Any]]]:
    """(subnet index, rule index, rule) of every NSG rule that is an object."""
    for s_index, subnet in subnets(config):
        for r_index, rule in enumerate(as_list(subnet.get("nsgRules"))):
            if isinstance(rule, Mapping):
                yield s_index, r_index, rule


def section(config: Config, key: str) -> Mapping[str, Any]:
    value = config.get(key)
    return value if isinstance(value, Mapping) else {}

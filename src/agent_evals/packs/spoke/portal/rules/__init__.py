"""Business rules of a spoke configuration: pure functions ``(config, ctx) -> list[Issue]``.

Each rule reports JSON-pointer paths and a rule id (see ``models.RuleId``), tolerates
configurations that failed the schema, and never does I/O: the caller passes the hub
and the other spokes on main in a ``RuleContext``.
"""

from __future__ import annotations

from collections.abc import Callable

from agent_evals.packs.spoke.portal.models import Issue
from agent_evals.packs.spoke.portal.rules._common import Config, Hub, RuleContext
from agent_evals.packs.spoke.portal.rules.addressing import (
    check_cidrs,
    check_hub_overlap,
    check_private,
    check_self_overlap,
    check_spoke_overlap,
    check_subnet_names,
    check_subnet_overlap,
    check_subnets_inside,
)
from agent_evals.packs.spoke.portal.rules.general import (
    ALLOWED_LOCATIONS,
    check_gateway_transit,
    check_hub_name,
    check_location,
    check_name_matches_file,
    check_private_dns_zones,
    check_prod_private_link,
    check_unique_name,
)
from agent_evals.packs.spoke.portal.rules.nsg import (
    INTERNET_SOURCES,
    MANAGEMENT_PORTS,
    check_management_ports,
    check_port_ranges,
    check_priorities,
    parse_port_range,
)

Rule = Callable[[Config, RuleContext], list[Issue]]

ALL_RULES: tuple[Rule, ...] = (
    check_name_matches_file,
    check_unique_name,
    check_location,
    check_cidrs,
    check_private,
    check_self_overlap,
    check_hub_overlap,
    check_spoke_overlap,
    check_subnets_inside,
    check_subnet_overlap,
    check_subnet_names,
    check_port_ranges,
    check_priorities,
    check_management_ports,
    check_prod_private_link,
    check_private_dns_zones,
    check_hub_name,
    check_gateway_transit,
)


def check_rules(config: Config, ctx: RuleContext) -> list[Issue]:
    """Every business-rule issue of ``config``, in rule order."""
    return [found for rule in ALL_RULES for found in rule(config, ctx)]


__all__ = [
    "ALLOWED_LOCATIONS",
    "ALL_RULES",
    "INTERNET_SOURCES",
    "MANAGEMENT_PORTS",
    "Hub",
    "Rule",
    "RuleContext",
    "check_rules",
    "parse_port_range",
]

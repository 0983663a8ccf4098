"""Naming, placement, private link and peering rules."""

from __future__ import annotations

from agent_evals.packs.spoke.portal.models import Issue
from agent_evals.packs.spoke.portal.rules._common import Config, RuleContext, as_list, issue, section

ALLOWED_LOCATIONS: tuple[str, ...] = ("westeurope", "northeurope", "swedencentral", "germanywestcentral")


def check_name_matches_file(config: Config, ctx: RuleContext) -> list[Issue]:
    """When changing spokes/<target>.json, the configuration's name is <target>."""
    name = config.get("name")
    if ctx.target is None or not isinstance(name, str) or name == ctx.target:
        return []
    return [
        issue(
            ["name"],
            f"name {name!r} must equal the spoke file name {ctx.target!r} (spokes/{ctx.target}.json)",
            "name-matches-file",
        )
    ]


def check_unique_name(config: Config, ctx: RuleContext) -> list[Issue]:
    """No other spoke on main has this name (as file or as configured name)."""
    name = config.get("name")
    if not isinstance(name, str):
        return []
    clashes = sorted(stem for stem, other in ctx.others.items() if stem == name or other.get("name") == name)
    if not clashes:
        return []
    hint = (
        f"; to change the existing spoke, pass spoke_name={name!r}"
        if ctx.target is None
        else "; choose another name"
    )
    return [
        issue(
            ["name"],
            f"a spoke named {name!r} already exists on main (spokes/{clashes[0]}.json){hint}",
            "unique-name",
        )
    ]


def check_location(config: Config, ctx: RuleContext) -> list[Issue]:
    """The location is one of the landing zone's regions."""
    location = config.get("location")
    if not isinstance(location, str) or location in ALLOWED_LOCATIONS:
        return []
    return [
        issue(
            ["location"],
            f"location {location!r} is not an allowed region; allowed: {', '.join(ALLOWED_LOCATIONS)}",
            "allowed-location",
        )
    ]


def check_prod_private_link(config: Config, ctx: RuleContext) -> list[Issue]:
    """prod spokes reach PaaS services through private endpoints only."""
    if config.get("environment") != "prod" or section(config, "privateLink").get("enabled") is True:
        return []
    return [
        issue(
            ["privateLink", "enabled"],
            "prod spokes must enable private link (privateLink.enabled: true)",
            "prod-private-link",
        )
    ]


def check_private_dns_zones(config: Config, ctx: RuleContext) -> list[Issue]:
    """Private link needs at least one private DNS zone to resolve the endpoints."""
    private_link = section(config, "privateLink")
    if private_link.get("enabled") is not True or as_list(private_link.get("privateDnsZones")):
        return []
    return [
        issue(
            ["privateLink", "privateDnsZones"],
            "private link is enabled but no private DNS zone is "
            "listed; add the zones of the services used, e.g. privatelink.blob.core.windows.net",
            "private-dns-zones",
        )
    ]


def check_hub_name(config: Config, ctx: RuleContext) -> list[Issue]:
    """The spoke peers with the landing zone's hub."""
    hub_name = section(config, "hubPeering").get("hubName")
    if not isinstance(hub_name, str) or hub_name == ctx.hub.name:
        return []
    return [
        issue(
            ["hubPeering", "hubName"],
            f"unknown hub {hub_name!r}; spokes peer with {ctx.hub.name!r}",
            "hub-name",
        )
    ]


def check_gateway_transit(config: Config, ctx: RuleContext) -> list[Issue]:
    """Spokes have no gateway to offer, so allowGatewayTransit stays false."""
    if section(config, "hubPeering").get("allowGatewayTransit") is not True:
        return []
    return [
        issue(
            ["hubPeering", "allowGatewayTransit"],
            "spokes have no gateway: set allowGatewayTransit to "
            "false (use useRemoteGateways to reach on-premises through the hub)",
            "peering-gateway-transit",
        )
    ]

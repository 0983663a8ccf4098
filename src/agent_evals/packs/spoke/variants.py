"""The spoke pack's case derivations: what a row of a case table means for spoke copies.

The generic case factory (:mod:`agent_evals.cases`) fills templates from a table's rows; a
template naming ``derive: spoke_copy`` (or ``spoke_copy_overlapping``) gets these values
computed from the row's ``source``, ``name``, ``region``, ``range``, and optional
``environment`` and ``tags`` (``key=value; key=value``):

``location``, ``region_name``, ``region_code``, ``environment``, ``range``
    where the copy goes (``region`` may be a location or a region code: ``westeurope``, ``weu``);
``expected_changes``
    the ``input_diff`` expectation: every leaf of the source that the copy changes
    (name, region, environment, tags, and each address inside the source's address space
    moved to the same offset inside the new range, subnets and NSG rules included);
``subnets``, ``tag_facts``, ``tag_text``, ``tag_clause``
    text for the simulated user's facts and the goal (``tag_clause``: ``, with owner x`` or nothing);
``overlaps``, ``overlaps_range`` (overlapping copies only)
    the spoke (or the hub) the new range overlaps.

A row that would make an invalid case raises ``ValueError`` with one line saying why: a range
that is not a network (host bits set, bad text, not private), a copy whose subnets do not fit
the range, an unknown source or region, a name taken or not following
``<application>-<environment>-<region code>``, tags the schema rejects, a prod copy without
private link, or — for a valid copy — a range that overlaps a spoke or the hub (such a case is
blocked; for an overlapping copy, one that overlaps nothing). The checks follow the portal's
business rules (``agent_evals.packs.spoke.portal.rules``); a test validates every generated copy with the
portal's own validator.
"""

from __future__ import annotations

import ipaddress
import json
import re
from collections.abc import Callable, Mapping
from functools import cache
from typing import Any
from importlib import resources

from agent_evals.packs.spoke.scripts import relocate
from agent_evals.authoring import did_you_mean, leaf_diff
from agent_evals.packs.spoke.golden import seed_spoke
from agent_evals.packs.spoke.seeds import seed_spoke_names

Row = Mapping[str, Any]
Derivation = Callable[[Row], dict[str, Any]]
Network = ipaddress.IPv4Network

REGIONS: Mapping[str, tuple[str, str]] = {  # location: (name, code)
    "westeurope": ("West Europe", "weu"),
    "northeurope": ("North Europe", "neu"),
    "swedencentral": ("Sweden Central", "sdc"),
    "germanywestcentral": ("Germany West Central", "gwc"),
}
ENVIRONMENTS = ("dev", "test", "prod")
PRIVATE = tuple(ipaddress.IPv4Network(c) for c in ("10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16"))
_TAG_RULES: Mapping[str, tuple[str, str]] = {  # tag: (pattern, what the schema wants)
    "costCenter": (r"^CC-[0-9]{4}$", "CC- and four digits"),
    "owner": (r"^[^@\s]+@[^@\s]+\.[a-z]{2,}$", "an e-mail address"),
    "dataClassification": (r"^(public|internal|confidential|restricted)$", "public, internal, confidential or restricted"),
}
_TAG_WORDS = {"costCenter": "cost centre", "owner": "owner e-mail", "application": "application",
              "dataClassification": "data classification", "businessUnit": "business unit"}
_NAME = re.compile(r"^[a-z0-9][a-z0-9-]{1,62}$")


# -- seed data ---------------------------------------------------------------------------------
@cache
def seed_configs() -> Mapping[str, Mapping[str, Any]]:
    """Every seed spoke's configuration, by name (the portal's main at start)."""
    return {name: seed_spoke(name) for name in sorted(seed_spoke_names())}


@cache
def hub_ranges() -> tuple[tuple[str, Network], ...]:
    hub = json.loads(resources.files("agent_evals.packs.spoke.portal").joinpath("seed", "hub.json").read_text(encoding="utf-8"))
    return tuple((f"the hub {hub['name']}", ipaddress.IPv4Network(c)) for c in hub["addressSpace"])


# -- addresses ------------------------------------------------------------------------------------
def network(text: str, what: str = "address range") -> Network:
    """``text`` as a private IPv4 network, or ValueError saying why it is not one."""
    try:
        parsed = ipaddress.ip_network(text.strip(), strict=False)
    except ValueError:
        raise ValueError(f"{what} {text!r} is not an IPv4 range in CIDR form (like 10.20.32.0/22)") from None
    if not isinstance(parsed, ipaddress.IPv4Network):
        raise ValueError(f"{what} {text!r} is not an IPv4 range")
    if str(parsed) != text.strip():
        raise ValueError(f"{what} {text!r} is not a network: its host bits are set (the network is {parsed})")
    if not any(parsed.subnet_of(p) for p in PRIVATE):
        raise ValueError(f"{what} {text!r} is not a private range (10.0.0.0/8, 172.16.0.0/12, 192.168.0.0/16)")
    return parsed


@cache
def _taken() -> tuple[tuple[str, Network], ...]:
    """The hub's ranges, then each seed spoke's, as networks."""
    spokes = tuple((f"spoke {name}", ipaddress.IPv4Network(c))
                   for name, config in seed_configs().items() for c in config["addressSpace"])
    return hub_ranges() + spokes


def overlapping(new: Network) -> list[tuple[str, Network]]:
    """The hub and the seed spokes whose address space overlaps ``new``."""
    return [(what, net) for what, net in _taken() if net.overlaps(new)]


# -- the derivations ------------------------------------------------------------------------------
def derive_copy(row: Row) -> dict[str, Any]:
    """A copy the portal accepts (see the module docstring)."""
    values = _copy(row)
    clash = overlapping(ipaddress.IPv4Network(values["range"]))
    if clash:
        what, net = clash[0]
        raise ValueError(f"range {values['range']} overlaps {what} ({net}): the portal would block this copy; "
                         "use a free range, or the overlapping-copy template")
    return values


def derive_overlapping_copy(row: Row) -> dict[str, Any]:
    """A copy whose range overlaps a spoke or the hub: the portal rejects it."""
    values = _copy(row)
    clash = overlapping(ipaddress.IPv4Network(values["range"]))
    if not clash:
        raise ValueError(f"range {values['range']} overlaps no spoke and not the hub: the portal would accept this "
                         "copy; use the valid-copy template, or a range in use")
    what, net = clash[0]
    return {**values, "overlaps": what.removeprefix("spoke "), "overlaps_range": str(net)}


DERIVATIONS: Mapping[str, Derivation] = {"spoke_copy": derive_copy, "spoke_copy_overlapping": derive_overlapping_copy}


def _copy(row: Row) -> dict[str, Any]:
    source_name = _required(row, "source")
    source = seed_configs().get(source_name)
    if source is None:
        raise ValueError(f"source spoke {source_name!r} is not in the seed data{did_you_mean(source_name, list(seed_configs()))}")
    location, (region_name, code) = _region(_required(row, "region"))
    environment = str(row.get("environment") or "").strip() or source["environment"]
    if environment not in ENVIRONMENTS:
        raise ValueError(f"environment {environment!r} is not one of {', '.join(ENVIRONMENTS)}")
    name = _name(_required(row, "name"), environment, code)
    space = network(_required(row, "range"))
    tags = _tags(str(row.get("tags") or ""))
    new = relocate(dict(source), name, str(space))
    _check_fit(new, space, source_name)
    new.update(location=location, environment=environment)
    new["tags"] = {**new["tags"], **tags}
    if environment == "prod" and not new["privateLink"].get("enabled"):
        raise ValueError(f"a prod copy of {source_name} needs private link, which {source_name} has not enabled: "
                         "the portal rejects prod spokes without it (prod-private-link)")
    return {
        "source": source_name, "name": name, "location": location, "region_name": region_name, "region_code": code,
        "environment": environment, "range": str(space), "expected_changes": _changes(source, new),
        "subnets": ", ".join(f"{s['name']} {s['addressPrefix']}" for s in new["subnets"]),
        "tag_facts": {_TAG_WORDS.get(k, k): v for k, v in tags.items()},
        "tag_text": (text := ", ".join(f"{_TAG_WORDS.get(k, k)} {v}" for k, v in tags.items())),
        "tag_clause": f", with {text}" if text else "",
    }


def _required(row: Row, column: str) -> str:
    value = str(row.get(column) or "").strip()
    if not value:
        raise ValueError(f"column {column!r} is empty; a spoke copy needs it")
    return value


def _region(text: str) -> tuple[str, tuple[str, str]]:
    word = text.strip().lower().replace(" ", "")
    for location, (name, code) in REGIONS.items():
        if word in (location, code):
            return location, (name, code)
    allowed = ", ".join(f"{loc} ({code})" for loc, (_, code) in REGIONS.items())
    raise ValueError(f"region {text!r} is not a region of the landing zone; allowed: {allowed}")


def _name(name: str, environment: str, code: str) -> str:
    if not _NAME.match(name):
        raise ValueError(f"name {name!r} is not a spoke name (lower-case letters, digits and hyphens)")
    if name in seed_configs():
        raise ValueError(f"name {name!r} is already a spoke on main: a copy needs a new name")
    if not name.endswith(f"-{environment}-{code}"):
        raise ValueError(f"name {name!r} does not end with -{environment}-{code} "
                         "(<application>-<environment>-<region code>)")
    return name


def _tags(text: str) -> dict[str, str]:
    tags: dict[str, str] = {}
    for part in filter(None, (p.strip() for p in text.split(";"))):
        key, equals, value = part.partition("=")
        key, value = key.strip(), value.strip()
        if not equals or not key or not value:
            raise ValueError(f"tags: {part!r} is not key=value (tags are 'key=value; key=value')")
        rule = _TAG_RULES.get(key)
        if rule is not None and not re.match(rule[0], value):
            raise ValueError(f"tag {key} {value!r} is not {rule[1]}: the schema rejects it")
        tags[key] = value
    return tags


def _check_fit(config: Mapping[str, Any], space: Network, source: str) -> None:
    for subnet in config["subnets"]:
        prefix = ipaddress.IPv4Network(subnet["addressPrefix"])
        if not prefix.subnet_of(space):
            raise ValueError(f"range {space} is too small for {source}'s subnets: {subnet['name']} would be "
                             f"{prefix}, outside it (the source's range is {seed_configs()[source]['addressSpace'][0]})")


def _changes(source: Mapping[str, Any], new: Mapping[str, Any]) -> dict[str, Any]:
    return {c.path: c.after for c in leaf_diff(source, new)}  # changed leaves, and tags the source did not have

"""The seed data: realistic, varied and valid against every rule."""

from __future__ import annotations

import ipaddress
from typing import Any

from agent_evals.packs.spoke.portal.settings import PortalSettings
from agent_evals.packs.spoke.portal.validation import SpokeValidator

from .helpers import seed_hub


def test_at_least_twelve_spokes_across_environments_and_regions(seeds: dict[str, dict[str, Any]]) -> None:
    assert len(seeds) >= 12
    assert {c["environment"] for c in seeds.values()} == {"dev", "test", "prod"}
    assert len({c["location"] for c in seeds.values()}) >= 3


def test_every_seed_passes_validation(seeds: dict[str, dict[str, Any]]) -> None:
    validator = SpokeValidator(PortalSettings())
    for name, config in seeds.items():
        result = validator.validate(config, hub=seed_hub(), spokes=seeds, spoke_name=name)
        assert result.valid, (name, [e.model_dump() for e in result.errors])


def test_names_match_files_and_prod_has_private_link(seeds: dict[str, dict[str, Any]]) -> None:
    for name, config in seeds.items():
        assert config["name"] == name
        if config["environment"] == "prod":
            assert config["privateLink"]["enabled"] is True


def test_address_spaces_are_distinct_10_x_ranges(seeds: dict[str, dict[str, Any]]) -> None:
    nets = [ipaddress.IPv4Network(c) for config in seeds.values() for c in config["addressSpace"]]
    nets.append(ipaddress.IPv4Network(seed_hub().address_space[0]))
    assert all(n.subnet_of(ipaddress.IPv4Network("10.0.0.0/8")) for n in nets)
    assert not [(a, b) for i, a in enumerate(nets) for b in nets[i + 1 :] if a.overlaps(b)]


def test_tags_have_cost_centres_and_owners(seeds: dict[str, dict[str, Any]]) -> None:
    assert len({c["tags"]["costCenter"] for c in seeds.values()}) >= 5
    assert all("@" in c["tags"]["owner"] for c in seeds.values())

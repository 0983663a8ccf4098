"""The spoke schema: valid draft 2020-12, every property described, descriptions distinct; its validator,
compiled by the warm server, is the one the check finds."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from agent_evals.packs.spoke.portal.api import PortalAPI
from agent_evals.packs.spoke.portal.process import PortalProcess
from agent_evals.packs.spoke.portal.rules import ALLOWED_LOCATIONS
from agent_evals.packs.spoke.portal.schema import load_spoke_schema, pointer


def properties(schema: dict[str, Any], where: str = "") -> Iterator[tuple[str, dict[str, Any]]]:
    """(path, subschema) of every declared property, in the root and in $defs."""
    for name, sub in schema.get("properties", {}).items():
        yield f"{where}/{name}", sub
        yield from properties(sub, f"{where}/{name}")
    for name, sub in schema.get("$defs", {}).items():
        yield from properties(sub, f"$defs/{name}")


def test_schema_is_valid_draft_2020_12() -> None:
    schema = load_spoke_schema()
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    Draft202012Validator.check_schema(schema)


def test_every_property_has_a_distinct_human_description() -> None:
    described = dict(properties(load_spoke_schema()))
    assert len(described) >= 35
    missing = [path for path, sub in described.items() if not sub.get("description")]
    assert missing == []
    seen: dict[str, str] = {}
    for path, sub in described.items():
        text = sub["description"]
        assert len(text.split()) >= 4, f"{path}: description too short: {text!r}"
        assert text not in seen, f"{path} and {seen.get(text)} share the description {text!r}"
        seen[text] = path


def test_keys_are_camel_case() -> None:
    for path, _ in properties(load_spoke_schema()):
        key = path.rsplit("/", 1)[-1]
        assert key[0].islower() and "_" not in key and "-" not in key, path


def test_location_description_lists_the_allowed_regions() -> None:
    text = load_spoke_schema()["properties"]["location"]["description"]
    assert all(region in text for region in ALLOWED_LOCATIONS)


def test_strict_objects() -> None:
    schema = load_spoke_schema()
    assert schema["additionalProperties"] is False
    assert schema["$defs"]["subnet"]["additionalProperties"] is False
    assert schema["$defs"]["nsgRule"]["additionalProperties"] is False
    # Tags stay open (customers add their own) but must be strings.
    assert schema["properties"]["tags"]["additionalProperties"] == {"type": "string"}


def test_pointer_escapes() -> None:
    assert pointer(["subnets", 1, "addressPrefix"]) == "/subnets/1/addressPrefix"
    assert pointer(["a/b", "c~d"]) == "/a~1b/c~0d"
    assert pointer([]) == ""


def test_the_warm_servers_spoke_schema_validator_is_the_one_the_check_finds(
    live_portal: PortalProcess, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The spoke pack's ``warm_workers()`` compiles the validator ``spoke_json_valid`` takes for the schema
    the portal serves (read into a row's end state): a worker forked after it compiles nothing."""
    from agent_evals.assertions import schema_check
    from agent_evals.packs.spoke.portal.server import warm_workers

    monkeypatch.setattr(schema_check, "_VALIDATORS", {})
    monkeypatch.setattr(schema_check, "_BY_OBJECT", {})
    warm_workers()
    (compiled,) = schema_check._VALIDATORS.values()
    served = PortalAPI(live_portal.url, token=live_portal.token).get_schema()["schema"]
    assert served is not None and schema_check._validator("schema", served) is compiled
    assert len(schema_check._VALIDATORS) == 1

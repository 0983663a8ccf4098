"""Customer settings: parsing (with clear startup errors) and their effect on validation."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agent_evals.packs.spoke.portal.errors import SettingsError
from agent_evals.packs.spoke.portal.settings import PortalSettings, load_settings, parse_settings
from agent_evals.packs.spoke.portal.validation import SpokeValidator

from .helpers import new_spoke, seed_hub, seed_spokes

RULE = {
    "pattern": "^[a-z0-9-]+-(dev|test|prod)-(weu|neu|sdc|gwc)$",
    "description": "<application>-<environment>-<region code>",
    "examples": ["payments-prod-weu"],
}
EXTRA_SCHEMA = {
    "type": "object",
    "properties": {"tags": {"required": ["dataClassification", "businessUnit"]}},
}
YAML = """\
fileNameRules:
  pattern: "^[a-z0-9-]+-(dev|test|prod)-(weu|neu|sdc|gwc)$"
  description: "<application>-<environment>-<region code>"
  examples: [payments-prod-weu]
additionalSchema:
  type: object
  properties:
    tags: {required: [dataClassification, businessUnit]}
"""


def test_yaml_and_json_files_give_the_same_settings(tmp_path: Path) -> None:
    (tmp_path / "s.yaml").write_text(YAML)
    (tmp_path / "s.json").write_text(json.dumps({"fileNameRules": RULE, "additionalSchema": EXTRA_SCHEMA}))
    from_yaml, from_json = load_settings(tmp_path / "s.yaml"), load_settings(tmp_path / "s.json")
    assert from_yaml == from_json
    assert from_yaml.file_name_rule is not None and from_yaml.file_name_rule.as_dict() == RULE
    assert from_yaml.additional_schema == EXTRA_SCHEMA


def test_no_file_and_empty_file_mean_no_extra_rules(tmp_path: Path) -> None:
    (tmp_path / "empty.yaml").write_text("")
    assert load_settings(None) == PortalSettings() == load_settings(tmp_path / "empty.yaml")


BAD: list[tuple[str, Any, str]] = [
    (
        "unknown top-level key",
        {"fileNameRule": RULE},
        "unknown key(s) 'fileNameRule'; allowed: fileNameRules, additionalSchema",
    ),
    ("not a mapping", ["x"], "expected a mapping with keys fileNameRules, additionalSchema, got list"),
    (
        "unknown rule key",
        {"fileNameRules": {**RULE, "regex": "x"}},
        "unknown key(s) 'regex'; allowed: pattern",
    ),
    (
        "bad regex",
        {"fileNameRules": {**RULE, "pattern": "([a-z"}},
        "fileNameRules.pattern '([a-z' is not a valid regular expression",
    ),
    ("no description", {"fileNameRules": {"pattern": "^x$"}}, "description must explain the naming rule"),
    (
        "example does not match",
        {"fileNameRules": {**RULE, "examples": ["crm-prod"]}},
        "examples ['crm-prod'] do not match the pattern",
    ),
    ("schema not an object", {"additionalSchema": "required: tags"}, "must be a JSON schema object, got str"),
    (
        "invalid schema",
        {"additionalSchema": {"type": "thing"}},
        "additionalSchema is not a valid JSON schema (draft 2020-12) at type:",
    ),
]


@pytest.mark.parametrize(("data", "message"), [(d, m) for _, d, m in BAD], ids=[c[0] for c in BAD])
def test_bad_settings_fail_with_a_clear_message(data: Any, message: str) -> None:
    with pytest.raises(SettingsError) as info:
        parse_settings(data, source="s.yaml")
    assert message in str(info.value)
    assert str(info.value).startswith("s.yaml")


def test_unreadable_and_malformed_files(tmp_path: Path) -> None:
    with pytest.raises(SettingsError, match="cannot read settings file"):
        load_settings(tmp_path / "missing.yaml")
    (tmp_path / "bad.json").write_text("{nope")
    with pytest.raises(SettingsError, match=r"is not valid \.json"):
        load_settings(tmp_path / "bad.json")
    (tmp_path / "bad.yaml").write_text("a: [b")
    with pytest.raises(SettingsError, match=r"is not valid \.yaml"):
        load_settings(tmp_path / "bad.yaml")


def validate(config: dict[str, Any], spoke_name: str | None = None) -> set[tuple[str, str]]:
    settings = parse_settings({"fileNameRules": RULE, "additionalSchema": EXTRA_SCHEMA})
    result = SpokeValidator(settings).validate(
        config, hub=seed_hub(), spokes=seed_spokes(), spoke_name=spoke_name
    )
    return {(e.path, e.rule) for e in result.errors}


def test_file_name_rule() -> None:
    assert validate(new_spoke("billing-dev-weu")) == set()
    assert validate(new_spoke("billing-weu")) == {("/name", "file-name-rule")}
    # The rule applies to the file name being written, which the gate checks against config.name too.
    assert validate(new_spoke("billing-weu"), spoke_name="billing-weu") == {("/name", "file-name-rule")}


def test_file_name_rule_message_shows_description_and_example() -> None:
    settings = parse_settings({"fileNameRules": RULE})
    result = SpokeValidator(settings).validate(new_spoke("billing-weu"), hub=seed_hub(), spokes=seed_spokes())
    assert result.errors[0].message == (
        "spoke file name 'billing-weu' does not follow the naming rule: <application>-<environment>-<region "
        "code>, e.g. payments-prod-weu (pattern ^[a-z0-9-]+-(dev|test|prod)-(weu|neu|sdc|gwc)$)"
    )


def test_additional_schema() -> None:
    config = new_spoke()
    del config["tags"]["businessUnit"]
    assert validate(config) == {("/tags/businessUnit", "additional-schema")}

"""Customer settings (``--settings FILE``, YAML or JSON), read and checked once at startup.

Format (every key optional)::

    fileNameRules:            # spoke file names (without .json) must fully match `pattern`
      pattern: "^[a-z0-9-]+-(dev|test|prod)-(weu|neu|sdc|gwc)$"
      description: "<application>-<environment>-<region code>, e.g. payments-prod-weu"
      examples: [payments-prod-weu]           # optional; each must match the pattern
    additionalSchema:         # a JSON schema (draft 2020-12) every configuration must also satisfy
      type: object
      properties:
        tags: {required: [dataClassification]}

An unknown key, a bad regex, an example that does not match, or an invalid schema
raises ``SettingsError`` naming the file, the key and what is allowed.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from jsonschema import Draft202012Validator
from jsonschema.exceptions import SchemaError

from agent_evals.packs.spoke.portal.errors import SettingsError

SETTINGS_KEYS: tuple[str, ...] = ("fileNameRules", "additionalSchema")
FILE_NAME_RULE_KEYS: tuple[str, ...] = ("pattern", "description", "examples")


@dataclass(frozen=True)
class FileNameRule:
    pattern: str
    description: str
    examples: tuple[str, ...] = ()

    def matches(self, name: str) -> bool:
        return re.fullmatch(self.pattern, name) is not None

    def as_dict(self) -> dict[str, Any]:
        return {"pattern": self.pattern, "description": self.description, "examples": list(self.examples)}


@dataclass(frozen=True)
class PortalSettings:
    file_name_rule: FileNameRule | None = None
    additional_schema: dict[str, Any] | None = None


def load_settings(path: Path | None) -> PortalSettings:
    """Read and check a settings file; ``None`` gives the defaults (no extra rules)."""
    if path is None:
        return PortalSettings()
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise SettingsError(f"cannot read settings file {path}: {exc.strerror or exc}") from exc
    try:
        data = json.loads(text) if Path(path).suffix.lower() == ".json" else yaml.safe_load(text)
    except (json.JSONDecodeError, yaml.YAMLError) as exc:
        raise SettingsError(
            f"settings file {path} is not valid {Path(path).suffix or 'YAML'}: {exc}"
        ) from exc
    return parse_settings(data, source=str(path))


def parse_settings(data: object, *, source: str = "settings") -> PortalSettings:
    """Check already-parsed settings data (``None`` = empty file)."""
    if data is None:
        return PortalSettings()
    if not isinstance(data, Mapping):
        raise SettingsError(
            f"{source}: expected a mapping with keys {', '.join(SETTINGS_KEYS)}, got {type(data).__name__}"
        )
    _reject_unknown(data, SETTINGS_KEYS, source)
    rule = data.get("fileNameRules")
    schema = data.get("additionalSchema")
    return PortalSettings(
        file_name_rule=None if rule is None else _file_name_rule(rule, source),
        additional_schema=None if schema is None else _additional_schema(schema, source),
    )


def _reject_unknown(data: Mapping[str, Any], allowed: tuple[str, ...], where: str) -> None:
    unknown = sorted(str(k) for k in data if k not in allowed)
    if unknown:
        raise SettingsError(
            f"{where}: unknown key(s) {', '.join(map(repr, unknown))}; allowed: {', '.join(allowed)}"
        )


def _file_name_rule(data: object, source: str) -> FileNameRule:
    where = f"{source}: fileNameRules"
    if not isinstance(data, Mapping):
        raise SettingsError(f"{where} must be a mapping with keys {', '.join(FILE_NAME_RULE_KEYS)}")
    _reject_unknown(data, FILE_NAME_RULE_KEYS, where)
    pattern, description = data.get("pattern"), data.get("description")
    if not isinstance(pattern, str) or not pattern:
        raise SettingsError(f"{where}.pattern must be a non-empty regular expression string")
    if not isinstance(description, str) or not description.strip():
        raise SettingsError(f"{where}.description must explain the naming rule to users (non-empty text)")
    try:
        re.compile(pattern)
    except re.error as exc:
        raise SettingsError(f"{where}.pattern {pattern!r} is not a valid regular expression: {exc}") from exc
    examples = data.get("examples", [])
    if not isinstance(examples, list) or not all(isinstance(e, str) for e in examples):
        raise SettingsError(f"{where}.examples must be a list of file names (strings)")
    rule = FileNameRule(pattern=pattern, description=description.strip(), examples=tuple(examples))
    bad = [e for e in examples if not rule.matches(e)]
    if bad:
        raise SettingsError(f"{where}.examples {bad} do not match the pattern {pattern!r}")
    return rule


def _additional_schema(data: object, source: str) -> dict[str, Any]:
    where = f"{source}: additionalSchema"
    if not isinstance(data, Mapping):
        raise SettingsError(f"{where} must be a JSON schema object, got {type(data).__name__}")
    try:
        schema: dict[str, Any] = json.loads(json.dumps(data))  # plain JSON values only
    except (TypeError, ValueError) as exc:
        raise SettingsError(f"{where} must hold JSON values only (quote dates and the like): {exc}") from exc
    try:
        Draft202012Validator.check_schema(schema)
    except SchemaError as exc:
        at = "/".join(str(p) for p in exc.absolute_path) or "(root)"
        raise SettingsError(
            f"{where} is not a valid JSON schema (draft 2020-12) at {at}: {exc.message}"
        ) from exc
    return schema

"""Validate a spoke configuration: schema, customer settings, then business rules.

One entry point, ``SpokeValidator.validate``, used by ``validate_spoke_config`` and by
the pull-request validation gate, so both always agree. All checks run in one round
(rules tolerate schema failures) and the result lists every error with its JSON path.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from jsonschema import Draft202012Validator

from agent_evals.packs.spoke.portal.models import Issue, ValidationResult
from agent_evals.packs.spoke.portal.rules import Hub, RuleContext, check_rules
from agent_evals.packs.spoke.portal.schema import schema_issues, spoke_validator
from agent_evals.packs.spoke.portal.settings import PortalSettings

Config = Mapping[str, Any]


class SpokeValidator:
    """Checks configurations against the spoke schema, the settings and the business rules."""

    def __init__(self, settings: PortalSettings) -> None:
        self.settings = settings
        schema = settings.additional_schema
        self._additional = Draft202012Validator(schema) if schema is not None else None

    def validate(
        self,
        config: object,
        *,
        hub: Hub,
        spokes: Mapping[str, Config],
        spoke_name: str | None = None,
    ) -> ValidationResult:
        """Validate ``config`` against main (``hub`` and ``spokes``: file stem -> config).

        ``spoke_name`` is the file being changed (``spokes/<spoke_name>.json``); it is left
        out of the overlap and uniqueness checks. ``None`` means a new spoke.
        """
        issues = schema_issues(spoke_validator(), config, "schema")
        if self._additional is not None:
            issues += schema_issues(self._additional, config, "additional-schema")
        if isinstance(config, Mapping):
            issues += self._file_name_issues(config, spoke_name)
            others = {stem: other for stem, other in spokes.items() if stem != spoke_name}
            issues += check_rules(config, RuleContext(hub=hub, others=others, target=spoke_name))
        unique = list(dict.fromkeys(issues))
        return ValidationResult(valid=not unique, errors=unique)

    def _file_name_issues(self, config: Config, spoke_name: str | None) -> list[Issue]:
        rule = self.settings.file_name_rule
        name = spoke_name if spoke_name is not None else config.get("name")
        if rule is None or not isinstance(name, str) or rule.matches(name):
            return []
        example = f", e.g. {rule.examples[0]}" if rule.examples else ""
        return [
            Issue(
                path="/name",
                message=f"spoke file name {name!r} does not follow the naming rule: {rule.description}"
                f"{example} (pattern {rule.pattern})",
                rule="file-name-rule",
            )
        ]

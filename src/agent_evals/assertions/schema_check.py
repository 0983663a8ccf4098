"""Validating a document against JSON Schemas (jsonschema is imported here, lazily).

The validator class follows the schema's ``$schema`` (Draft 2020-12 when absent);
``format`` is an annotation only (not checked), as the JSON Schema default says.
Errors come back sorted by instance path, each with the schema it came from.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from agent_evals.assertions.json_pointer import to_pointer

MAX_MESSAGE = 200


@dataclass(frozen=True)
class SchemaIssue:
    """One validation error: ``path`` is a JSON Pointer into the document."""

    path: str
    message: str
    schema: str  # which schema: "schema" or "additional_schema"

    def describe(self) -> str:
        return f"{self.path or '/'}: {self.message} ({self.schema})"


class BadSchema(ValueError):
    """The portal's schema is not a valid JSON Schema."""


_VALIDATORS: dict[str, Any] = {}  # the schema's JSON → its checked validator (a run has one or two schemas)


def _validator(label: str, schema: Mapping[str, Any]) -> Any:
    """A validator for ``schema``, checked once per process: checking a schema costs ~35 ms, and
    the provider's worker grades every row of a run against the same one or two."""
    from jsonschema import exceptions, validators

    key = json.dumps(schema, sort_keys=True, default=str)
    if key not in _VALIDATORS:
        cls = validators.validator_for(schema, default=validators.Draft202012Validator)
        try:
            cls.check_schema(schema)
        except exceptions.SchemaError as err:
            raise BadSchema(f"{label} is not a valid JSON Schema: {err.message}") from None
        if len(_VALIDATORS) >= 16:
            _VALIDATORS.clear()
        _VALIDATORS[key] = cls(schema)
    return _VALIDATORS[key]


def schema_issues(document: Any, schemas: Mapping[str, Any]) -> list[SchemaIssue]:
    """Every error of ``document`` against each named schema (None schemas are skipped)."""
    issues: list[SchemaIssue] = []
    for label, schema in schemas.items():
        if schema is None:
            continue
        if not isinstance(schema, Mapping):
            raise BadSchema(f"{label} is a {type(schema).__name__}, not a JSON Schema object")
        for error in _validator(label, schema).iter_errors(document):
            path = to_pointer([str(part) for part in error.absolute_path])
            message = (
                error.message if len(error.message) <= MAX_MESSAGE else error.message[: MAX_MESSAGE - 1] + "…"
            )
            issues.append(SchemaIssue(path, message, label))
    return sorted(issues, key=lambda issue: (issue.path, issue.schema, issue.message))

"""Validating a document against JSON Schemas (jsonschema is imported here, lazily).

The validator class follows the schema's ``$schema`` (Draft 2020-12 when absent);
``format`` is an annotation only (not checked), as the JSON Schema default says.
Errors come back sorted by instance path, each with the schema it came from.
"""

from __future__ import annotations

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


def schema_issues(document: Any, schemas: Mapping[str, Any]) -> list[SchemaIssue]:
    """Every error of ``document`` against each named schema (None schemas are skipped)."""
    from jsonschema import exceptions, validators

    issues: list[SchemaIssue] = []
    for label, schema in schemas.items():
        if schema is None:
            continue
        if not isinstance(schema, Mapping):
            raise BadSchema(f"{label} is a {type(schema).__name__}, not a JSON Schema object")
        cls = validators.validator_for(schema, default=validators.Draft202012Validator)
        try:
            cls.check_schema(schema)
        except exceptions.SchemaError as err:
            raise BadSchema(f"{label} is not a valid JSON Schema: {err.message}") from None
        for error in cls(schema).iter_errors(document):
            path = to_pointer([str(part) for part in error.absolute_path])
            message = (
                error.message if len(error.message) <= MAX_MESSAGE else error.message[: MAX_MESSAGE - 1] + "…"
            )
            issues.append(SchemaIssue(path, message, label))
    return sorted(issues, key=lambda issue: (issue.path, issue.schema, issue.message))

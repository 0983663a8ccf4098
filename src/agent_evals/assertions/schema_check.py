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


_BY_OBJECT: dict[int, tuple[Mapping[str, Any], Any]] = {}  # the same schema object again: no key to compute


def _validator(label: str, schema: Mapping[str, Any]) -> Any:
    """A validator for ``schema``, checked once per process: checking a schema costs ~35 ms, and
    the provider's worker grades every row of a run against the same one or two."""
    known = _BY_OBJECT.get(id(schema))
    if known is not None and known[0] is schema:
        return known[1]
    from jsonschema import exceptions, validators  # lazy: loads jsonschema only when used (start-up time)

    key = json.dumps(schema, sort_keys=True, default=str)
    if key not in _VALIDATORS:
        cls = validators.validator_for(schema, default=validators.Draft202012Validator)
        try:
            cls.check_schema(dict(schema))
        except exceptions.SchemaError as err:
            raise BadSchema(f"{label} is not a valid JSON Schema: {err.message}") from None
        if len(_VALIDATORS) >= 16:
            _VALIDATORS.clear()
        _VALIDATORS[key] = cls(inline_refs(schema))
    if len(_BY_OBJECT) >= 16:
        _BY_OBJECT.clear()
    _BY_OBJECT[id(schema)] = (schema, _VALIDATORS[key])  # the object is kept, so its id is not reused
    return _VALIDATORS[key]


def inline_refs(schema: Mapping[str, Any]) -> Mapping[str, Any]:
    """The schema with its local ``$ref``s (``#/$defs/x``, ``#/definitions/x``) replaced by what they name,
    when none is recursive: the same verdicts and messages, a third less time per document (jsonschema
    resolves a ``$ref`` anew at every use). A schema with another kind of reference is kept as it is."""
    defs = {**(schema.get("definitions") or {}), **(schema.get("$defs") or {})}

    def inline(node: Any, seen: tuple[str, ...]) -> Any:
        if isinstance(node, list):
            return [inline(item, seen) for item in node]
        if not isinstance(node, Mapping):
            return node
        ref = node.get("$ref")
        if isinstance(ref, str):
            name = ref.rpartition("/")[2]
            if not ref.startswith(("#/$defs/", "#/definitions/")) or name in seen or name not in defs:
                raise _KeepRefs
            return inline({**defs[name], **{k: v for k, v in node.items() if k != "$ref"}}, (*seen, name))
        return {k: inline(v, seen) for k, v in node.items()}

    try:
        return inline(schema, ())
    except _KeepRefs:
        return schema


class _KeepRefs(Exception):
    """A reference that cannot be inlined (remote, recursive): the schema is kept as it is."""


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

"""The spoke JSON schema (draft 2020-12) and schema errors as ``Issue``s.

``spoke.schema.json`` ships beside this module. jsonschema's messages are rewritten
to say what to do ("missing required property 'owner': E-mail address of ...") and
every error gets a JSON pointer, so an agent can map it back to a field.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from functools import lru_cache
from importlib import resources
from typing import Any

from jsonschema import Draft202012Validator
from jsonschema.exceptions import ValidationError as SchemaValidationError

from agent_evals.packs.spoke.portal.models import Issue, RuleId

_SHOW = 60


@lru_cache(maxsize=1)
def _schema_text() -> str:
    return resources.files("agent_evals.packs.spoke.portal").joinpath("spoke.schema.json").read_text(encoding="utf-8")


def load_spoke_schema() -> dict[str, Any]:
    """A fresh copy of the spoke schema (callers may not share mutations)."""
    schema: dict[str, Any] = json.loads(_schema_text())
    return schema


@lru_cache(maxsize=1)
def spoke_validator() -> Draft202012Validator:
    schema = load_spoke_schema()
    Draft202012Validator.check_schema(schema)
    return Draft202012Validator(schema)


def pointer(parts: Iterable[str | int]) -> str:
    """RFC 6901 JSON pointer of a path: ``["subnets", 1, "name"]`` -> ``/subnets/1/name``."""
    return "".join("/" + str(p).replace("~", "~0").replace("/", "~1") for p in parts)


def schema_issues(validator: Draft202012Validator, instance: object, rule: RuleId) -> list[Issue]:
    """Every schema error of ``instance`` as issues, sorted by path."""
    issues: list[Issue] = []
    for error in validator.iter_errors(instance):
        issues.extend(_to_issues(error, rule))
    return sorted(set(issues), key=lambda i: (i.path, i.message))


def _to_issues(error: SchemaValidationError, rule: RuleId) -> list[Issue]:
    path = list(error.absolute_path)
    schema = error.schema if isinstance(error.schema, Mapping) else {}
    if error.validator == "required":
        return [_missing(path, name, schema, rule) for name in _missing_names(error)]
    if error.validator == "additionalProperties" and isinstance(error.instance, Mapping):
        allowed = sorted(schema.get("properties", {}))
        extra = [k for k in error.instance if k not in allowed]
        return [
            Issue(
                path=pointer([*path, key]),
                message=f"unknown property {key!r}; allowed here: {', '.join(allowed)}",
                rule=rule,
            )
            for key in extra
        ]
    return [Issue(path=pointer(path), message=_message(error, schema), rule=rule)]


def _missing_names(error: SchemaValidationError) -> list[str]:
    required = error.validator_value if isinstance(error.validator_value, Sequence) else []
    instance = error.instance if isinstance(error.instance, Mapping) else {}
    return [str(name) for name in required if name not in instance]


def _missing(path: list[Any], name: str, schema: Mapping[str, Any], rule: RuleId) -> Issue:
    described = _description(schema.get("properties", {}).get(name, {}))
    suffix = f" ({described})" if described else ""
    return Issue(
        path=pointer([*path, name]), message=f"missing required property {name!r}{suffix}", rule=rule
    )


def _description(schema: object) -> str:
    return str(schema.get("description", "")) if isinstance(schema, Mapping) else ""


def _shown(value: object) -> str:
    text = json.dumps(value, ensure_ascii=True) if not isinstance(value, str) else repr(value)
    return text if len(text) <= _SHOW else text[: _SHOW - 3] + "..."


def _message(error: SchemaValidationError, schema: Mapping[str, Any]) -> str:
    value, described = _shown(error.instance), _description(schema)
    hint = f" ({described})" if described else ""
    kind = error.validator
    if kind == "enum":
        allowed = ", ".join(str(v) for v in (error.validator_value if isinstance(error.validator_value, Sequence) else ()))
        return f"{value} is not allowed; allowed: {allowed}"
    if kind == "pattern":
        return f"{value} does not have the expected format{hint}; pattern {error.validator_value}"
    if kind == "type":
        return f"expected {error.validator_value}, got {_json_type(error.instance)} {value}{hint}"
    if kind in ("minimum", "maximum"):
        return f"{value} is out of range{hint}"
    return f"{error.message}{hint}"


def _json_type(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    return "array" if isinstance(value, list) else "object"

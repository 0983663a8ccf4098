"""What the agent's MCP client needs from the MCP SDK besides the session itself: tools as the model
sees them, listing every page of a server's tools, output validators shared across sessions, and
the leaves of an exception group (the TLS settings: ``agent_evals.llm.tls``)."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

from agent_evals.llm.types import ToolSpec

__all__ = [
    "exception_leaves", "list_tools", "mcp_tool_to_spec", "output_validator", "parse_json",
    "precompile_output_validators", "share_output_validators",
]


def mcp_tool_to_spec(name: str, description: str | None, input_schema: Mapping[str, Any]) -> ToolSpec:
    """An MCP tool definition as an OpenAI function tool."""
    parameters = dict(input_schema) if input_schema else {"type": "object", "properties": {}}
    parameters.pop("title", None)
    return {
        "type": "function",
        "function": {"name": name, "description": description or "", "parameters": parameters},
    }


# Compiled output-schema validators, shared by this process's sessions: the SDK compiles one per tool
# and session (~10 ms each, most of a replayed conversation's CPU); a server's schemas don't change.
_VALIDATORS: dict[tuple[str, str], Any] = {}


def output_validator(schema: dict[str, Any]) -> Any:
    """A compiled validator of a tool's output schema, built as the SDK builds it
    (``ClientSession._output_schema_validator``: the schema's draft, checked, an empty registry);
    raises RuntimeError for an invalid schema, as the SDK does."""
    from jsonschema import SchemaError  # lazy: loads jsonschema only when used (start-up time)
    from jsonschema.validators import validator_for  # lazy: loads jsonschema only when used (start-up time)
    from referencing import Registry  # lazy: loads referencing only when used (start-up time)

    validator_cls = validator_for(schema)
    try:
        validator_cls.check_schema(schema)
    except SchemaError as exc:
        raise RuntimeError(f"Invalid output schema: {exc}") from exc
    return validator_cls(schema, registry=Registry())


def precompile_output_validators(tools: Iterable[tuple[str, Mapping[str, Any] | None]]) -> int:
    """Compile the validators of known tools' output schemas ahead of any session (a warm server,
    before it forks its workers: each would compile them on its first session, ~0.1 s of CPU for the
    portal's ten tools); how many it compiled. An invalid schema is left to the SDK."""
    compiled = 0
    for name, schema in tools:
        if not isinstance(schema, Mapping):
            continue
        key = (str(name), json.dumps(schema, sort_keys=True))
        if key in _VALIDATORS:
            continue
        try:
            _VALIDATORS[key] = output_validator(dict(schema))
        except RuntimeError:
            continue
        compiled += 1
    return compiled


def share_output_validators(client: Any) -> None:
    """Give a new session the validators an earlier session compiled for the same schemas (the SDK
    reuses a session's cached validator while the tool's schema is unchanged). Best effort: an SDK
    without this cache is left as it is."""
    session = getattr(client, "session", None)
    schemas = getattr(session, "_tool_output_schemas", None)
    cache = getattr(session, "_tool_output_validators", None)
    compile_one = getattr(session, "_output_schema_validator", None)
    if not (isinstance(schemas, dict) and isinstance(cache, dict) and callable(compile_one)):
        return
    for name, schema in schemas.items():
        if not isinstance(schema, dict):
            continue
        key = (str(name), json.dumps(schema, sort_keys=True))
        if key in _VALIDATORS:
            cache[name] = _VALIDATORS[key]
            continue
        try:
            _VALIDATORS[key] = compile_one(name, schema)  # compiles and caches it in this session too
        except RuntimeError:
            continue  # an invalid schema: the SDK says so when the tool is called


async def list_tools(client: Any) -> list[Any]:
    tools: list[Any] = []
    cursor: str | None = None
    while True:
        listed = await client.list_tools(cursor=cursor) if cursor else await client.list_tools()
        tools.extend(listed.tools)
        cursor = listed.next_cursor
        if not cursor:
            return tools


def parse_json(text: str) -> Any:
    try:
        return json.loads(text)
    except (ValueError, TypeError):
        return text


def exception_leaves(exc: BaseException) -> list[BaseException]:
    if isinstance(exc, BaseExceptionGroup):
        out: list[BaseException] = []
        for sub in exc.exceptions:
            out.extend(exception_leaves(sub))
        return out
    return [exc]

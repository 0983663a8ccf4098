"""One tool call, from the model's request to its outcome: the kit's only tool-call type.

The model's request is a ``ToolCall`` with ``outcome`` None (not executed). The agent
loop executes it and returns a copy with ``outcome``, ``result``, ``turn``, timing and the
``server`` (the name of the agent's MCP server that ran it; None when no server did, and in
records written before the field existed).
The outcome is typed, never inferred from text:

``ok``                 the tool ran and succeeded
``tool_error``         the tool ran (or was asked) and answered an error
``refused``            the loop did not run it: not one of the agent's tools, or the tool-round limit
``invalid_arguments``  the loop did not run it: the arguments were not a JSON object
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any, Literal, get_args

ToolOutcome = Literal["ok", "tool_error", "refused", "invalid_arguments"]
TOOL_OUTCOMES: tuple[ToolOutcome, ...] = get_args(ToolOutcome)


class ToolCallFormatError(ValueError):
    """A serialized tool call is malformed (a cassette or metadata edited by hand, or another format)."""


@dataclass(frozen=True)
class ToolCall:
    """A tool call. ``index`` is its 1-based position in the conversation (0 until placed)."""

    id: str
    name: str
    raw_arguments: str
    arguments: dict[str, Any] | None = None  # parsed; None when the raw text was not a JSON object
    outcome: ToolOutcome | None = None  # None: requested by the model, not executed
    result: Any = None  # parsed JSON the tool answered, else its text; the message for errors
    turn: int = 0  # 1-based user turn
    index: int = 0
    duration_ms: float = 0.0
    server: str | None = None  # the MCP server the call went to (its name in agent.yaml)

    @classmethod
    def request(cls, id: str, name: str, raw_arguments: str) -> ToolCall:
        """What the model asked for; ``arguments`` is parsed when the text is a JSON object."""
        return cls(id=id, name=name, raw_arguments=raw_arguments, arguments=parse_arguments(raw_arguments)[0])

    @property
    def executed(self) -> bool:
        return self.outcome is not None

    @property
    def is_error(self) -> bool:
        """Any outcome but ``ok`` (a request not yet executed is not an error)."""
        return self.outcome is not None and self.outcome != "ok"

    @property
    def ran(self) -> bool:
        """The tool itself was called (``ok`` or ``tool_error``)."""
        return self.outcome in ("ok", "tool_error")

    def where(self) -> str:
        """``call 3, turn 2``."""
        return f"call {self.index}, turn {self.turn}"

    def with_outcome(
        self, outcome: ToolOutcome, result: Any, duration_ms: float = 0.0, *, server: str | None = None
    ) -> ToolCall:
        return replace(self, outcome=outcome, result=result, duration_ms=round(duration_ms, 3), server=server)

    def placed(self, *, turn: int, index: int) -> ToolCall:
        return replace(self, turn=turn, index=index)

    # -- serialized form (metadata, cassettes) ------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "id": self.id,
            "name": self.name,
            "arguments": self.arguments,
            "raw_arguments": self.raw_arguments,
        }
        if self.outcome is not None:
            out.update(
                outcome=self.outcome,
                is_error=self.is_error,  # for readers of the metadata who only want a flag
                result=self.result,
                turn=self.turn,
                index=self.index,
                duration_ms=self.duration_ms,
            )
        if self.server is not None:
            out["server"] = self.server
        return out

    def request_dict(self) -> dict[str, Any]:
        """The request only (a model response in a cassette)."""
        return {"id": self.id, "name": self.name, "arguments": self.raw_arguments}

    @classmethod
    def from_dict(cls, raw: Any, *, where: str = "tool call") -> ToolCall:
        if not isinstance(raw, Mapping):
            raise ToolCallFormatError(f"{where} is a {type(raw).__name__}, not an object")
        name = raw.get("name")
        if not isinstance(name, str) or not name:
            raise ToolCallFormatError(f"{where} has no 'name'")
        outcome = raw.get("outcome")
        if outcome is not None and outcome not in TOOL_OUTCOMES:
            raise ToolCallFormatError(
                f"{where} ({name}) has outcome {outcome!r}, which this kit does not know "
                f"(known: {', '.join(TOOL_OUTCOMES)})"
            )
        raw_arguments = raw.get("raw_arguments")
        if raw_arguments is None and isinstance(raw.get("arguments"), str):  # a request_dict
            raw_arguments = raw["arguments"]
        raw_arguments = "" if raw_arguments is None else str(raw_arguments)
        arguments = raw.get("arguments")
        if not isinstance(arguments, Mapping):
            arguments = parse_arguments(raw_arguments)[0]
        return cls(
            id=str(raw.get("id") or ""),
            name=name,
            raw_arguments=raw_arguments,
            arguments=dict(arguments) if arguments is not None else None,
            outcome=outcome,
            result=raw.get("result"),
            turn=_int(raw.get("turn")),
            index=_int(raw.get("index")),
            duration_ms=float(raw.get("duration_ms") or 0.0),
            server=_server(raw.get("server"), where, name),
        )


def parse_arguments(raw: str | None) -> tuple[dict[str, Any] | None, str | None]:
    """The model's raw argument text as a dict, or ``(None, why not)``; empty text is ``{}``."""
    if raw is None or not str(raw).strip():
        return {}, None
    try:
        value = json.loads(raw)
    except ValueError as exc:
        return None, f"invalid JSON: {exc}"
    if not isinstance(value, dict):
        return None, f"expected an object, got {type(value).__name__}"
    return value, None


def _server(value: Any, where: str, name: str) -> str | None:
    if value is None or isinstance(value, str):
        return value or None
    raise ToolCallFormatError(f"{where} ({name}) has server {value!r}, which is not a server's name (a string)")


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0

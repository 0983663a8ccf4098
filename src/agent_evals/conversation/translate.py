"""Map values the portal generated in a recording to the values of the live run.

A replayed conversation runs the tools for real, so the portal hands out new
pull-request ids, URLs and branch names. The recorded model responses still
mention the old ones ("Here is your PR: http://…/pullrequest/3"). After every
tool call, replay compares the recorded result with the live one and learns the
scalar values that differ at the same place; it then rewrites later model
responses: exact leaves in tool-call arguments, and strings inside text.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

_MIN_TEXT_LENGTH = 6  # shorter strings are not replaced inside free text


@dataclass
class Translation:
    strings: dict[str, str] = field(default_factory=dict)
    numbers: dict[int, int] = field(default_factory=dict)

    def learn(self, recorded: Any, live: Any, key: str | None = None) -> None:
        """Walk both values in parallel and remember the scalars that differ.

        Numbers are learned only under id-like keys (``id``, ``pr_id``, ``pullRequestId``):
        a changed count must not turn every later ``priority: 3`` into ``17``.
        """
        if isinstance(recorded, dict) and isinstance(live, dict):
            for name in recorded.keys() & live.keys():
                self.learn(recorded[name], live[name], name)
        elif isinstance(recorded, list) and isinstance(live, list) and len(recorded) == len(live):
            for r, v in zip(recorded, live, strict=True):
                self.learn(r, v, key)
        elif isinstance(recorded, str) and isinstance(live, str) and recorded != live:
            self.strings[recorded] = live
        elif _is_int(recorded) and _is_int(live) and recorded != live and is_id_key(key):
            self.numbers[recorded] = live

    def text(self, value: str | None) -> str | None:
        """Replace recorded strings inside free text (longest first)."""
        if not value:
            return value
        for old in sorted(self.strings, key=len, reverse=True):
            if len(old) >= _MIN_TEXT_LENGTH and old in value:
                value = value.replace(old, self.strings[old])
        return value

    def value(self, value: Any, key: str | None = None) -> Any:
        """Replace leaves equal to a recorded value: strings anywhere (also inside text),
        numbers only under id-like keys."""
        if isinstance(value, dict):
            return {k: self.value(v, k) for k, v in value.items()}
        if isinstance(value, list):
            return [self.value(v, key) for v in value]
        if isinstance(value, str):
            return self.strings.get(value) or self.text(value)
        if _is_int(value) and is_id_key(key):
            return self.numbers.get(value, value)
        return value

    def arguments(self, raw: str) -> str:
        """Translate a tool call's raw JSON arguments; unparsable text is left as it is."""
        if not (self.strings or self.numbers):
            return raw
        try:
            parsed = json.loads(raw)
        except ValueError:
            return raw
        return json.dumps(self.value(parsed), ensure_ascii=False)


def is_id_key(key: str | None) -> bool:
    """``id``, ``pr_id``, ``pull_request_id``, ``pullRequestId``, ``ids`` (a list of ids)."""
    if not key:
        return False
    lowered = key.lower()
    return lowered in ("id", "ids") or lowered.endswith(("_id", "_ids")) or key.endswith(("Id", "Ids"))


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)

"""How much of a long value the stored record keeps: a cap per text, with a marker of what was cut.

A tool argument or result, a tool's error, a check's reason can be megabytes (a model that
pastes a file into an argument); Promptfoo stores a row's metadata twice in its database
(the response's and the row's) and once more in an ``-o`` file. So the record written out
keeps at most ``MAX_CHARS`` characters of each text, ending with a marker that says how much
was cut and the full size: ``…[cut 9,983,616 of 10,000,000 characters]``. The full values
stay where a check needs them: the provider grades the row's checks on the whole record in
its worker before it caps what Promptfoo stores (``provider.run``), and cassettes keep them
whole (a replay must send what the model sent).
"""

from __future__ import annotations

import re
from typing import Any

MAX_CHARS = 16_384  # per text kept in the stored record (a whole configuration is rarely a fifth of it)
_MARKER = re.compile(r"…\[cut ([\d,]+) of ([\d,]+) characters\]$")


def cap_text(text: str, limit: int = MAX_CHARS) -> str:
    """``text``, or its first ``limit`` characters and the marker."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}…[cut {len(text) - limit:,} of {len(text):,} characters]"


def cap_value(value: Any, limit: int = MAX_CHARS) -> Any:
    """``value`` with every text in it (at any depth, keys included) capped; other values as they are."""
    if isinstance(value, str):
        return cap_text(value, limit)
    if isinstance(value, dict):
        return {cap_text(k, limit) if isinstance(k, str) else k: cap_value(v, limit) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [cap_value(v, limit) for v in value]
    return value


def full_size(text: str) -> int:
    """The size of the text a capped one was cut from (its own length when it was not cut)."""
    match = _MARKER.search(text)
    return int(match.group(2).replace(",", "")) if match else len(text)

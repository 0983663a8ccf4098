"""The rows of a Promptfoo ``-o`` JSON file, one at a time, without parsing the file whole.

Promptfoo writes the file with ``JSON.stringify(…, null, 2)``: the rows of ``results.results``
are the objects indented by six spaces between the lines ``    "results": [`` and ``    ]``,
separated by ``      },`` / ``      {`` lines. JSON strings hold no raw newline, so those
lines can only be structure. :func:`split_rows` reads the file in blocks, hands each row's
text to ``json.loads`` and the row to ``on_row``, and parses the rest (everything but the
rows) as one small document: memory stays at one block and one row, not five times the file.

A file in any other layout (compact JSON, another indentation) gives ``None``; the caller
then parses it whole.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

T = TypeVar("T")
BLOCK = 8 * 1024 * 1024
_START = b'{\n  "evalId": '
_OPEN = b'\n  "results": {\n'
_ROWS = b'\n    "results": [\n      {\n'
_ROW = b"      {\n"
_CLOSE = b"\n      }"
_NEXT = b"\n      },\n      {\n"
_LAST = b"\n      }\n    ]"


class _Layout(Exception):
    """The file is not in the layout this module reads."""


def split_rows(path: Path, on_row: Callable[[Any], T]) -> tuple[dict[str, Any], list[T]] | None:
    """``(the document with an empty rows list, [on_row(row) for each row])``, or None."""
    try:
        with path.open("rb") as handle:
            return _split(handle, lambda text: on_row(json.loads(text)))
    except (_Layout, ValueError, UnicodeDecodeError):
        return None


def split_raw_rows(path: Path) -> tuple[dict[str, Any], list[bytes]] | None:
    """``(the document with an empty rows list, each row's text as written)``, or None: for
    tools that pass rows on unparsed (``agent-evals merge``). A row's text starts with
    ``      {`` and ends with ``      }``, its keys at eight spaces."""
    try:
        with path.open("rb") as handle:
            return _split(handle, bytes)
    except (_Layout, ValueError, UnicodeDecodeError):
        return None


def _split(handle: Any, on_row: Callable[[bytes], T]) -> tuple[dict[str, Any], list[T]]:
    buffer = handle.read(BLOCK)
    if not buffer.startswith(_START):
        raise _Layout
    head_end, buffer = _find_rows(handle, buffer)
    head = buffer[:head_end]
    pos = head_end + len(_ROWS) - len(_ROW)  # at the first row's "      {"
    out: list[T] = []
    while True:
        cut = buffer.find(_NEXT, pos)
        last = buffer.find(_LAST, pos) if cut < 0 else buffer.find(_LAST, pos, cut + len(_LAST))
        if last >= 0 and (cut < 0 or last < cut):  # the last row (config.tests further on looks alike)
            out.append(on_row(buffer[pos : last + len(_CLOSE)]))
            tail = buffer[last + len(_LAST) :] + handle.read()
            break
        if cut >= 0:
            out.append(on_row(buffer[pos : cut + len(_CLOSE)]))
            pos = cut + len(_NEXT) - len(_ROW)
            continue
        more = handle.read(BLOCK)
        if not more:
            raise _Layout
        buffer, pos = buffer[pos:] + more, 0
    document = json.loads(head + b'\n    "results": [\n    ]' + tail)
    return document, out


def _find_rows(handle: Any, buffer: bytes) -> tuple[int, bytes]:
    """Where the rows array of ``results`` starts (it follows ``version``, ``timestamp``, ``prompts``)."""
    opened = buffer.find(_OPEN)
    while True:
        at = buffer.find(_ROWS, max(opened, 0))
        if opened >= 0 and at >= 0:
            return at, buffer
        more = handle.read(BLOCK)
        if not more or len(buffer) > 64 * BLOCK:  # the rows come early; this is not that file
            raise _Layout
        buffer += more
        opened = buffer.find(_OPEN) if opened < 0 else opened

"""JSON Pointers (RFC 6901): parse, build, resolve, set and remove.

``""`` is the whole document, ``/a/0/b~1c`` is key ``a``, index 0, key ``b/c``.
"""

from __future__ import annotations

from typing import Any

__all__ = [
    "PointerError",
    "child",
    "escape",
    "is_within",
    "parent",
    "parse",
    "remove",
    "resolve",
    "set_value",
    "to_pointer",
]


class PointerError(ValueError):
    """A malformed pointer, or one that cannot be applied to a document."""


def escape(token: str | int) -> str:
    """One reference token, escaped (``~`` → ``~0``, ``/`` → ``~1``)."""
    return str(token).replace("~", "~0").replace("/", "~1")


def child(pointer: str, token: str | int) -> str:
    """The pointer of ``token`` below ``pointer``."""
    return f"{pointer}/{escape(token)}"


def to_pointer(tokens: list[str]) -> str:
    return "".join("/" + escape(token) for token in tokens)


def parse(pointer: str) -> list[str]:
    """The unescaped reference tokens of ``pointer``; PointerError if it does not start with ``/``."""
    if not isinstance(pointer, str):
        raise PointerError(f"a JSON Pointer must be a string, got {type(pointer).__name__}")
    if pointer == "":
        return []
    if not pointer.startswith("/"):
        raise PointerError(f"{pointer!r} is not a JSON Pointer (it must start with '/')")
    tokens = pointer[1:].split("/")
    for token in tokens:
        if "~" in token.replace("~0", "").replace("~1", ""):
            raise PointerError(f"{pointer!r} has a bad escape (use ~0 for '~' and ~1 for '/')")
    return [token.replace("~1", "/").replace("~0", "~") for token in tokens]


def parent(pointer: str) -> str:
    """The pointer one level up (``""`` for a top-level key)."""
    return to_pointer(parse(pointer)[:-1])


def is_within(pointer: str, prefix: str) -> bool:
    """True when ``pointer`` equals ``prefix`` or lies below it (whole tokens only)."""
    return pointer == prefix or pointer.startswith(prefix + "/") or prefix == ""


def _index(token: str, size: int, pointer: str, *, allow_end: bool) -> int:
    if token == "-" and allow_end:
        return size
    if not token.isdigit() or (len(token) > 1 and token.startswith("0")):
        raise PointerError(f"{pointer!r}: {token!r} is not an array index")
    index = int(token)
    if index > size or (index == size and not allow_end):
        raise PointerError(f"{pointer!r}: index {index} is past the end of an array of {size} items")
    return index


def resolve(document: Any, pointer: str, default: Any = None) -> Any:
    """The value at ``pointer``, or ``default`` when a key or index on the way does not exist."""
    node = document
    for token in parse(pointer):
        if isinstance(node, dict) and token in node:
            node = node[token]
        elif (
            isinstance(node, list) and token.isdigit() and int(token) < len(node) and str(int(token)) == token
        ):
            node = node[int(token)]
        else:
            return default
    return node


def set_value(document: Any, pointer: str, value: Any) -> Any:
    """Set ``pointer`` to ``value`` in place (creating missing objects on the way); returns the document.

    An array index equal to the length (or ``-``) appends. Setting ``""`` returns ``value``.
    """
    tokens = parse(pointer)
    if not tokens:
        return value
    node = document
    for depth, token in enumerate(tokens[:-1]):
        if isinstance(node, dict):
            node = node.setdefault(token, {})
        elif isinstance(node, list):
            node = node[_index(token, len(node), pointer, allow_end=False)]
        else:
            raise PointerError(f"{pointer!r}: {to_pointer(tokens[:depth]) or '/'} is not an object or array")
    last = tokens[-1]
    if isinstance(node, dict):
        node[last] = value
    elif isinstance(node, list):
        index = _index(last, len(node), pointer, allow_end=True)
        node[index : index + 1] = [value]
    else:
        raise PointerError(f"{pointer!r}: {to_pointer(tokens[:-1]) or '/'} is not an object or array")
    return document


def remove(document: Any, pointer: str) -> None:
    """Remove the value at ``pointer`` in place; PointerError when it does not exist."""
    tokens = parse(pointer)
    if not tokens:
        raise PointerError("cannot remove the whole document ('')")
    container = resolve(document, to_pointer(tokens[:-1]))
    last = tokens[-1]
    if isinstance(container, dict) and last in container:
        del container[last]
    elif isinstance(container, list):
        del container[_index(last, len(container), pointer, allow_end=False)]
    else:
        raise PointerError(f"{pointer!r} does not exist")

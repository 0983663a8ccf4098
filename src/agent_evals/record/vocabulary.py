"""Reading a closed vocabulary (a ``Literal`` type) from untyped data (standard library only).

Both keep the vocabulary's type, where ``value in allowed`` leaves a checker with ``str``.
"""

from __future__ import annotations

from typing import TypeGuard, TypeVar

Word = TypeVar("Word", bound=str)


def is_one_of(value: object, allowed: tuple[Word, ...]) -> TypeGuard[Word]:
    """Whether ``value`` is one of ``allowed``; where it is, a checker knows it as the vocabulary's type."""
    return value in allowed


def one_of(value: object, allowed: tuple[Word, ...], default: Word) -> Word:
    """``value`` when it is one of ``allowed``, else ``default``.

    >>> one_of("max_tokens", ("max_tool_rounds", "max_tokens"), "reply")
    'max_tokens'
    """
    return next((word for word in allowed if word == value), default)

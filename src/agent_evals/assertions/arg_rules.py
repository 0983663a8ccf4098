"""What argument matching may overlook or judge its own way: ignored paths, default values,
numeric tolerance, and custom matchers written in Python (standard library only).

Paths are JSON Pointers (``/config/name``); a bare name (``request_id``) is the top-level key
of that name, as Promptfoo's ``trajectory:tool-args-match`` reads it. Ignored paths may be
globs (``/items/*/id``, ``*_token``).

- **ignore**: an ignored path is left out on both sides.
- **defaults**: an argument left out equals its default: an expected key absent from the call
  matches when its expected value is the default, and a key the call adds with its default
  value is not an extra key (``exact``, ``within``).
- **tolerance**: numbers are equal when ``|actual - expected| <= absolute + relative × |expected|``.
- **matchers**: ``{path: "package.module:function"}`` (a file works too:
  ``path/to/matchers.py:function``, relative to the working directory), the whole arguments at
  ``/``: ``function(actual, expected)`` returns a bool, or ``(bool, reason)``. A matcher that
  raises fails its check with the message (:class:`MatcherError`); the other checks still report.
"""

from __future__ import annotations

import importlib
import importlib.util
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from pathlib import Path
from typing import Any

from agent_evals.assertions.json_text import render

Matcher = Callable[[Any, Any], Any]


class MatcherError(Exception):
    """A custom matcher raised: the check fails with this message."""


@dataclass(frozen=True)
class ArgRules:
    ignore: tuple[str, ...] = ()
    defaults: Mapping[str, Any] = field(default_factory=dict)  # pointer -> default value
    absolute: float = 0.0
    relative: float = 0.0
    matchers: Mapping[str, tuple[str, Matcher]] = field(default_factory=dict)  # pointer -> (its name, function)

    @property
    def empty(self) -> bool:
        return not (self.ignore or self.defaults or self.absolute or self.relative or self.matchers)

    def ignored(self, path: str) -> bool:
        return any(path == entry or (_is_glob(entry) and fnmatchcase(path, entry)) for entry in self.ignore)

    def default(self, path: str) -> tuple[bool, Any]:
        return (True, self.defaults[path]) if path in self.defaults else (False, None)

    def close(self, expected: float, actual: float) -> bool:
        return actual == expected or abs(actual - expected) <= self.absolute + self.relative * abs(expected)

    def matcher(self, path: str) -> tuple[str, Matcher] | None:
        return self.matchers.get(path or "/")

    def describe(self) -> str:
        """``ignoring /id; defaults /page=1; tolerance 0.01; matcher /query=mod:fn`` (empty when none)."""
        parts = []
        if self.ignore:
            parts.append("ignoring " + ", ".join(self.ignore))
        if self.defaults:
            parts.append("defaults " + ", ".join(f"{p}={render(v, limit=30)}" for p, v in self.defaults.items()))
        if self.absolute or self.relative:
            parts.append("tolerance " + " + ".join(
                x for x in (f"{self.absolute:g}" if self.absolute else "", f"{self.relative:g}×" if self.relative else "")
                if x))
        if self.matchers:
            parts.append("matcher " + ", ".join(f"{p}={name}" for p, (name, _) in self.matchers.items()))
        return "; ".join(parts)


def pointer(path: str) -> str:
    """``request_id`` → ``/request_id``; a JSON Pointer stays as it is."""
    return path if path.startswith("/") else "/" + path.replace("~", "~0").replace("/", "~1")


def load_matcher(spec: str) -> Matcher:
    """``package.module:function`` or ``path/to/file.py:function`` (raises ValueError saying why)."""
    target, sep, name = spec.rpartition(":")
    if not sep or not target or not name:
        raise ValueError(f"{spec!r} is not module:function (e.g. mymatchers:same_city)")
    try:
        if target.endswith(".py"):
            path = Path(target).expanduser().resolve()
            loaded = importlib.util.spec_from_file_location(f"_kit_matcher_{path.stem}", path)
            if loaded is None or loaded.loader is None or not path.is_file():
                raise ValueError(f"no file {path}")
            module = importlib.util.module_from_spec(loaded)
            loaded.loader.exec_module(module)
        else:
            module = importlib.import_module(target)
    except (ImportError, OSError, SyntaxError) as exc:
        raise ValueError(f"cannot import {target}: {exc}") from None
    function = getattr(module, name, None)
    if not callable(function):
        raise ValueError(f"{target} has no function {name}")
    return function


def run_matcher(name: str, function: Matcher, actual: Any, expected: Any) -> tuple[bool, str]:
    """The matcher's verdict and reason (raises :class:`MatcherError` when it raises)."""
    try:
        answer = function(actual, expected)
    except Exception as exc:  # noqa: BLE001 - the check fails with the matcher's own message
        raise MatcherError(f"the matcher {name} raised {type(exc).__name__}: {exc}") from exc
    if isinstance(answer, tuple) and len(answer) == 2:
        return bool(answer[0]), str(answer[1])
    return bool(answer), ""


def _is_glob(pattern: str) -> bool:
    return any(char in pattern for char in "*?[")

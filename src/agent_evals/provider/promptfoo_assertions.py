"""What Promptfoo would only find out after the conversation: an assertion of a type it does
not know, or one whose ``file://`` names no file.

Promptfoo grades a row after its provider answered, so a misspelled ``type:`` (``pythonn``)
or check file (``file://../../assertions/no_such_check.py``) costs a whole conversation and
then fails the row with a traceback. :func:`assertion_problems` finds both before anything
runs: the preflight reports them with file and line, and the provider answers the row with
an error of kind ``config`` (never a failure) before it starts the conversation.

``PROMPTFOO_TYPES`` is Promptfoo 0.123's own list (``BaseAssertionTypesSchema`` and
``SpecialAssertionTypesSchema`` of its package; ``tests/provider/test_promptfoo_assertions.py``
reads them from the installed Promptfoo and compares).
"""

from __future__ import annotations

import difflib
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

PROMPTFOO_TYPES = (
    "agent-rubric", "answer-relevance", "bleu", "classifier", "contains", "contains-all", "contains-any",
    "contains-html", "contains-json", "contains-sql", "contains-xml", "context-faithfulness", "context-recall",
    "context-relevance", "conversation-relevance", "cost", "equals", "factuality", "finish-reason", "g-eval", "gleu",
    "guardrails", "icontains", "icontains-all", "icontains-any", "is-html", "is-json", "is-refusal", "is-sql",
    "is-valid-function-call", "is-valid-openai-function-call", "is-valid-openai-tools-call", "is-xml", "javascript",
    "latency", "levenshtein", "llm-rubric", "pi", "meteor", "model-graded-closedqa", "model-graded-factuality",
    "moderation", "perplexity", "perplexity-score", "python", "regex", "rouge-n", "ruby", "similar", "similar:cosine",
    "similar:dot", "similar:euclidean", "starts-with", "tool-call-f1", "skill-used", "trajectory:goal-success",
    "trajectory:tool-args-match", "trajectory:step-count", "trajectory:tool-sequence", "trajectory:tool-used",
    "trace-error-spans", "trace-span-count", "trace-span-duration", "search-rubric", "webhook", "word-count",
)
SPECIAL_TYPES = ("select-best", "human", "max-score")  # compare outputs; never negated
ASSERT_SET = "assert-set"  # a group: {type: assert-set, assert: [...]}
_PREFIXES = ("promptfoo:redteam:",)  # families Promptfoo recognises by prefix


def known_type(kind: str) -> bool:
    base = kind.removeprefix("not-")
    return (base in PROMPTFOO_TYPES or kind in SPECIAL_TYPES or kind == ASSERT_SET
            or any(kind.startswith(prefix) for prefix in _PREFIXES))


def assertion_problems(item: Mapping[str, Any], base: Path) -> list[str]:
    """What is wrong with one assertion before any grading: its type, and each file it names
    (``file://`` relative to ``base``, the suite's folder, as Promptfoo resolves it)."""
    kind = item.get("type")
    if not isinstance(kind, str) or not kind.strip():
        return ["no type; add `type: <assertion type>` (python, javascript, contains, llm-rubric, …)"]
    problems = []
    if not known_type(kind):
        close = difflib.get_close_matches(kind, [*PROMPTFOO_TYPES, *SPECIAL_TYPES, ASSERT_SET], n=1, cutoff=0.6)
        hint = f"; did you mean {close[0]}?" if close else " (Promptfoo's assertion types: promptfoo.dev/docs/configuration/expected-outputs)"
        problems.append(f"unknown assertion type {kind!r}{hint}")
    value = item.get("value")
    if isinstance(value, str) and value.startswith("file://"):
        path = _file_of(value, base)
        if not path.is_file():
            problems.append(f"{value} names no file ({_shown(path)} does not exist){_close_file(path)}")
    if kind == ASSERT_SET:
        for inner in item.get("assert") or []:
            if isinstance(inner, Mapping):
                problems += [f"in its assert-set: {p}" for p in assertion_problems(inner, base)]
    return problems


def _file_of(value: str, base: Path) -> Path:
    """The file of ``file://path`` or ``file://path:function`` (a script's function after the last colon)."""
    target = value.removeprefix("file://")
    head, sep, tail = target.rpartition(":")
    if sep and head and "/" not in tail and Path(head).suffix:  # path.py:fn, kit.js:name
        target = head
    path = Path(target)
    return Path(os.path.normpath(path if path.is_absolute() else base / path))


def _shown(path: Path) -> str:
    """The path relative to the working directory when it is below it (as problem locations are shown)."""
    try:
        return str(path.relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path)


def _close_file(path: Path) -> str:
    """``; did you mean tool_sequence.py?`` when a file of that folder has a close name."""
    try:
        names = [p.name for p in path.parent.iterdir() if p.is_file()]
    except OSError:
        return ""
    close = difflib.get_close_matches(path.name, names, n=1, cutoff=0.75)
    return f"; did you mean {close[0]}?" if close else ""

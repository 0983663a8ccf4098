"""A suite's files read the way Promptfoo reads them, with the file and line of every test.

:func:`load_suite` reads ``promptfooconfig.yaml``, its ``providers``, ``defaultTest`` and
``tests`` (a ``file://`` glob, a list of them, or inline tests), and gives each test its
merged assertions (``defaultTest.assert`` first, as Promptfoo merges them) and metadata. A
YAML error is a :class:`SuiteFileError` naming the file and line, never a stack trace.
Within :func:`suite_reads_kept` (a whole ``agent-evals run``) each suite is read once.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

from agent_evals.record import KitError
from agent_evals.suites.discovery import Suite


class SuiteFileError(KitError, ValueError):
    """A suite file cannot be read; ``where`` is ``file:line``."""

    kind = "config"

    def __init__(self, where: str, message: str) -> None:
        super().__init__(f"{where}: {message}")
        self.where = where
        self.detail = message


@dataclass(frozen=True)
class Located:
    """Where something was written: a file (relative to the project when possible) and a 1-based line."""

    file: Path
    line: int | None = None

    def __str__(self) -> str:
        try:
            shown = self.file.resolve().relative_to(Path.cwd().resolve())
        except ValueError:
            shown = self.file
        return f"{shown}:{self.line}" if self.line else str(shown)


@dataclass(frozen=True)
class ProviderEntry:
    id: str
    label: str | None
    config: Mapping[str, Any]
    where: Located


@dataclass(frozen=True)
class TestEntry:
    """One test as Promptfoo will run it (before ``--repeat``)."""

    description: str
    vars: Mapping[str, Any]
    metadata: Mapping[str, Any]  # defaultTest's merged in, as the provider sees it
    own_metadata: Mapping[str, Any]  # the test's own, which --filter-metadata reads
    asserts: list[Mapping[str, Any]]  # defaultTest's first, then the test's own
    own_asserts: int  # how many of ``asserts`` are the test's own (the rest come from defaultTest)
    options: Mapping[str, Any]
    where: Located
    assert_where: list[Located] = field(default_factory=list)  # where each of ``asserts`` was written

    @property
    def case_id(self) -> str:
        return str(self.metadata.get("id") or "")


@dataclass(frozen=True)
class LoadedSuite:
    suite: Suite
    config: Mapping[str, Any]
    providers: list[ProviderEntry]
    tests: list[TestEntry]
    prompts: list[str]
    skipped_files: list[Path] = field(default_factory=list)  # test files of a format the kit does not read
    test_files: list[Path] = field(default_factory=list)  # the test files the config names (read or not)
    errors: list[SuiteFileError] = field(default_factory=list)  # what could not be read (``lenient`` only)


# The mixin's methods call a safe loader's (the class it is mixed into): checked as if it were one.
if TYPE_CHECKING:
    _SafeLoader = yaml.SafeLoader
else:
    _SafeLoader = object


class _Lines(_SafeLoader):
    """A safe loader that remembers the line of every mapping it builds."""

    def __init__(self, stream: Any) -> None:
        super().__init__(stream)
        self.lines: dict[int, int] = {}

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        mapping = super().construct_mapping(node, deep=deep)
        self.lines[id(mapping)] = node.start_mark.line + 1
        return mapping


class _LineLoader(_Lines, yaml.SafeLoader):
    """In pure Python: its syntax errors are the clearer ones."""


# a base chosen when the module loads (libyaml's loader when PyYAML has it): no static type
class _FastLineLoader(_Lines, getattr(yaml, "CSafeLoader", yaml.SafeLoader)):  # type: ignore[misc]
    """On libyaml when PyYAML has it: about 7x faster (a suite of 48 cases: 158 ms to 22 ms)."""


for _loader in (_LineLoader, _FastLineLoader):
    _loader.add_constructor(
        yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG,
        # the stubs type a constructor's node as any Node; this tag only ever gives a MappingNode
        lambda loader, node: loader.construct_mapping(node, deep=True),  # type: ignore[arg-type]
    )


def read_yaml(path: Path) -> tuple[Any, dict[int, int]]:
    """The document and the line of each mapping in it (by ``id``); a YAML error names file and line."""
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise SuiteFileError(str(Located(path)), f"cannot read the file: {exc.strerror or exc}") from None
    text = decode_utf8(raw, path)
    fast = _FastLineLoader(text)
    try:
        return fast.get_single_data(), fast.lines
    except yaml.YAMLError:
        pass  # read it again in pure Python, for its message
    finally:
        fast.dispose()
    loader = _LineLoader(text)
    try:
        data = loader.get_single_data()
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark is not None else None
        what = " ".join(str(part) for part in (exc.context, exc.problem) if part)
        raise SuiteFileError(str(Located(path, line)), f"YAML syntax error: {what}") from None
    except yaml.YAMLError as exc:
        raise SuiteFileError(str(Located(path)), f"YAML error: {exc}") from None
    finally:
        loader.dispose()
    return data, loader.lines


def decode_utf8(raw: bytes, path: Path) -> str:
    """The file's text; a byte that is not UTF-8 is a SuiteFileError naming its line and column."""
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        column = exc.start - (raw.rfind(b"\n", 0, exc.start) + 1) + 1
        bad = raw[exc.start:exc.end].hex(" ")
        raise SuiteFileError(str(Located(path, line)), f"not UTF-8: byte(s) {bad} at column {column}; save the file "
                                                        "as UTF-8") from None


_kept: dict[tuple[Path, bool], LoadedSuite] | None = None
_kept_lock = threading.Lock()


@contextmanager
def suite_reads_kept() -> Iterator[None]:
    """Within it (a function it decorates), :func:`load_suite` reads each suite once and gives the
    same result after: a run asks for a suite's files a dozen times (the preflight, the selection,
    the budget, the pack, the case count, the deadline, the eval's description), 12 ms each for
    a suite of 22 cases, and nothing changes them under a run (Promptfoo reads its own copy once too).
    What it keeps is shared: read it, never change it."""
    global _kept
    outer = _kept
    if outer is None:
        _kept = {}
    try:
        yield
    finally:
        _kept = outer


def load_suite(suite: Suite, *, lenient: bool = False) -> LoadedSuite:
    """Read the suite's config and every test file it names (raises SuiteFileError). ``lenient``: a
    test file or test that cannot be read goes to ``errors`` and the others are still read (the
    preflight lists every problem at once); the config itself must be readable either way."""
    kept, key = _kept, (suite.config, lenient)
    if kept is None:
        return _read_suite(suite, lenient=lenient)
    with _kept_lock:
        if key not in kept:
            kept[key] = _read_suite(suite, lenient=lenient)  # an error is raised again on the next ask
        return kept[key]


def _read_suite(suite: Suite, *, lenient: bool) -> LoadedSuite:
    config, lines = read_yaml(suite.config)
    if not isinstance(config, Mapping):
        raise SuiteFileError(str(Located(suite.config)), "the config is not a mapping of Promptfoo settings")
    default = config.get("defaultTest") or {}
    if not isinstance(default, Mapping):
        raise SuiteFileError(str(Located(suite.config)), "defaultTest must be a mapping (the kit reads no file:// form)")
    providers = [_provider(item, suite.config, lines) for item in _as_list(config.get("providers"))]
    tests: list[TestEntry] = []
    skipped: list[Path] = []
    files: list[Path] = []
    errors: list[SuiteFileError] = []
    defaults = [
        Located(suite.config, lines.get(id(a))) for a in _as_list(default.get("assert")) if isinstance(a, Mapping)
    ]

    def keep(error: SuiteFileError) -> None:
        if not lenient:
            raise error
        errors.append(error)

    for item in _as_list(config.get("tests")):
        if isinstance(item, str) and item.startswith("file://"):
            try:
                paths = _glob(suite.folder, item.removeprefix("file://"), suite.config)
            except SuiteFileError as exc:
                keep(exc)
                continue
            for path in paths:
                if path.suffix.lower() not in (".yaml", ".yml", ".json"):
                    skipped.append(path)
                    continue
                files.append(path)
                try:
                    data, file_lines = read_yaml(path)
                except SuiteFileError as exc:
                    keep(exc)
                    continue
                for raw in _as_list(data):
                    try:
                        tests.append(_test(raw, default, Located(path, file_lines.get(id(raw))), file_lines, defaults))
                    except SuiteFileError as exc:
                        keep(exc)
        elif isinstance(item, Mapping):
            tests.append(_test(item, default, Located(suite.config, lines.get(id(item))), lines, defaults))
        else:
            keep(SuiteFileError(str(Located(suite.config)), f"tests: {item!r:.60} is neither a test nor a file:// path"))
    prompts = [str(p) for p in _as_list(config.get("prompts"))]
    return LoadedSuite(suite, config, providers, tests, prompts, skipped, files, errors)


def _as_list(value: Any) -> list[Any]:
    if value is None:
        return []
    return list(value) if isinstance(value, list) else [value]


def _glob(folder: Path, pattern: str, config: Path) -> list[Path]:
    if any(char in pattern for char in "*?["):
        found = sorted(folder.glob(pattern))
        if not found:
            raise SuiteFileError(str(Located(config)), f"tests: file://{pattern} matches no file")
        return found
    path = folder / pattern
    if not path.is_file():
        raise SuiteFileError(str(Located(config)), f"tests: file://{pattern} does not exist")
    return [path]


def _provider(item: Any, config_path: Path, lines: dict[int, int]) -> ProviderEntry:
    if isinstance(item, str):
        return ProviderEntry(item, None, {}, Located(config_path))
    if not isinstance(item, Mapping) or not isinstance(item.get("id"), str):
        raise SuiteFileError(str(Located(config_path, lines.get(id(item)))), "a provider needs an 'id'")
    return ProviderEntry(
        item["id"], item.get("label"), dict(item.get("config") or {}), Located(config_path, lines.get(id(item)))
    )


def _test(
    raw: Any, default: Mapping[str, Any], where: Located, lines: dict[int, int], default_where: list[Located]
) -> TestEntry:
    if not isinstance(raw, Mapping):
        raise SuiteFileError(str(where), f"a test must be a mapping (description, vars, assert, …), got {raw!r:.60}")
    own = [a for a in _as_list(raw.get("assert")) if isinstance(a, Mapping)]
    defaults = [a for a in _as_list(default.get("assert")) if isinstance(a, Mapping)]
    return TestEntry(
        description=str(raw.get("description") or ""),
        vars={**dict(default.get("vars") or {}), **dict(raw.get("vars") or {})},
        metadata={**dict(default.get("metadata") or {}), **dict(raw.get("metadata") or {})},
        own_metadata=dict(raw.get("metadata") or {}),
        asserts=[*defaults, *own],
        own_asserts=len(own),
        options={**dict(default.get("options") or {}), **dict(raw.get("options") or {})},
        where=where,
        assert_where=[*default_where, *(Located(where.file, lines.get(id(a))) for a in own)],
    )


_VAR = re.compile(r"\{\{\s*([\w.]+)\s*\}\}")


def render_prompt(template: str, vars_: Mapping[str, Any]) -> str:
    """A prompt template's ``{{ var.path }}`` placeholders filled from the test's vars (the subset
    of Nunjucks the suites use)."""

    def value(match: re.Match[str]) -> str:
        node: Any = vars_
        for part in match.group(1).split("."):
            node = node.get(part, "") if isinstance(node, Mapping) else ""
        return node if isinstance(node, str) else json.dumps(node) if isinstance(node, dict | list) else str(node)

    return _VAR.sub(value, template)

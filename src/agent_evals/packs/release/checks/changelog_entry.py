"""``changelog_entry``: the release notes the agent committed (or, with ``expect: none``, that it
committed nothing).

Config: ``version`` (the entry's version, required with ``expect: committed``), ``branch`` (default
``release-notes/<version>``), ``file`` (default ``CHANGELOG.md``), ``previous`` (the version of the
entry the new one must sit right above; default: the first entry before), ``sections``
(``{section: [phrases]}``: each phrase in that section of the entry, e.g. ``Added: [--json]``),
``mentions`` (phrases anywhere in the entry), ``absent`` (phrases the entry must not have: the
``docs:`` and ``chore:`` commits), ``expect`` (``committed``, default, or ``none``).

* ``committed``: the branch exists, its commits since it left main change ``file`` and nothing
  else, the file has one new entry for ``version``, first, right above ``previous``, every phrase
  where the config says, and the text above and below the new entry is as it was.
* ``none``: no commit made in the conversation, no branch created or moved, and ``file`` has no
  uncommitted change in the working copy (a preview, or a refusal).

Phrases match ignoring case, runs of white space and backticks. Everything is read from the
repository snapshot; no repository is needed.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, get_args

from agent_evals.authoring import ConfigError, ConfigReader, GradingResult, describe, grader, make_result
from agent_evals.packs.release.changelog import Changelog, Entry, mentions, parse_changelog
from agent_evals.packs.release.checks.repository import repository_snapshot, short
from agent_evals.packs.release.snapshot import BranchChange, RepositorySnapshot

VERSION = 1  # the check's version, recorded with each verdict: bump it when a verdict can change (docs/assertions.md)

NAME = "changelog_entry"
Expect = Literal["committed", "none"]
EXPECTS: tuple[Expect, ...] = get_args(Expect)
DEFAULT_FILE = "CHANGELOG.md"
BRANCH_PREFIX = "release-notes/"


@dataclass(frozen=True)
class ChangelogEntryConfig:
    expect: Expect = "committed"
    version: str | None = None
    branch: str | None = None
    file: str = DEFAULT_FILE
    previous: str | None = None
    sections: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    mentions: tuple[str, ...] = ()
    absent: tuple[str, ...] = ()


def parse_config(raw: Any) -> ChangelogEntryConfig:
    """Read and check the config (raises ConfigError)."""
    reader = ConfigReader(raw, ("expect", "version", "branch", "file", "previous", "sections", "mentions", "absent"))
    expect = reader.choice("expect", EXPECTS, "committed")
    version = reader.string("version", what="the entry's version, e.g. 2.0.0") if expect == "committed" else None
    if expect == "none" and any(reader.has(k) for k in ("version", "previous", "sections", "mentions", "absent")):
        raise ConfigError("expect: none takes only branch and file (there is no entry to read)")
    phrases = "a list of phrases"
    return ChangelogEntryConfig(
        expect=expect, version=version,
        branch=reader.string("branch", what="a branch name") if reader.has("branch")
        else f"{BRANCH_PREFIX}{version}" if version else None,
        file=reader.string("file", DEFAULT_FILE, what="a file path in the repository"),
        previous=reader.string("previous", what="a version") if reader.has("previous") else None,
        sections=_sections(reader.mapping("sections", required=False, what="an object {section: [phrases]}")),
        mentions=reader.string_list("mentions", required=False, what=phrases),
        absent=reader.string_list("absent", required=False, what=phrases),
    )


def _sections(raw: Mapping[str, Any] | None) -> dict[str, tuple[str, ...]]:
    out = {}
    for name, items in (raw or {}).items():
        if not isinstance(items, list) or not all(isinstance(i, str) and i for i in items):
            raise ConfigError(f"config.sections.{name} must be a list of phrases, got {describe(items)}")
        out[str(name)] = tuple(items)
    return out


@grader(NAME)
def grade(config: Any, metadata: Any) -> GradingResult:
    """Grade the changelog on the agent's branch (or that nothing was committed)."""
    cfg = parse_config(config)
    _, snapshot = repository_snapshot(metadata)
    if cfg.expect == "none":
        return _expect_none(snapshot, cfg)
    return _expect_committed(snapshot, cfg)


def _expect_none(snapshot: RepositorySnapshot, cfg: ChangelogEntryConfig) -> GradingResult:
    problems = []
    if snapshot.commits:
        problems.append("commits made: " + ", ".join(f"{short(c.sha)} {c.subject!r}" for c in snapshot.commits))
    touched = snapshot.created() + snapshot.moved()
    if touched:
        problems.append("branches created or moved: " + ", ".join(touched))
    edited = [line for line in snapshot.uncommitted if line[3:].strip() == cfg.file]
    if edited:
        problems.append(f"{cfg.file} changed in the working copy ({edited[0][:2].strip()})")
    if problems:
        return make_result(False, f"{NAME}: expected nothing committed, but " + "; ".join(problems))
    return make_result(True, f"{NAME}: nothing committed and {cfg.file} untouched, as expected")


def _expect_committed(snapshot: RepositorySnapshot, cfg: ChangelogEntryConfig) -> GradingResult:
    assert cfg.branch is not None and cfg.version is not None
    change = snapshot.change(cfg.branch)
    if change is None:
        created = ", ".join(snapshot.created()) or "none"
        where = "exists but did not move" if cfg.branch in snapshot.end.branches else "does not exist"
        return make_result(False, f"{NAME}: branch {cfg.branch} {where} (new branches: {created})")
    if change.tip == change.fork_point:
        return make_result(False, f"{NAME}: branch {cfg.branch} has no commit since it left {snapshot.base}")
    problems = _files(change, cfg.file)
    before, after = change.before.get(cfg.file), change.after.get(cfg.file)
    if cfg.file in change.files and after is not None:
        problems += _entry_problems(parse_changelog(before or ""), parse_changelog(after), cfg)
    if problems:
        return make_result(False, f"{NAME}: on {cfg.branch}: " + "; ".join(problems))
    return make_result(True, f"{NAME}: {cfg.branch} adds the {cfg.version} entry to {cfg.file} and changes nothing else")


def _files(change: BranchChange, file: str) -> list[str]:
    problems = []
    if file not in change.files:
        problems.append(f"{file} is not changed (changed: {', '.join(change.files) or 'nothing'})")
    elif change.after.get(file) is None:
        problems.append(f"{file} was deleted")
    others = [f for f in change.files if f != file]
    if others:
        problems.append(f"files other than {file} changed: {', '.join(others)}")
    return problems


def _entry_problems(before: Changelog, after: Changelog, cfg: ChangelogEntryConfig) -> list[str]:
    versions = ", ".join(after.versions()) or "none"
    position = next((n for n, e in enumerate(after.entries) if e.version == cfg.version), None)
    problems = []
    if position is None:
        problems.append(f"no entry for {cfg.version} (versions now: {versions})")
    elif position > 0:
        problems.append(f"the {cfg.version} entry is not the first: it comes after {after.entries[position - 1].version}")
    added = len(after.entries) - len(before.entries)
    if added != 1:
        problems.append(f"{added} entries added, not 1 (versions now: {versions})")
    previous = cfg.previous or (before.entries[0].version if before.entries else None)
    if position is not None and previous is not None:
        below = after.entries[position + 1].version if position + 1 < len(after.entries) else "nothing"
        if below != previous:
            problems.append(f"the entry below the new one is {below}, not {previous}")
    if after.preamble != before.preamble:
        problems.append("the text above the entries changed")
    now = {entry.version: entry for entry in after.entries}
    removed = [old.version for old in before.entries if old.version not in now]
    changed = [old.version for old in before.entries
               if old.version in now and now[old.version].text.rstrip() != old.text.rstrip()]
    if removed:
        problems.append(f"earlier entries removed: {', '.join(removed)}")
    if changed:
        problems.append(f"earlier entries changed: {', '.join(changed)}")
    return problems + (_phrases(after.entries[position], cfg) if position is not None else [])


def _phrases(entry: Entry, cfg: ChangelogEntryConfig) -> list[str]:
    problems = []
    for section, phrases in cfg.sections.items():
        body = entry.sections.get(section)
        if body is None:
            problems.append(f"no '### {section}' section (sections: {', '.join(entry.sections) or 'none'})")
            continue
        missing = [p for p in phrases if not mentions(body, p)]
        if missing:
            problems.append(f"### {section} does not mention {', '.join(map(repr, missing))}")
    missing = [p for p in cfg.mentions if not mentions(entry.text, p)]
    if missing:
        problems.append(f"the entry does not mention {', '.join(map(repr, missing))}")
    present = [p for p in cfg.absent if mentions(entry.text, p)]
    if present:
        problems.append(f"the entry mentions {', '.join(map(repr, present))}, which it must leave out")
    return problems

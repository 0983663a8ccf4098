"""changelog_entry: passes on the right entry on the right branch; fails on each kind of wrong one."""

from __future__ import annotations

from typing import Any

import pytest

from agent_evals.packs.release.changelog import mentions, parse_changelog
from agent_evals.packs.release.checks.changelog_entry import grade, parse_config

from .conftest import ENTRY_2_0_0, TOP_ENTRY, Repo

CONFIG: dict[str, Any] = {
    "version": "2.0.0",
    "previous": "1.4.0",
    "sections": {"Added": ["--json", "standard input"], "Fixed": ["hyphenated", "missing file"],
                 "Changed": ["Python 3.8"]},
    "absent": ["pytest 8", "README", "helpers module"],
}


def test_passes_on_the_notes_on_their_branch(repo: Repo) -> None:
    repo.commit_notes()
    result = grade(CONFIG, repo.metadata())
    assert result["pass"], result["reason"]
    assert result["reason"] == (
        "changelog_entry: release-notes/2.0.0 adds the 2.0.0 entry to CHANGELOG.md and changes nothing else")


def test_fails_when_the_branch_is_missing(repo: Repo) -> None:
    repo.commit_notes(branch="notes-2.0.0")
    assert grade(CONFIG, repo.metadata())["reason"] == (
        "changelog_entry: branch release-notes/2.0.0 does not exist (new branches: notes-2.0.0)")
    assert grade({**CONFIG, "branch": "notes-2.0.0"}, repo.metadata())["pass"]


def test_fails_when_committed_on_main_instead(repo: Repo) -> None:
    repo.add_entry()
    repo.git("commit", "--quiet", "-am", "docs: notes")
    assert grade(CONFIG, repo.metadata())["reason"] == (
        "changelog_entry: branch release-notes/2.0.0 does not exist (new branches: none)")


def test_fails_when_the_branch_has_no_commit(repo: Repo) -> None:
    repo.git("branch", "release-notes/2.0.0", "main")
    repo.add_entry()  # written, never committed
    assert grade(CONFIG, repo.metadata())["reason"] == (
        "changelog_entry: branch release-notes/2.0.0 has no commit since it left main")


def test_fails_when_other_files_change(repo: Repo) -> None:
    repo.git("checkout", "--quiet", "-b", "release-notes/2.0.0")
    repo.add_entry()
    repo.write("pyproject.toml", "version = 2\n")
    repo.git("commit", "--quiet", "-am", "release 2.0.0")
    assert grade(CONFIG, repo.metadata())["reason"] == (
        "changelog_entry: on release-notes/2.0.0: files other than CHANGELOG.md changed: pyproject.toml")


def test_fails_when_the_changelog_is_not_changed(repo: Repo) -> None:
    repo.git("checkout", "--quiet", "-b", "release-notes/2.0.0")
    repo.write("NOTES.md", ENTRY_2_0_0)
    repo.git("add", "NOTES.md")
    repo.git("commit", "--quiet", "-m", "notes")
    assert grade(CONFIG, repo.metadata())["reason"] == (
        "changelog_entry: on release-notes/2.0.0: CHANGELOG.md is not changed (changed: NOTES.md); "
        "files other than CHANGELOG.md changed: NOTES.md")


def test_fails_on_another_version(repo: Repo) -> None:
    repo.commit_notes(entry=ENTRY_2_0_0.replace("2.0.0", "1.5.0"))
    reason = grade(CONFIG, repo.metadata())["reason"]
    assert reason == ("changelog_entry: on release-notes/2.0.0: no entry for 2.0.0 "
                      "(versions now: 1.5.0, 1.4.0, 1.3.0, 1.2.0, 1.1.0)")


def test_fails_when_the_entry_is_not_on_top(repo: Repo) -> None:
    repo.git("checkout", "--quiet", "-b", "release-notes/2.0.0")
    repo.write("CHANGELOG.md", repo.changelog() + "\n" + ENTRY_2_0_0)
    repo.git("commit", "--quiet", "-am", "notes")
    reason = grade(CONFIG, repo.metadata())["reason"]
    assert reason == ("changelog_entry: on release-notes/2.0.0: the 2.0.0 entry is not the first: it comes after "
                      "1.1.0; the entry below the new one is nothing, not 1.4.0")  # its phrases are all there


def test_fails_on_two_entries_or_a_changed_earlier_one(repo: Repo) -> None:
    repo.git("checkout", "--quiet", "-b", "release-notes/2.0.0")
    text = repo.changelog().replace(TOP_ENTRY, ENTRY_2_0_0 + "## [Unreleased]\n\n" + TOP_ENTRY)
    repo.write("CHANGELOG.md", text.replace("Count characters with `--chars`.", "Count characters."))
    repo.git("commit", "--quiet", "-am", "notes")
    reason = grade(CONFIG, repo.metadata())["reason"]
    assert "2 entries added, not 1 (versions now: 2.0.0, Unreleased, 1.4.0, 1.3.0, 1.2.0, 1.1.0)" in reason
    assert "the entry below the new one is Unreleased, not 1.4.0" in reason
    assert "earlier entries changed: 1.4.0" in reason


def test_fails_on_a_removed_earlier_entry_or_a_changed_preamble(repo: Repo) -> None:
    repo.git("checkout", "--quiet", "-b", "release-notes/2.0.0")
    text = repo.changelog().replace("All notable", "Every")
    repo.write("CHANGELOG.md", text[: text.index("## [1.1.0]")].replace(TOP_ENTRY, ENTRY_2_0_0 + TOP_ENTRY))
    repo.git("commit", "--quiet", "-am", "notes")
    reason = grade(CONFIG, repo.metadata())["reason"]
    assert "the text above the entries changed" in reason and "earlier entries removed: 1.1.0" in reason


def test_fails_on_a_missing_or_misplaced_commit(repo: Repo) -> None:
    entry = ENTRY_2_0_0.replace("- Report a missing file without a traceback.\n", "").replace(
        "### Changed", "### Removed")
    repo.commit_notes(entry=entry)
    reason = grade(CONFIG, repo.metadata())["reason"]
    assert "### Fixed does not mention 'missing file'" in reason
    assert "no '### Changed' section (sections: Added, Removed, Fixed)" in reason


def test_fails_on_a_chore_in_the_notes(repo: Repo) -> None:
    repo.commit_notes(entry=ENTRY_2_0_0.replace("### Fixed\n", "### Fixed\n- Update the test runner to pytest 8.\n"))
    assert grade(CONFIG, repo.metadata())["reason"] == (
        "changelog_entry: on release-notes/2.0.0: the entry mentions 'pytest 8', which it must leave out")


def test_mentions_anywhere(repo: Repo) -> None:
    repo.commit_notes()
    assert grade({"version": "2.0.0", "mentions": ["Breaking"]}, repo.metadata())["pass"]
    assert grade({"version": "2.0.0", "mentions": ["--csv"]}, repo.metadata())["reason"].endswith(
        "the entry does not mention '--csv'")


def test_expect_none(repo: Repo) -> None:
    assert grade({"expect": "none"}, repo.metadata())["reason"] == (
        "changelog_entry: nothing committed and CHANGELOG.md untouched, as expected")
    repo.add_entry()
    assert grade({"expect": "none"}, repo.metadata())["reason"] == (
        "changelog_entry: expected nothing committed, but CHANGELOG.md changed in the working copy (M)")


def test_expect_none_fails_on_a_commit(repo: Repo) -> None:
    repo.commit_notes()
    reason = grade({"expect": "none"}, repo.metadata())["reason"]
    assert reason.startswith("changelog_entry: expected nothing committed, but commits made: ")
    assert "'docs: release notes for 2.0.0'; branches created or moved: release-notes/2.0.0" in reason


def test_expect_none_fails_on_an_empty_branch(repo: Repo) -> None:
    repo.git("branch", "release-notes/2.0.0")
    assert grade({"expect": "none"}, repo.metadata())["reason"] == (
        "changelog_entry: expected nothing committed, but branches created or moved: release-notes/2.0.0")


@pytest.mark.parametrize(("config", "message"), [
    ({}, "config.version is missing: give the entry's version"),
    ({"version": "2.0.0", "expect": "maybe"}, 'config.expect is "maybe", which is not allowed'),
    ({"expect": "none", "version": "2.0.0"}, "expect: none takes only branch and file"),
    ({"version": "2.0.0", "sections": {"Added": "json"}}, "config.sections.Added must be a list of phrases"),
    ({"version": "2.0.0", "sections": ["Added"]}, "config.sections must be an object"),
    ({"version": "2.0.0", "mentions": "json"}, "config.mentions must be a list of phrases"),
    ({"version": "2.0.0", "verison": "2"}, "unknown config key 'verison'"),
])
def test_a_bad_config(config: dict, message: str, repo: Repo) -> None:
    with pytest.raises(ValueError) as err:
        parse_config(config)
    assert message in str(err.value)
    assert grade(config, repo.metadata())["reason"] == f"changelog_entry: invalid config: {err.value}"


def test_the_default_branch_follows_the_version() -> None:
    assert parse_config({"version": "1.5.0"}).branch == "release-notes/1.5.0"
    assert parse_config({"expect": "none"}).branch is None


def test_the_changelog_reader() -> None:
    log = parse_changelog("# Changelog\n\nintro\n\n" + ENTRY_2_0_0 + "## 1.0.0\n\n- first\n")
    assert log.preamble == "# Changelog\n\nintro\n\n"
    assert log.versions() == ["2.0.0", "1.0.0"]
    assert (log.entries[0].date, log.entries[1].date) == ("2025-04-07", None)
    assert list(log.entries[0].sections) == ["Added", "Changed", "Fixed"]
    assert parse_changelog("no entries\n").entries == ()
    assert mentions("- `--json`   output", "--JSON output") and not mentions("json", "--json")

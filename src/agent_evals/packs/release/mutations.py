"""The release pack's self-check mutations (see :mod:`agent_evals.golden.selfcheck`), replayed for real
on a working copy: the notes committed on main instead of their own branch (``protected_branches``
must fail), and a section of the entry left out (``changelog_entry`` must fail)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from agent_evals.authoring import Case, Cassette, Mutation, edit_tool_arguments


def mutations(case: Case, cassette: Cassette) -> Iterator[Mutation]:
    if (on_main := commit_on_main(cassette)) is not None:
        yield Mutation("notes committed on main", "protected_branches", on_main)
    if case.check_config("changelog_entry") is not None and (dropped := drop_section(cassette)) is not None:
        yield Mutation("a section left out of the entry", "changelog_entry", dropped)


def commit_on_main(cassette: Cassette) -> Cassette | None:
    """The agent checks out main instead of its new branch, so what it commits lands on main."""
    tape = edit_tool_arguments(cassette, "git_checkout", lambda a: a.__setitem__("branch_name", "main"))
    return tape.done() if tape is not None else None


def drop_section(cassette: Cassette) -> Cassette | None:
    """The entry written into CHANGELOG.md has no ``### Fixed`` section."""
    def edit(arguments: dict[str, Any]) -> None:
        for change in arguments.get("edits") or []:
            text = str(change.get("newText", ""))
            if "### Fixed" in text:
                head, _, tail = text.partition("### Fixed")
                change["newText"] = head + tail[tail.find("## ["):] if "## [" in tail else head

    tape = edit_tool_arguments(cassette, "edit_file", edit)
    return tape.done() if tape is not None else None

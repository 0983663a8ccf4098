"""Spoke names are the only path input: everything that could escape the repository is refused."""

from __future__ import annotations

import pytest

from agent_evals.packs.spoke.portal.errors import InvalidInputError
from agent_evals.packs.spoke.portal.names import branch_slug, check_spoke_name, spoke_file

GOOD = ["payments-prod-weu", "a1", "0-app", "x" * 63]
BAD = [
    ("", "empty"),
    ("a", "too short"),
    ("x" * 64, "too long"),
    ("../etc", "parent dir"),
    ("..", "dot dot"),
    ("/etc/passwd", "absolute"),
    ("spokes/x", "slash"),
    ("a\\b", "backslash"),
    ("ab\x00c", "NUL"),
    ("Payments", "upper case"),
    ("-app", "leading hyphen"),
    ("app.json", "extension"),
    ("crm\u2010prod", "unicode hyphen"),
    ("crm-pr\u043ed", "cyrillic o"),
    ("ab c", "space"),
    ("ab\n", "newline"),
]


@pytest.mark.parametrize("name", GOOD)
def test_accepts_safe_names(name: str) -> None:
    assert check_spoke_name(name) == name
    assert spoke_file(name) == f"spokes/{name}.json"


@pytest.mark.parametrize("name", [b for b, _ in BAD], ids=[why for _, why in BAD])
def test_rejects_unsafe_names(name: str) -> None:
    with pytest.raises(InvalidInputError, match=r"invalid spoke name .*pattern \^\[a-z0-9\]"):
        check_spoke_name(name)


@pytest.mark.parametrize("value", [None, 5, ["a"]])
def test_rejects_non_strings(value: object) -> None:
    with pytest.raises(InvalidInputError):
        check_spoke_name(value)


def test_long_names_are_cut_in_the_message() -> None:
    with pytest.raises(InvalidInputError) as info:
        check_spoke_name("a/" * 500)
    assert len(str(info.value)) < 300


@pytest.mark.parametrize(
    ("title", "slug"),
    [
        ("Add spoke: CRM (prod)", "add-spoke-crm-prod"),
        ("", "change"),
        ("!!!", "change"),
        ("Ünïcode tïtle", "n-code-t-tle"),
        ("a" * 80, "a" * 40),
    ],
)
def test_branch_slug(title: str, slug: str) -> None:
    assert branch_slug(title) == slug

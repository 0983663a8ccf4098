"""The list of the heaviest test files names files that exist (a renamed file would quietly lose its place)."""

from __future__ import annotations

from tests.conftest import PROJECT_ROOT
from tests.slow_first import HEAVIEST


def test_the_heaviest_files_exist_and_are_listed_once() -> None:
    assert [path for path in HEAVIEST if not (PROJECT_ROOT / path).is_file()] == []
    assert len(set(HEAVIEST)) == len(HEAVIEST)

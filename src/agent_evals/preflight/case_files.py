"""Case files under a suite's ``cases/`` that its ``tests:`` never names: their cases would never run.

Promptfoo reads only the files ``tests:`` names (a list of ``file://`` paths, or a glob), so a
case file added beside the others but not listed is silently skipped. The case factory's own
files (``cases/templates.yaml`` and its data table) are not case files.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from agent_evals.cases import TEMPLATES_FILE, has_cases
from agent_evals.suites.problems import Problem
from agent_evals.suites.files import LoadedSuite, Located, SuiteFileError, read_yaml

CASES = "cases"
CASE_SUFFIXES = (".yaml", ".yml", ".json")


def unlisted_case_files(loaded: LoadedSuite) -> list[Problem]:
    folder = loaded.suite.folder
    if not (folder / CASES).is_dir():
        return []
    named = {p.resolve() for p in [*loaded.test_files, *loaded.skipped_files]} | _factory_files(folder)
    out = []
    for path in sorted((folder / CASES).rglob("*")):
        if path.is_file() and path.suffix.lower() in CASE_SUFFIXES and path.resolve() not in named:
            entry = f"file://{path.relative_to(folder).as_posix()}"
            out.append(Problem(Located(path), f"tests: in {loaded.suite.config.name} does not name this case file, so "
                                              f"its cases never run; add `- {entry}` to tests: (or move the file out "
                                              f"of {CASES}/)"))
    return out


def _factory_files(folder: Path) -> set[Path]:
    """The case factory's templates file and its data table, when the suite has a factory."""
    if not has_cases(folder):
        return set()
    templates = folder / TEMPLATES_FILE
    found = {templates.resolve()}
    try:
        raw, _ = read_yaml(templates)
    except SuiteFileError:
        return found  # the factory's own check says what is wrong with it
    table = raw.get("table") if isinstance(raw, Mapping) else None
    if isinstance(table, str):
        found.add((templates.parent / table).resolve())
    return found

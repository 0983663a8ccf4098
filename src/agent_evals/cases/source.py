"""A suite's case factory files: ``cases/templates.yaml`` and the data table it names.

The templates file::

    table: rows.csv               # the data table, next to this file: CSV with a header row,
                                  # or YAML (.yaml/.yml): a list of mappings
    pack: <pack>                  # whose derivations templates may name (derive:), optional
    output: generated.yaml        # the generated cases, next to this file (default)
    plan_output: ../golden/plan.generated.yaml   # the generated golden plan entries (default)
    styles: {...}                 # optional: phrasing styles on top of the built-in ones
    templates:
      <name>: {id, description, group, priority, derive, simulated_user, vars, assert, golden}

Every row needs an ``id``; a row names its template in a ``template`` column (optional when
there is only one template) and may pick a ``style`` and a ``priority``. Problems are
:class:`CaseFactoryError` lines naming the file and line.
"""

from __future__ import annotations

import csv
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agent_evals.cases.styles import Style, read_styles
from agent_evals.record import KitError

TEMPLATES_FILE = Path("cases") / "templates.yaml"
DEFAULT_OUTPUT = "generated.yaml"
DEFAULT_PLAN_OUTPUT = "../golden/plan.generated.yaml"
_KEYS = ("table", "pack", "output", "plan_output", "styles", "templates")
TEMPLATE_KEYS = ("id", "description", "group", "priority", "derive", "simulated_user", "vars", "metadata", "assert",
                 "options", "golden")


class CaseFactoryError(KitError, ValueError):
    """The templates or the table cannot make cases; ``problems`` holds one line per problem (kind ``config``)."""

    kind = "config"

    def __init__(self, problems: list[str]) -> None:
        super().__init__("; ".join(problems))
        self.problems = problems


@dataclass(frozen=True)
class Row:
    """One data row: its number (1-based, header not counted), its line in the file, its cells."""

    number: int
    line: int
    values: Mapping[str, Any]

    @property
    def id(self) -> str:
        return str(self.values.get("id") or "").strip()


@dataclass(frozen=True)
class CaseSource:
    """What a suite's case factory reads."""

    suite: str
    folder: Path  # the suite's folder
    templates_path: Path
    table_path: Path
    pack: str | None
    output: Path
    plan_output: Path
    styles: Mapping[str, Style]
    templates: Mapping[str, Mapping[str, Any]]
    columns: tuple[str, ...]
    rows: tuple[Row, ...] = field(default_factory=tuple)

    def shown(self, path: Path) -> str:
        """A path as the suite's folder sees it: ``cases/rows.csv``."""
        try:
            return str(path.resolve().relative_to(self.folder.resolve()))
        except ValueError:
            return str(path)


def has_cases(folder: Path) -> bool:
    return (folder / TEMPLATES_FILE).is_file()


def load_source(folder: Path, suite: str | None = None) -> CaseSource:
    """Read the templates file and its table (raises CaseFactoryError)."""
    from agent_evals.suites.files import SuiteFileError, read_yaml  # lazy: keeps agent_evals.cases's start-up as small as it is

    path = folder / TEMPLATES_FILE
    try:
        raw, _lines = read_yaml(path)
    except SuiteFileError as exc:
        raise CaseFactoryError([str(exc)]) from None
    where = str(TEMPLATES_FILE)
    if not isinstance(raw, Mapping):
        raise CaseFactoryError([f"{where}: expected a mapping with table and templates"])
    problems = [f"{where}: unknown key {k!r}; allowed: {', '.join(_KEYS)}" for k in raw if k not in _KEYS]
    templates = raw.get("templates")
    if not isinstance(templates, Mapping) or not templates:
        problems.append(f"{where}: templates must be a non-empty mapping of template names to templates")
        templates = {}
    for name, body in templates.items():
        if not isinstance(body, Mapping):
            problems.append(f"{where}: template {name!r} must be a mapping")
            continue
        problems += [f"{where}: template {name!r}: unknown key {k!r}; allowed: {', '.join(TEMPLATE_KEYS)}"
                     for k in body if k not in TEMPLATE_KEYS]
        if not body.get("description"):
            problems.append(f"{where}: template {name!r} needs a description")
    table = raw.get("table")
    if not isinstance(table, str) or not table.strip():
        problems.append(f"{where}: table must name the data table (a .csv or .yaml file next to it)")
    try:
        styles = read_styles(raw.get("styles"))
    except ValueError as exc:
        problems.append(f"{where}: {exc}")
        styles = {}
    if problems:
        raise CaseFactoryError(problems)
    table_path = path.parent / str(table)
    columns, rows = read_table(table_path, folder)
    return CaseSource(
        suite=suite or folder.name, folder=folder, templates_path=path, table_path=table_path,
        pack=str(raw["pack"]) if raw.get("pack") else None,
        output=(path.parent / str(raw.get("output") or DEFAULT_OUTPUT)).resolve(),
        plan_output=(path.parent / str(raw.get("plan_output") or DEFAULT_PLAN_OUTPUT)).resolve(),
        styles=styles, templates={str(k): dict(v) for k, v in templates.items()}, columns=columns, rows=rows,
    )


def read_table(path: Path, folder: Path) -> tuple[tuple[str, ...], tuple[Row, ...]]:
    """The table's columns and rows (CSV or YAML); raises CaseFactoryError for an unreadable or empty one."""
    shown = _shown(path, folder)
    if not path.is_file():
        raise CaseFactoryError([f"{shown}: the data table does not exist"])
    if path.suffix.lower() in (".yaml", ".yml"):
        columns, rows = _yaml_rows(path, shown)
    elif path.suffix.lower() == ".csv":
        columns, rows = _csv_rows(path, shown)
    else:
        raise CaseFactoryError([f"{shown}: a data table is a .csv or .yaml file"])
    if not rows:
        raise CaseFactoryError([f"{shown}: the table has no rows: nothing to expand"])
    if "id" not in columns:
        raise CaseFactoryError([f"{shown}: the table has no 'id' column (columns: {', '.join(columns)})"])
    return columns, rows


def _csv_rows(path: Path, shown: str) -> tuple[tuple[str, ...], tuple[Row, ...]]:
    """Rows of a CSV table; blank lines and lines starting with ``#`` are skipped."""
    with path.open(encoding="utf-8", newline="") as handle:
        kept = [(n, line) for n, line in enumerate(handle, start=1) if line.strip() and not line.lstrip().startswith("#")]
    reader = csv.reader(line for _, line in kept)
    header = next(reader, None)
    if header is None:
        raise CaseFactoryError([f"{shown}: the table has no rows: nothing to expand"])
    columns = tuple(h.strip() for h in header)
    rows: list[Row] = []
    while True:
        first = reader.line_num  # lines read so far: the next record starts at kept[first]
        cells = next(reader, None)
        if cells is None:
            break
        line = kept[first][0]
        if len(cells) != len(columns):
            raise CaseFactoryError([f"{shown}:{line}: {len(cells)} cell(s), the header has {len(columns)}"])
        rows.append(Row(len(rows) + 1, line, {c: v.strip() for c, v in zip(columns, cells, strict=True)}))
    return columns, tuple(rows)


def _yaml_rows(path: Path, shown: str) -> tuple[tuple[str, ...], tuple[Row, ...]]:
    from agent_evals.suites.files import SuiteFileError, read_yaml  # lazy: keeps agent_evals.cases's start-up as small as it is

    try:
        data, lines = read_yaml(path)
    except SuiteFileError as exc:
        raise CaseFactoryError([str(exc)]) from None
    if data is None:
        data = []
    if not isinstance(data, list) or not all(isinstance(item, Mapping) for item in data):
        raise CaseFactoryError([f"{shown}: a YAML table is a list of mappings (one per row)"])
    columns = tuple(dict.fromkeys(str(k) for item in data for k in item))
    rows = tuple(Row(n, lines.get(id(item), 0), {str(k): v for k, v in item.items()}) for n, item in enumerate(data, 1))
    return columns, rows


def _shown(path: Path, folder: Path) -> str:
    try:
        return str(path.resolve().relative_to(folder.resolve()))
    except ValueError:
        return str(path)

"""Templates × table → cases: every row filled into the template(s) it names.

For each row, in table order, and each template named in its ``template`` cell (``a+b`` for
several, in that order; the only template when there is one):

1. the values: the row's cells, ``row`` (its number), ``template``, ``style``, and the style's
   ``persona`` and ``instructions`` (:mod:`agent_evals.cases.styles`);
2. the template's ``derive`` (if any): the suite's pack computes more values from the row
   (:meth:`agent_evals.packs.Pack.case_derivation`); a row it rejects is a problem naming the row;
3. the case: ``id`` (default ``{id}``), ``description`` (starting with the id), ``metadata``
   (``id``, ``group`` (default: the template's name), ``priority`` (default: the row's
   ``priority`` cell), ``template``, ``style``, ``row``), ``vars`` with the filled
   ``simulated_user`` (persona and instructions from the style unless the template sets them),
   ``assert`` and ``options``; and the golden plan entry from ``golden`` (with the entries of
   ``golden.styles.<style>`` over it).

Every problem (an unknown template or style, a placeholder no column or derivation fills, a
row the pack rejects, duplicate ids, golden keys that would be mistaken for one another) is
collected, one line each, and raised together as a :class:`CaseFactoryError`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from agent_evals.cases.fill import MissingValue, as_text, fill
from agent_evals.cases.source import CaseFactoryError, CaseSource, Row
from agent_evals.packs import CaseDerivation, Pack, PackError, load_pack

MAX_PROBLEMS = 20


@dataclass(frozen=True)
class GeneratedCase:
    id: str
    template: str
    row: Row
    test: dict[str, Any]  # the Promptfoo test
    golden: dict[str, Any] | None  # its golden plan entry


@dataclass(frozen=True)
class Expansion:
    source: CaseSource
    cases: tuple[GeneratedCase, ...]


class _Problems(list[str]):
    """The problems found, each said once (``key``: what makes two problems the same one)."""

    def __init__(self) -> None:
        super().__init__()
        self._keys: set[str] = set()

    def add(self, text: str, key: str | None = None) -> None:
        key = key or text
        if key not in self._keys:
            self._keys.add(key)
            self.append(text)


def expand(source: CaseSource) -> Expansion:
    """Every case of the templates and the table (raises CaseFactoryError listing every problem)."""
    problems = _Problems()
    derivations = _derivations(source, problems)
    cases: list[GeneratedCase] = []
    for row in source.rows:
        for name in _templates_of(row, source, problems):
            case = _case(row, name, source, derivations, problems)
            if case is not None:
                cases.append(case)
    _check_ids(cases, source, problems)
    _check_golden_keys(cases, problems)
    if problems:
        extra = [f"… and {len(problems) - MAX_PROBLEMS} more"] if len(problems) > MAX_PROBLEMS else []
        raise CaseFactoryError(problems[:MAX_PROBLEMS] + extra)
    return Expansion(source, tuple(cases))


def _derivations(source: CaseSource, problems: _Problems) -> dict[str, CaseDerivation]:
    wanted = {str(t["derive"]) for t in source.templates.values() if t.get("derive")}
    if not wanted:
        return {}
    where = source.shown(source.templates_path)
    if source.pack is None:
        problems.add(f"{where}: templates name derivations ({', '.join(sorted(wanted))}) but no pack: set pack:")
        return {}
    try:
        pack: Pack = load_pack(source.pack)
    except PackError as exc:
        problems.add(f"{where}: {exc}")
        return {}
    found = {}
    for name in sorted(wanted):
        derivation = pack.case_derivation(name)
        if derivation is None:
            problems.add(f"{where}: derive: {name} is not a derivation of pack {source.pack!r}")
        else:
            found[name] = derivation
    return found


def _where(row: Row, source: CaseSource) -> str:
    return f"{source.shown(source.table_path)}:{row.line} ({row.id or f'row {row.number}'})"


def _templates_of(row: Row, source: CaseSource, problems: _Problems) -> list[str]:
    cell = str(row.values.get("template") or "").strip()
    if not cell:
        if len(source.templates) == 1:
            return list(source.templates)
        problems.add(f"{_where(row, source)}: no template: the 'template' column names one of "
                     f"{', '.join(source.templates)}")
        return []
    names = [n.strip() for n in cell.split("+") if n.strip()]
    unknown = [n for n in names if n not in source.templates]
    for name in unknown:
        from agent_evals.suites.problems import did_you_mean  # lazy: keeps agent_evals.cases's start-up as small as it is

        problems.add(f"{_where(row, source)}: unknown template {name!r}; templates: {', '.join(source.templates)}"
                     f"{did_you_mean(name, list(source.templates))}")
    return [n for n in names if n not in unknown]


def _case(
    row: Row, name: str, source: CaseSource, derivations: Mapping[str, CaseDerivation], problems: _Problems
) -> GeneratedCase | None:
    template = source.templates[name]
    values = _values(row, name, source, problems)
    if values is None:
        return None
    derive = str(template.get("derive") or "")
    if derive:
        if derive not in derivations:
            return None  # said once, for the templates file
        try:
            values.update(derivations[derive](row.values))
        except ValueError as exc:
            problems.add(f"{_where(row, source)}: {exc}")
            return None
    try:
        case_id, test = _test(template, name, row, values)
        golden = _golden(template, str(values["style"]), values)
    except MissingValue as exc:
        given = f" nor given by its derivation {derive}" if derive else ""
        problems.add(
            f"{source.shown(source.templates_path)}: template {name!r} uses {{{exc.name}}}, which is neither a column "
            f"of {source.shown(source.table_path)} ({', '.join(source.columns)}){given}; first at {_where(row, source)}",
            key=f"missing {name} {exc.name}",
        )
        return None
    except ValueError as exc:
        problems.add(f"{source.shown(source.templates_path)}: template {name!r}: {exc}; at {_where(row, source)}")
        return None
    return GeneratedCase(case_id, name, row, test, golden)


def _values(row: Row, name: str, source: CaseSource, problems: _Problems) -> dict[str, Any] | None:
    style_name = str(row.values.get("style") or "plain").strip()
    style = source.styles.get(style_name)
    if style is None:
        problems.add(f"{_where(row, source)}: unknown style {style_name!r}; styles: {', '.join(source.styles)}")
        return None
    return {**row.values, "row": row.number, "template": name, "style": style_name, "persona": style.persona,
            "instructions": style.instructions}


def _test(template: Mapping[str, Any], name: str, row: Row, values: Mapping[str, Any]) -> tuple[str, dict[str, Any]]:
    case_id = as_text(fill(template.get("id", "{id}"), values)).strip()
    if not case_id:
        raise ValueError("the case id is empty")
    description = as_text(fill(template["description"], values)).strip()
    if not description.startswith(f"{case_id} "):
        description = f"{case_id} {description}"
    priority = fill(template["priority"], values) if "priority" in template else row.values.get("priority")
    metadata: dict[str, Any] = {"id": case_id, "group": as_text(fill(template.get("group", name), values))}
    if priority:
        metadata["priority"] = as_text(priority)
    metadata.update(fill(template.get("metadata") or {}, values))
    metadata.update(template=name, style=values["style"], row=row.number)
    test: dict[str, Any] = {"description": description, "metadata": metadata}
    test_vars = dict(fill(template.get("vars") or {}, values))
    if "simulated_user" in template:
        test_vars["simulated_user"] = _user(fill(template["simulated_user"], values), values)
    if test_vars:
        test["vars"] = test_vars
    test["assert"] = fill(template.get("assert") or [], values)
    if template.get("options"):
        test["options"] = fill(template["options"], values)
    return case_id, test


def _user(user: Any, values: Mapping[str, Any]) -> dict[str, Any]:
    if not isinstance(user, Mapping):
        raise ValueError("simulated_user must fill to a mapping (goal, persona, facts, instructions)")
    given = {k: v.strip() if isinstance(v, str) else v for k, v in user.items()}
    given.setdefault("persona", values["persona"])
    if values["instructions"]:
        given.setdefault("instructions", values["instructions"])
    order = ("goal", "persona", "facts", "instructions")
    return {**{k: given[k] for k in order if k in given}, **{k: v for k, v in given.items() if k not in order}}


def _golden(template: Mapping[str, Any], style: str, values: Mapping[str, Any]) -> dict[str, Any] | None:
    raw = template.get("golden")
    if raw is None:
        return None
    if not isinstance(raw, Mapping):
        raise ValueError("golden must be a mapping (a golden plan entry, and per-style entries under styles)")
    per_style = raw.get("styles") or {}
    entry = {k: v for k, v in raw.items() if k != "styles"}
    entry.update(per_style.get(style) or {})
    return dict(fill(entry, values))


def _check_ids(cases: list[GeneratedCase], source: CaseSource, problems: _Problems) -> None:
    first: dict[str, GeneratedCase] = {}
    for case in cases:
        if case.id in first:
            earlier = first[case.id]
            problems.add(f"{_where(case.row, source)}: case id {case.id} is generated twice (also by "
                         f"{source.shown(source.table_path)}:{earlier.row.line}, template {earlier.template})")
        else:
            first[case.id] = case


def _check_golden_keys(cases: list[GeneratedCase], problems: _Problems) -> None:
    """The golden recorder tells conversations apart by the simulated user's goal and by the first user
    message: none may be contained in another case's."""
    goals = [(c.id, str(((c.test.get("vars") or {}).get("simulated_user") or {}).get("goal") or "").strip()) for c in cases]
    firsts = [(c.id, str(((c.golden or {}).get("user") or [""])[0]).strip()) for c in cases]
    for what, keys in (("goal", goals), ("first user message", firsts)):
        present = [(i, k) for i, k in keys if k]
        joined = "\0".join(k for _, k in present)
        for short_id, short in present:
            if joined.count(short) < 2:  # only itself (one scan in C instead of a comparison per pair)
                continue
            long_id = next(i for i, k in present if i != short_id and short in k)
            problems.add(f"the {what} of {short_id} is contained in that of {long_id}: the golden recorder "
                         f"could not tell their conversations apart; make them differ",
                         key=f"{what} {min(short_id, long_id)} {max(short_id, long_id)}")

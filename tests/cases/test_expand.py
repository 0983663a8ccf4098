"""The case factory's core: templates × a table into exact cases and golden plan entries, in table
order and byte for byte the same each time, and every bad input as one line naming where."""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any

import pytest
import yaml

from agent_evals.cases import CaseFactoryError, expand, load_source, out_of_sync, render_cases, render_plan, write

TEMPLATES = """\
table: rows.csv
pack: tests.cases.desk_pack:DESK
styles:
  formal: {persona: "Formal and exact."}
templates:
  ticket:
    description: "{id} open a {level} ticket in {queue_name} ({style})"
    derive: ticket
    simulated_user:
      goal: "Get a ticket opened in the {queue_name} queue about {topic}, and its link."
      facts:
        queue: "{queue}"
        topic: "{topic}"
        "...": "{extra_facts}"
        note: "{note}"
    assert:
      - type: python
        value: file://../../assertions/argument_match.py
        metric: fields
        config: {tool: open_ticket, args: "{expected_fields}"}
      - type: python
        value: file://../../assertions/conversation.py
        metric: conversation
        config: {max_tool_calls: "{sla_hours}"}
    golden:
      shape: ticket
      user: ["Please open a ticket in {queue} about {topic}.", "Thanks! [DONE]"]
      styles:
        terse:
          user: ["ticket: {queue}, {topic}", "thx [DONE]"]
  followup:
    id: "{id}f"
    description: "follow up on {topic} {{literal}}"
    group: followup
    priority: smoke
    vars: {question: "What happened to my {topic} ticket?"}
    assert: []
"""
ROWS = """\
# a comment line, and a blank one, are skipped

id,template,style,priority,queue,level,topic,note,extra_facts
T01,ticket,plain,smoke,billing,1,a wrong invoice,,
T02,ticket+followup,terse,full,hardware,3,a broken laptop,bring the laptop,
"""


def suite(tmp_path: Path, templates: str = TEMPLATES, rows: str = ROWS, table: str = "rows.csv") -> Path:
    folder = tmp_path / "desk"
    (folder / "cases").mkdir(parents=True)
    (folder / "cases" / "templates.yaml").write_text(templates)
    (folder / "cases" / table).write_text(rows)
    return folder


def problems(folder: Path) -> list[str]:
    with pytest.raises(CaseFactoryError) as caught:
        expand(load_source(folder))
    return caught.value.problems


def test_templates_times_table_give_exactly_these_cases(tmp_path: Path) -> None:
    expansion = expand(load_source(suite(tmp_path)))
    assert [(c.id, c.template, c.row.number, c.row.line) for c in expansion.cases] == [
        ("T01", "ticket", 1, 4), ("T02", "ticket", 2, 5), ("T02f", "followup", 2, 5),
    ]
    first, second, followup = (c.test for c in expansion.cases)
    assert first == {
        "description": "T01 open a 1 ticket in Billing (plain)",
        "metadata": {"id": "T01", "group": "ticket", "priority": "smoke", "template": "ticket", "style": "plain", "row": 1},
        "vars": {"simulated_user": {
            "goal": "Get a ticket opened in the Billing queue about a wrong invoice, and its link.",
            "persona": "Plain and polite; writes short chat messages.",
            "facts": {"queue": "billing", "topic": "a wrong invoice"},  # the empty note is left out
        }},
        "assert": [
            {"type": "python", "value": "file://../../assertions/argument_match.py", "metric": "fields",
             "config": {"tool": "open_ticket", "args": {"queue": "billing", "priority": 1}}},  # a whole value
            {"type": "python", "value": "file://../../assertions/conversation.py", "metric": "conversation",
             "config": {"max_tool_calls": 4}},  # a number stays a number
        ],
    }
    assert second["vars"]["simulated_user"]["facts"] == {"queue": "hardware", "topic": "a broken laptop",
                                                         "note": "bring the laptop"}
    assert second["vars"]["simulated_user"]["persona"].startswith("Terse")
    assert followup == {
        "description": "T02f follow up on a broken laptop {literal}",
        "metadata": {"id": "T02f", "group": "followup", "priority": "smoke", "template": "followup", "style": "terse",
                     "row": 2},
        "vars": {"question": "What happened to my a broken laptop ticket?"},
        "assert": [],
    }
    assert [c.golden for c in expansion.cases] == [
        {"shape": "ticket", "user": ["Please open a ticket in billing about a wrong invoice.", "Thanks! [DONE]"]},
        {"shape": "ticket", "user": ["ticket: hardware, a broken laptop", "thx [DONE]"]},  # the style's lines
        None,
    ]


def test_the_written_files_are_the_same_each_time_and_say_they_are_generated(tmp_path: Path) -> None:
    folder = suite(tmp_path)
    expansion = expand(load_source(folder))
    written = write(expansion)
    assert [p.relative_to(folder.resolve()).as_posix() for p in written] == ["cases/generated.yaml", "golden/plan.generated.yaml"]
    text = (folder / "cases" / "generated.yaml").read_text()
    assert text.startswith("# GENERATED by `agent-evals cases expand desk`\n# from cases/templates.yaml and "
                           "cases/rows.csv: do not edit. 3 case(s), one per row and template.\n")
    assert yaml.safe_load(text) == [c.test for c in expansion.cases]
    assert render_cases(expand(load_source(folder))) == text  # byte for byte
    plan = yaml.safe_load((folder / "golden" / "plan.generated.yaml").read_text())
    assert list(plan["cases"]) == ["T01", "T02"] and render_plan(expansion) is not None
    assert out_of_sync(expansion) == []


def test_a_yaml_table_and_custom_styles(tmp_path: Path) -> None:
    rows = """\
- {id: Y01, template: ticket, style: formal, queue: access, level: 2, topic: a password, note: "",
   extra_facts: {manager: Ann}}
"""
    folder = suite(tmp_path, TEMPLATES.replace("rows.csv", "rows.yaml"), rows, "rows.yaml")
    [case] = expand(load_source(folder)).cases
    user = case.test["vars"]["simulated_user"]
    assert user["persona"] == "Formal and exact."
    assert user["facts"] == {"queue": "access", "topic": "a password", "manager": "Ann"}  # spread with "..."
    assert case.row.line == 1


def test_out_of_sync_files_are_named_in_one_line(tmp_path: Path) -> None:
    folder = suite(tmp_path)
    write(expand(load_source(folder)))
    (folder / "cases" / "rows.csv").write_text(ROWS.replace("a wrong invoice", "a double charge"))
    found = out_of_sync(expand(load_source(folder)))
    assert [line for _, line in found] == [
        "cases/generated.yaml is out of sync with cases/templates.yaml and cases/rows.csv (1 case(s) differ: T01); "
        "run `npx agent-evals cases expand desk`",
        "golden/plan.generated.yaml is out of sync with cases/templates.yaml and cases/rows.csv (1 case(s) differ: "
        "T01); run `npx agent-evals cases expand desk`",
    ]
    (folder / "cases" / "generated.yaml").unlink()
    assert out_of_sync(expand(load_source(folder)))[0][1].startswith("cases/generated.yaml is missing: it is generated")


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        (lambda t, r: (t.replace("about {topic}", "about {subject}"), r),
         ["cases/templates.yaml: template 'ticket' uses {subject}, which is neither a column of cases/rows.csv "
          "(id, template, style, priority, queue, level, topic, note, extra_facts) nor given by its derivation ticket; first at "
          "cases/rows.csv:4 (T01)"]),
        (lambda t, r: (t, r.replace("billing,1,", "billing,7,")),
         ["cases/rows.csv:4 (T01): level '7' is not 1, 2 or 3"]),
        (lambda t, r: (t, r.replace("T02,ticket+followup", "T01,ticket")),
         ["cases/rows.csv:5 (T01): case id T01 is generated twice (also by cases/rows.csv:4, template ticket)"]),
        (lambda t, r: (t, "id,template,queue\n"), ["cases/rows.csv: the table has no rows: nothing to expand"]),
        (lambda t, r: (t, r.replace("ticket+followup", "tickt")),
         ["cases/rows.csv:5 (T02): unknown template 'tickt'; templates: ticket, followup; did you mean ticket?"]),
        (lambda t, r: (t, r.replace(",terse,", ",shouty,")),
         ["cases/rows.csv:5 (T02): unknown style 'shouty'; styles: plain, terse, chatty, command, on_request, formal"]),
        (lambda t, r: (t.replace("derive: ticket", "derive: tickets"), r),
         ["cases/templates.yaml: derive: tickets is not a derivation of pack 'tests.cases.desk_pack:DESK'"]),
        (lambda t, r: (t, r.replace("hardware,3,a broken laptop", "billing,3,a wrong invoice")),
         ["the goal of T01 is contained in that of T02: the golden recorder could not tell their conversations "
          "apart; make them differ"]),
        (lambda t, r: (t.replace("    derive: ticket\n", "    derive: ticket\n    colour: red\n"), r),
         ["cases/templates.yaml: template 'ticket': unknown key 'colour'; allowed: id, description, group, priority, "
          "derive, simulated_user, vars, metadata, assert, options, golden"]),
        (lambda t, r: (t, r.replace("id,template", "key,template")),
         ["cases/rows.csv: the table has no 'id' column (columns: key, template, style, priority, queue, level, "
          "topic, note, extra_facts)"]),
    ],
    ids=["missing column", "invalid row", "duplicate ids", "empty table", "unknown template", "unknown style",
         "unknown derivation", "golden keys collide", "unknown template key", "no id column"],
)
def test_bad_input_is_one_line_naming_where(tmp_path: Path, change: Any, expected: list[str]) -> None:
    templates, rows = change(TEMPLATES, ROWS)
    assert problems(suite(tmp_path, templates, rows)) == expected


def test_every_problem_is_listed_at_once(tmp_path: Path) -> None:
    rows = ROWS.replace("billing,1,", "billing,9,").replace(",terse,", ",loud,")
    assert len(problems(suite(tmp_path, rows=rows))) == 2


def test_a_row_with_the_wrong_number_of_cells(tmp_path: Path) -> None:
    rows = textwrap.dedent("""\
        id,template,queue,level,topic,note,extra_facts
        T01,ticket,billing,1
    """)
    assert problems(suite(tmp_path, rows=rows)) == ["cases/rows.csv:2: 4 cell(s), the header has 7"]

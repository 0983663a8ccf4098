"""Every suite loads, every file it references exists, and the cases are what the suites promise."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
import yaml

from agent_evals.conversation.cassette import load_cassette
from agent_evals.packs.spoke.runs import portal_settings
from agent_evals.suites.discovery import discover

SUITES = {s.name: s for s in discover()}
CASE_ID = re.compile(r"^([A-Z]\d{2}) ")


def _config(name: str) -> dict[str, Any]:
    return yaml.safe_load(SUITES[name].config.read_text())


def _case_files(name: str) -> list[Path]:
    folder = SUITES[name].folder
    tests = _config(name)["tests"]
    patterns = [tests] if isinstance(tests, str) else list(tests)
    paths = [p for pattern in patterns for p in sorted(folder.glob(pattern.removeprefix("file://")))]
    assert paths, f"{name}: {tests} matches no case file"
    return paths


def _cases(name: str) -> list[dict[str, Any]]:
    return [case for path in _case_files(name) for case in yaml.safe_load(path.read_text())]


def _file_refs(node: Any) -> list[str]:
    if isinstance(node, dict):
        return [ref for value in node.values() for ref in _file_refs(value)]
    if isinstance(node, list):
        return [ref for value in node for ref in _file_refs(value)]
    if isinstance(node, str) and node.startswith("file://"):
        return [node]
    return []


def test_the_suites_exist() -> None:
    assert list(SUITES) == [  # evals/order.txt, then the others by name
        "spoke-create", "spoke-qa", "spoke-create-overlay", "integration-qa", "release-notes",
        "spoke-create-variants",
    ]


@pytest.mark.parametrize("name", list(SUITES))
def test_every_referenced_file_resolves(name: str) -> None:
    folder = SUITES[name].folder
    refs = _file_refs(_config(name)) + _file_refs(_cases(name))
    assert refs
    for ref in refs:
        target = ref.removeprefix("file://").split(":")[0]  # file://x.py:function
        if "*" in target:
            assert list(folder.glob(target)), f"{name}: {ref} matches nothing"
        else:
            # Promptfoo resolves file:// in case files against the config's folder too.
            assert (folder / target).resolve().is_file(), f"{name}: {ref} does not exist"


@pytest.mark.parametrize("name", list(SUITES))
def test_cases_have_unique_ids_metadata_and_a_golden_cassette(name: str) -> None:
    cases = _cases(name)
    ids = [c["metadata"]["id"] for c in cases]
    assert len(ids) == len(set(ids)), f"duplicate ids in {name}"
    for case in cases:
        meta = case["metadata"]
        assert CASE_ID.match(case["description"]).group(1) == meta["id"], case["description"]
        assert meta["priority"] in {"smoke", "full"}
        assert meta["group"]
        cassette = load_cassette(SUITES[name].folder / "golden" / f"{meta['id']}.json")
        assert cassette.case_id == meta["id"]
        assert cassette.record.end is not None and cassette.record.end.reason == "done"


def test_spoke_create_has_22_cases_in_four_groups() -> None:
    cases = _cases("spoke-create")
    assert [c["metadata"]["id"] for c in cases] == [f"C{i:02d}" for i in range(1, 23)]
    groups = Counter(c["metadata"]["group"] for c in cases)
    assert groups == {"copy": 8, "copy_by_description": 8, "new": 1, "blocked": 5}
    smoke = Counter(c["metadata"]["group"] for c in cases if c["metadata"]["priority"] == "smoke")
    assert smoke == {"copy": 2, "copy_by_description": 2, "new": 1, "blocked": 2}


def test_spoke_create_variants_has_48_generated_cases_over_the_seed_spokes() -> None:
    cases = _cases("spoke-create-variants")
    assert [c["metadata"]["id"] for c in cases] == [f"V{i:02d}" for i in range(1, 49)]
    assert Counter(c["metadata"]["group"] for c in cases) == {"copy": 36, "overlap": 12}
    assert set(Counter(c["metadata"]["style"] for c in cases)) == {"plain", "terse", "chatty", "command", "on_request"}
    sources = {c["vars"]["simulated_user"]["facts"]["existing network to copy"] for c in cases}
    assert len(sources) == 14  # every seed spoke is copied
    with_tags = [c for c in cases if c["metadata"]["group"] == "copy" and any(
        not p.startswith(("/name", "/location", "/environment", "/addressSpace", "/subnets"))
        for p in next(a for a in c["assert"] if a["value"].endswith("/input_diff.py"))["config"]["expected_changes"])]
    assert 10 <= len(with_tags) < 36  # with and without tag changes


def _assertion_files(case: dict[str, Any]) -> list[str]:
    return [Path(a["value"]).stem for a in case.get("assert", []) if a.get("type") == "python"]


def test_spoke_create_cases_check_what_fits_them() -> None:
    defaults = [Path(a["value"]).stem for a in _config("spoke-create")["defaultTest"]["assert"]]
    assert defaults == ["tool_not_executed"]  # complete_pull_request is forbidden everywhere
    for case in _cases("spoke-create"):
        files = _assertion_files(case)
        group = case["metadata"]["group"]
        assert "pull_request" in files and "conversation" in files, case["description"]
        assert all(a.get("metric") for a in case["assert"]), f"{case['description']}: every assertion needs a metric"
        pr_check = next(a for a in case["assert"] if a["value"].endswith("pull_request.py"))
        if group == "blocked":
            assert pr_check["config"] == {"expect": "none"}
            assert "tool_not_executed" in files
        else:
            assert "spoke_json_valid" in files and "argument_match" in files and "tool_sequence" in files
        if group.startswith("copy"):
            assert "input_diff" in files


def test_description_cases_name_fields_by_their_schema_descriptions() -> None:
    import json

    from agent_evals.packs.spoke.portal.schema import load_spoke_schema

    schema_text = json.dumps(load_spoke_schema())
    for case in _cases("spoke-create"):
        if case["metadata"]["group"] != "copy_by_description":
            continue
        facts = case["vars"]["simulated_user"]["facts"]
        described = [key for key in facts if key in schema_text]
        assert described, f"{case['description']}: no fact is named by a schema description"


def test_qa_cases_have_judged_statements_and_offline_key_facts() -> None:
    for case in _cases("spoke-qa"):
        def config(name: str) -> dict[str, Any]:
            [found] = [a for a in case["assert"] if str(a.get("value", "")).endswith(f"/{name}.py")]
            return found["config"]

        statements = config("expected_statements")
        assert statements["about"] == "final_reply" and len(statements["statements"]) >= 4, case["description"]
        assert config("reply_contains")["all"], case["description"]
        assert "llm-rubric" not in [a["type"] for a in case["assert"]]


def test_overlay_suite_has_its_portal_settings() -> None:
    settings = portal_settings(SUITES["spoke-create-overlay"])
    assert settings is not None
    from agent_evals.packs.spoke.portal.settings import load_settings

    loaded = load_settings(settings)
    assert loaded.file_name_rule is not None and loaded.additional_schema is not None

"""Every kit check has a version, and each verdict records its grader. The code of each check is
fingerprinted here: when it changes, this test fails and asks whether a verdict can change (then
bump the check's VERSION) or not (then only update the fingerprint below)."""

from __future__ import annotations

import ast
import hashlib
from pathlib import Path

import pytest

from agent_evals.assertions.grader_version import check_version, config_sha256, grader_stamp
from agent_evals.assertions.registry import check_module, kit_check_names
from agent_evals.judging.questions import rubric_sha256
from agent_evals.record import judgement_key
from agent_evals.testing.promptfoo_results import result_row

SRC = Path(__file__).resolve().parents[2] / "src"

# check: (VERSION, fingerprint of its code: the module and the kit modules it imports, transitively)
RECORDED = {
    "tool_sequence": (2, "cdf50041ab18"),
    "tool_not_executed": (1, "7c1de52967b6"),
    "argument_match": (1, "eabfd7fe0f47"),
    "function_call_metrics": (1, "cd3f67282105"),
    "conversation": (1, "3a0a5bdcc785"),
    "reply_contains": (1, "a05ca6687952"),
    "reply_grounded": (1, "9d8f75957255"),
    "goal_reached": (1, "fff433fcf43f"),
    "expected_statements": (1, "7a517d9164e4"),
    "trajectory_quality": (1, "b123ed8984da"),
    "tool_order": (1, "507f3e36910a"),
    "tool_errors": (1, "427a3b2638c3"),
    "repeated_calls": (1, "cc5bd84630e1"),
    "input_diff": (1, "4d20a6fbc7b5"),
    "spoke_json_valid": (1, "8edf67232668"),
    "pull_request": (1, "1cebe97da909"),
    "protected_branches": (1, "26b69b9d17fe"),
    "changelog_entry": (1, "faf6fc6fe57a"),
}
SCOPE = ("agent_evals.assertions", "agent_evals.packs.spoke.checks", "agent_evals.packs.release")


def _sources(module: str, seen: set[str] | None = None) -> set[str]:
    """The kit modules (of the checks' packages) a module imports, itself included, transitively."""
    seen = seen if seen is not None else set()
    if module in seen:
        return seen
    seen.add(module)
    path = SRC / (module.replace(".", "/") + ".py")
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith(SCOPE):
            target = node.module
            if (SRC / (target.replace(".", "/") + ".py")).is_file():
                _sources(target, seen)
    return seen


def _code(path: Path) -> bytes:
    """A module's code as Python sees it: no comments, no docstrings, no layout (a change to the
    words around the code asks nothing)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if (isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef) and body
                and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant)
                and isinstance(body[0].value.value, str)):
            node.body = body[1:] or [ast.Pass()]
    return ast.dump(tree).encode()


def fingerprint(name: str) -> str:
    digest = hashlib.sha256()
    for module in sorted(_sources(check_module(name).__name__)):
        digest.update(module.encode() + b"\0" + _code(SRC / (module.replace(".", "/") + ".py")))
    return digest.hexdigest()[:12]


def test_every_kit_check_has_a_version_and_its_code_is_recorded() -> None:
    assert sorted(RECORDED) == sorted(kit_check_names())
    changed = []
    for name, (version, recorded) in RECORDED.items():
        assert check_version(name) >= version, f"{name}: VERSION went down"
        if (check_version(name), fingerprint(name)) != (version, recorded):
            changed.append(f'    "{name}": ({check_version(name)}, "{fingerprint(name)}"),')
    assert not changed, (
        "the code of these checks changed. If a verdict of an existing config can change, bump the check's VERSION "
        "(runs graded before are then not compared with new ones unless --across-grader-versions; "
        "`agent-evals regrade` re-grades them). Then record:\n" + "\n".join(changed)
    )


def test_a_verdict_records_its_grader() -> None:
    metadata = result_row("C01", 0)["response"]["metadata"]
    config = {"expected": ["get_item"], "mode": "in_order"}
    assert grader_stamp("tool_sequence", config, metadata) == {
        "check": "tool_sequence", "version": check_version("tool_sequence"), "config": config_sha256(config),
    }
    assert config_sha256(None) == config_sha256({}) != config_sha256(config)
    assert config_sha256({"a": 1, "b": 2}) == config_sha256({"b": 2, "a": 1})
    judged_config = {"statements": ["It names the region."]}
    metadata["judged"] = [{"check": "expected_statements", "key": judgement_key("expected_statements", judged_config),
                           "verdicts": [], "model": "judge-4", "rubric": rubric_sha256("expected_statements")}]
    stamp = grader_stamp("expected_statements", judged_config, metadata)
    assert stamp["judge_model"] == "judge-4" and stamp["rubric"] == rubric_sha256("expected_statements")


def test_the_rubric_hash_follows_the_questions_wording(monkeypatch: pytest.MonkeyPatch) -> None:
    from agent_evals.judging import questions

    before = rubric_sha256("goal_reached")
    assert before and before != rubric_sha256("expected_statements") and rubric_sha256("tool_sequence") == ""
    monkeypatch.setattr(questions, "SYSTEM", questions.SYSTEM + " Be brief.")
    assert rubric_sha256("goal_reached") != before

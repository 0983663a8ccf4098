"""hooks/policy.generated.json: the check policy the JavaScript entry files read, kept equal to its Python source."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from agent_evals import hook_policy
from agent_evals.assertions import registry
from agent_evals.assertions.registry import check_form
from agent_evals.judge import MODEL_GRADED_TYPES
from agent_evals.record.row_labels import leading_case_id
from tests.conftest import PROJECT_ROOT

NODE = PROJECT_ROOT / "node_modules" / ".bin" / "node"
needs_node = pytest.mark.skipif(not NODE.exists(), reason="npm packages not installed")


def test_the_committed_policy_is_what_the_python_source_makes() -> None:
    assert hook_policy.out_of_date(PROJECT_ROOT) is None, hook_policy.out_of_date(PROJECT_ROOT)


def test_the_command_it_names_regenerates_the_file_as_written(tmp_path: Path) -> None:
    (tmp_path / "hooks").mkdir()
    env = {**os.environ, "AGENT_EVALS_HOME": str(tmp_path)}  # the project root the command writes under
    done = subprocess.run(shlex.split(hook_policy.REGENERATE), cwd=PROJECT_ROOT, env=env, capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "hooks" / "policy.generated.json").read_text(encoding="utf-8") == hook_policy.render()
    assert hook_policy.out_of_date(tmp_path) is None


def test_a_judged_check_added_in_python_makes_the_committed_file_out_of_date(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(registry, "JUDGED_CHECKS", (*registry.JUDGED_CHECKS, "tone_matches"))
    assert "tone_matches" in hook_policy.policy()["judged_checks"]
    assert hook_policy.out_of_date(PROJECT_ROOT) == (
        "hooks/policy.generated.json differs from the policy in the Python source; "
        "run `.venv/bin/python -m agent_evals.hook_policy`")


def test_a_missing_file_and_a_root_without_hooks(tmp_path: Path) -> None:
    assert hook_policy.out_of_date(tmp_path) == (
        "hooks/policy.generated.json is missing; run `.venv/bin/python -m agent_evals.hook_policy`")
    with pytest.raises(FileNotFoundError, match="is .* the project's root"):
        hook_policy.write(tmp_path)


def test_the_command_takes_no_arguments(capsys: pytest.CaptureFixture[str]) -> None:
    assert hook_policy.main(["--check"]) == 2
    assert "no arguments" in capsys.readouterr().err


def test_the_file_says_how_to_regenerate_it() -> None:
    policy = json.loads((PROJECT_ROOT / "hooks" / "policy.generated.json").read_text(encoding="utf-8"))
    assert hook_policy.REGENERATE in policy["//"] and "do not edit" in policy["//"]
    assert set(policy["model_graded_types"]) == MODEL_GRADED_TYPES


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("assertions/goal_reached.py", ("goal_reached", False)),
        ("file://../../assertions/goal_reached.py:get_assert_not", ("goal_reached", True)),
        ("file:///x/assertions/kit.js:goal_reached", ("goal_reached", False)),
        ("file:///x/assertions/kit.js:not_goal_reached", ("goal_reached", True)),
        ("assertions/goal_reached.js", None),
        ("assertions/kit.js:nothing_known", None),
    ],
)
def test_the_patterns_read_a_kit_check_in_python(value: str, expected: tuple[str, bool] | None) -> None:
    kind = "javascript" if ".js" in value else "python"
    assert check_form({"type": kind, "value": value}) == expected


@pytest.mark.parametrize(("description", "expected"), [("C01 copy", "C01"), ("  Q12", "Q12"), ("copy C01", None),
                                                       ("C01x one", None), ("", None)])
def test_the_case_id_pattern_in_python(description: str, expected: str | None) -> None:
    assert leading_case_id(description) == expected


def _hook(root: Path, name: str, argument: dict[str, Any]) -> Any:
    script = (f"require('./hooks/kit.js').{name}({json.dumps(argument)})"
              ".then(r => console.log('RESULT ' + JSON.stringify(r === undefined ? null : r)));")
    done = subprocess.run([str(NODE), "-e", script], cwd=root, env={"PATH": "/usr/bin:/bin"}, capture_output=True,
                          text=True, timeout=30)
    assert done.returncode == 0, done.stderr
    return json.loads(next(line for line in done.stdout.splitlines() if line.startswith("RESULT "))[7:])


def _copy_of_the_hooks(root: Path) -> Path:
    (root / "hooks").mkdir()
    shutil.copy(PROJECT_ROOT / "hooks" / "kit.js", root / "hooks" / "kit.js")
    (root / "assertions").mkdir()
    for check in registry.CORE_CHECKS:  # the hook rewrites a kit check whose file exists
        (root / "assertions" / f"{check}.py").touch()
    return root


@needs_node
def test_the_hook_reads_the_judged_checks_from_the_generated_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Where the copies would have parted: a judged check added in Python is NOT GRADED by the hook too."""
    root = _copy_of_the_hooks(tmp_path)
    (root / "assertions" / "tone_matches.py").touch()
    tone = {"type": "python", "value": "file://../../assertions/tone_matches.py", "metric": "tone"}
    test = {"description": "C07 tone", "assert": [tone]}
    hook_policy.write(root)
    assert [a["value"] for a in _hook(root, "beforeEach", {"test": test})["test"]["assert"]] == [
        f"file://{root}/assertions/kit.js:tone_matches"]  # a plain check: answered from the provider's grading

    monkeypatch.setattr(registry, "JUDGED_CHECKS", (*registry.JUDGED_CHECKS, "tone_matches"))
    hook_policy.write(root)
    out = _hook(root, "beforeEach", {"test": test})["test"]
    assert out["assert"] == []
    assert out["metadata"]["not_graded"] == [
        "tone_matches (tone): no judge model is configured (JUDGE_MODEL and an LLM endpoint)"]


@needs_node
def test_every_model_graded_type_of_python_is_not_graded_by_the_hook_without_a_grader(tmp_path: Path) -> None:
    root = _copy_of_the_hooks(tmp_path)
    hook_policy.write(root)
    kinds = [k for kind in sorted(MODEL_GRADED_TYPES) for k in (kind, f"not-{kind}")]
    out = _hook(root, "beforeEach", {"test": {"assert": [{"type": k, "value": "x"} for k in kinds]}})
    assert out["test"]["assert"] == []
    assert out["test"]["metadata"]["not_graded"] == [f"{k} (no metric): no grader model" for k in kinds]

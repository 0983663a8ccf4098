"""``not-`` negation of the kit's checks, the way Promptfoo users write it (``type: not-python``):
the check's verdict flipped with its reason kept, and a negated check that cannot be graded is not
graded, never a pass — in the provider's grading, in assertions/<check>.py, in assertions/kit.js
and in the hook that points a suite's assertions at them."""

from __future__ import annotations

import importlib.util
import json
import subprocess
from typing import Any

import pytest

from agent_evals.assertions.registry import check_form, kit_checks
from agent_evals.provider.grading import grade_checks
from tests.conftest import PROJECT_ROOT

from ._assertion_support import call, metadata

ROW = metadata([call("get_item", {"id": 1}, turn=1), call("open_ticket", {"queue": "it"}, turn=1)])
NODE = PROJECT_ROOT / "node_modules" / ".bin" / "node"
CHECKS = [
    ("tool_not_executed", {"tools": ["delete_*"]}),  # passes: its not- form fails
    ("tool_sequence", {"expected": ["close_ticket"]}),  # fails: its not- form passes
    ("argument_match", {"tool": "open_ticket", "args": {"queue": "it"}}),
    ("function_call_metrics", {"expected_calls": [{"name": "get_item"}, {"name": "open_ticket"}]}),
    ("expected_statements", {"statements": ["The ticket was opened."]}),  # not judged: NOT GRADED
    ("tool_sequence", {"expected": [], "mode": "superset"}),  # an invalid config: never a verdict
]


def _asserts(kind: str = "not-python") -> list[dict[str, Any]]:
    return [{"type": kind, "value": f"file://../../assertions/{name}.py", "metric": f"m{i}", "config": config}
            for i, (name, config) in enumerate(CHECKS)]


def test_the_not_form_flips_verdicts_and_never_passes_what_was_not_graded() -> None:
    plain = grade_checks(kit_checks(_asserts("python")), _asserts("python"), ROW)
    negated = grade_checks(kit_checks(_asserts()), _asserts(), ROW)
    assert [r["pass"] for r in plain] == [True, False, True, True, False, False]
    assert [r["pass"] for r in negated] == [False, True, False, False, False, False]
    assert all(r["negated"] for r in negated) and not any("negated" in r for r in plain)
    assert [r["score"] for r in negated[:4]] == [0.0, 1.0, 0.0, 0.0]
    assert negated[0]["reason"] == "not-tool_not_executed fails: the check passes, which the not- form forbids: " + plain[0]["reason"]
    assert negated[1]["reason"].startswith("not-tool_sequence passes: the check fails, as the not- form asks: tool_sequence")
    assert plain[3]["namedScores"] and negated[3]["namedScores"] == {}  # precision etc. measure the opposite
    assert negated[4] == {**plain[4], "negated": True}  # NOT GRADED stays NOT GRADED: never a pass
    assert negated[4]["reason"].startswith("NOT GRADED: expected_statements")
    assert negated[5]["reason"].startswith("tool_sequence: invalid config: config.expected is [] with mode superset")


def _entry_file(name: str) -> Any:
    spec = importlib.util.spec_from_file_location(f"neg_{name}", PROJECT_ROOT / "assertions" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_both_paths_agree_on_the_not_form() -> None:
    fast = grade_checks(kit_checks(_asserts()), _asserts(), ROW)
    rewritten = [dict(a, type="python", value=a["value"] + ":get_assert_not") for a in _asserts()]
    assert [(c.name, c.negated) for c in kit_checks(rewritten)] == [(n, True) for n, _ in CHECKS]
    for entry, (name, config) in zip(fast, CHECKS, strict=True):
        slow = _entry_file(name).get_assert_not("", {"providerResponse": {"metadata": ROW}, "config": config,
                                                     "test": {"assert": rewritten}})
        assert (entry["pass"], entry["score"], entry["reason"], entry["namedScores"]) == (
            slow["pass"], slow["score"], slow["reason"], slow.get("namedScores", {})), name


def test_a_not_python_check_left_to_promptfoo_is_refused() -> None:
    """Without the kit's hook Promptfoo would invert the result itself (dropping its reason, passing a check that
    could not be graded): assertions/<check>.py refuses, which fails the assertion with the reason."""
    context = {"providerResponse": {"metadata": ROW}, "config": CHECKS[1][1], "test": {"assert": _asserts()}}
    with pytest.raises(ValueError, match="negated with not-python, but the suite's hook"):
        _entry_file("tool_sequence").get_assert("", context)


@pytest.mark.parametrize(
    ("assertion", "form"),
    [
        ({"type": "not-python", "value": "file://../../assertions/tool_sequence.py"}, ("tool_sequence", True)),
        ({"type": "python", "value": "assertions/tool_sequence.py:get_assert_not"}, ("tool_sequence", True)),
        ({"type": "python", "value": "assertions/tool_sequence.py"}, ("tool_sequence", False)),
        ({"type": "javascript", "value": "file:///x/assertions/kit.js:not_tool_sequence"}, ("tool_sequence", True)),
        ({"type": "javascript", "value": "file:///x/assertions/kit.js:tool_sequence"}, ("tool_sequence", False)),
        ({"type": "javascript", "value": "file:///x/assertions/kit.js:not_nothing"}, None),
        ({"type": "not-javascript", "value": "file:///x/assertions/kit.js:tool_sequence"}, None),
    ],
)
def test_the_forms_of_a_check(assertion: dict[str, Any], form: tuple[str, bool] | None) -> None:
    assert check_form(assertion) == form


def _node(script: str, env: dict[str, str] | None = None) -> Any:
    done = subprocess.run([str(NODE), "-e", script], cwd=PROJECT_ROOT, env={"PATH": "/usr/bin:/bin", **(env or {})},
                          capture_output=True, text=True, timeout=30)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.mark.skipif(not NODE.exists(), reason="npm packages not installed")
def test_kit_js_answers_the_not_form_from_the_providers_grading() -> None:
    entries = grade_checks(kit_checks(_asserts()[:2]), _asserts()[:2], ROW)
    plain = grade_checks(kit_checks(_asserts("python")[:2]), _asserts("python")[:2], ROW)
    context = {"providerResponse": {"metadata": {"checks": entries + plain}}, "config": CHECKS[1][1]}
    out = _node(f"const k = require('./assertions/kit.js'); const c = {json.dumps(context)};"
                "console.log(JSON.stringify([k.not_tool_sequence('', c), k.tool_sequence('', c)]))")
    assert [r["pass"] for r in out] == [True, False]
    assert out[0]["reason"] == entries[1]["reason"] and out[1]["reason"] == plain[1]["reason"]


@pytest.mark.skipif(not NODE.exists(), reason="npm packages not installed")
def test_the_hook_points_the_not_form_at_the_kits_negation() -> None:
    judged = {"type": "not-python", "value": "file://../../assertions/expected_statements.py", "metric": "s",
              "config": {"statements": ["x"]}}
    test = {"description": "C01", "metadata": {"id": "C01"}, "assert": [_asserts()[1], judged]}
    script = ("const k = require('./hooks/kit.js');"
              f"k.beforeEach({{test: {json.dumps(test)}}}).then(r => console.log(JSON.stringify(r.test)));")
    fast = _node(script)
    assert fast["assert"][0]["type"] == "javascript" and fast["assert"][0]["value"].endswith("assertions/kit.js:not_tool_sequence")
    # a negated judged check without a judge: NOT GRADED, out of the row's assertions (never a pass), and named
    assert len(fast["assert"]) == 1
    assert fast["metadata"]["not_graded"] == [
        "expected_statements (s): no judge model is configured (JUDGE_MODEL and an LLM endpoint)"
    ]
    slow = _node(script, {"AGENT_EVALS_ASSERTIONS": "python"})
    assert slow["assert"][0]["type"] == "python" and slow["assert"][0]["value"].endswith("tool_sequence.py:get_assert_not")

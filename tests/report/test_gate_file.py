"""The gate file is validated strictly: every problem is one line naming the file and the key."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent_evals.report import ReportInputError, load_gate, parse_gate
from agent_evals.report.gate_file import Gate
from tests.conftest import PROJECT_ROOT


def test_the_projects_gate_file_is_valid() -> None:
    gate = load_gate(PROJECT_ROOT / "evals" / "gate.yaml")
    assert gate == Gate(
        max_errors=0, max_flaky=0, min_pass_hat_k=(("priority", "smoke", 1.0),), no_regressions=("smoke",),
        no_significant_regression=("all",),
    )


def test_every_key() -> None:
    gate = parse_gate(
        {
            "k": 3,
            "require_complete": False,
            "max_errors": 2,
            "max_flaky": 1,
            "min_pass_hat_k": {"all": 0.9, "priority": {"smoke": 1.0}, "group": {"blocked": 0.5}},
            "no_regressions": ["smoke", "full"],
            "max_cost_usd": 5,
        }
    )
    assert gate == Gate(
        k=3,
        require_complete=False,
        max_errors=2,
        max_flaky=1,
        min_pass_hat_k=(("all", "all", 0.9), ("priority", "smoke", 1.0), ("group", "blocked", 0.5)),
        no_regressions=("smoke", "full"),
        max_cost_usd=5.0,
    )


def test_an_empty_file_is_the_defaults() -> None:
    assert parse_gate(None) == Gate()  # require_complete, max_errors 0


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        (
            {"max_flakey": 0},
            "unknown key 'max_flakey'; allowed: k, require_complete, max_errors, max_flaky, "
            "min_pass_hat_k, no_regressions, no_significant_regression, alpha, min_baseline_runs, "
            "baseline_max_age_days, max_cost_usd, allow_replay, allow_not_graded",
        ),
        (
            {"min_pass_hat_k": {"priority": {"smoke": 1.5}}},
            "min_pass_hat_k.priority.smoke is 1.5; a pass^k threshold is a number from 0 to 1",
        ),
        (
            {"min_pass_hat_k": {"all": -0.1}},
            "min_pass_hat_k.all is -0.1; a pass^k threshold is a number from 0 to 1",
        ),
        (
            {"min_pass_hat_k": {"all": "high"}},
            "min_pass_hat_k.all is 'high'; a pass^k threshold is a number from 0 to 1",
        ),
        (
            {"min_pass_hat_k": {"priorty": {"smoke": 1}}},
            "min_pass_hat_k: unknown key 'priorty'; allowed: all, priority, group",
        ),
        (
            {"min_pass_hat_k": {"priority": 1.0}},
            "min_pass_hat_k.priority must map each priority to a threshold",
        ),
        ({"min_pass_hat_k": [1]}, "min_pass_hat_k must be a mapping with keys all, priority, group"),
        ({"max_errors": -1}, "max_errors is -1; it must be an integer ≥ 0"),
        ({"max_flaky": 0.5}, "max_flaky is 0.5; it must be an integer ≥ 0"),
        ({"max_flaky": True}, "max_flaky is True; it must be an integer ≥ 0"),
        ({"k": 0}, "k is 0; it must be an integer ≥ 1"),
        ({"max_cost_usd": -2}, "max_cost_usd is -2; it must be a number ≥ 0"),
        ({"require_complete": "yes"}, "require_complete is 'yes'; it must be true or false"),
        ({"no_regressions": "smoke"}, "no_regressions must be a list of priorities (or [all]), got 'smoke'"),
        ([1, 2], "must be a mapping of the keys k, require_complete"),
    ],
)
def test_bad_values_are_one_line(raw: object, message: str) -> None:
    with pytest.raises(ReportInputError) as caught:
        parse_gate(raw, "evals/gate.yaml")
    assert str(caught.value).startswith(f"evals/gate.yaml: {message}")
    assert "\n" not in str(caught.value)


def test_yaml_errors_name_the_line(tmp_path: Path) -> None:
    path = tmp_path / "gate.yaml"
    path.write_text("max_errors: 0\nmin_pass_hat_k:\n  priority: {smoke: 1.0\n")
    with pytest.raises(ReportInputError, match=rf"^{path}: line \d+ not valid YAML: "):
        load_gate(path)


def test_a_missing_gate_file(tmp_path: Path) -> None:
    with pytest.raises(ReportInputError, match=r"gate.yaml: no gate file \(write one, see docs/report.md\)"):
        load_gate(tmp_path / "gate.yaml")

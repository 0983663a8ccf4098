"""``agent-evals cases expand`` and the preflight's sync check, on a suite of their own and on the real one."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from agent_evals.cases import check_suite
from agent_evals.cli import main
from agent_evals.preflight import preflight
from agent_evals.suites.promptfoo_args import read_flags
from agent_evals.suites.discovery import Suite, select

VARIANTS = select("spoke-create-variants")[0]


@pytest.fixture
def copy(tmp_path: Path) -> Suite:
    """A copy of the generated suite (without its cassettes) under a tmp evals/ folder."""
    evals = tmp_path / "evals"
    shutil.copytree(VARIANTS.folder, evals / VARIANTS.name, ignore=shutil.ignore_patterns("V*.json"))
    return Suite(VARIANTS.name, evals / VARIANTS.name)


def test_the_checked_in_files_of_the_real_suite_are_in_sync() -> None:
    assert check_suite(VARIANTS) == []


def test_expand_check_and_write(copy: Suite, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    from agent_evals.cases import command

    monkeypatch.setattr(command, "select", lambda name: [copy])
    assert main(["cases", "expand", copy.name, "--check"]) == 0
    assert capsys.readouterr().out == f"cases: {copy.name}: in sync (48 case(s))\n"

    rows = copy.folder / "cases" / "rows.csv"
    rows.write_text(rows.read_text().replace("V02,copy,terse", "V02,copy,chatty"))
    assert main(["cases", "expand", copy.name, "--check"]) == 1
    out = capsys.readouterr().out.splitlines()
    assert out[0] == (f"cases: {copy.name}: cases/generated.yaml is out of sync with cases/templates.yaml and "
                      f"cases/rows.csv (1 case(s) differ: V02); run `npx agent-evals cases expand {copy.name}`")
    assert [line for line in check_suite(copy)] == [line.removeprefix("cases: ") for line in out]

    assert main(["cases", "expand", copy.name]) == 0
    assert capsys.readouterr().out == (f"cases: {copy.name}: 48 case(s) → cases/generated.yaml, "
                                       "golden/plan.generated.yaml\n")
    assert check_suite(copy) == []

    rows.write_text(rows.read_text().replace("10.20.36.0/22", "10.20.37.0/22"))
    assert main(["cases", "expand", copy.name]) == 2
    assert capsys.readouterr().out == (
        f"cases: {copy.name}: cases/rows.csv:6 (V02): address range '10.20.37.0/22' is not a network: its host "
        "bits are set (the network is 10.20.36.0/22)\n"
    )


def test_the_preflight_reports_an_out_of_sync_file_in_one_line(copy: Suite) -> None:
    generated = copy.folder / "cases" / "generated.yaml"
    generated.write_text(generated.read_text().replace("West Europe", "Westeurope", 1))
    result = preflight([copy], read_flags([]), replay="golden", offline=True)
    lines = [str(p) for p in result.problems if "out of sync" in str(p)]
    assert lines == [f"{copy.name}: cases/generated.yaml is out of sync with cases/templates.yaml and cases/rows.csv "
                     f"(1 case(s) differ: V01); run `npx agent-evals cases expand {copy.name}`"]

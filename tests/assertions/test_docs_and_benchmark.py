"""docs/assertions.md snippets are valid configs; the benchmark script runs."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from agent_evals.assertions.registry import check_module, kit_check_names

ROOT = Path(__file__).resolve().parents[2]
PARSERS = {name: check_module(name).parse_config for name in kit_check_names()}


def documented_assertions() -> list[dict]:
    text = (ROOT / "docs" / "assertions.md").read_text()
    found = []
    for block in re.findall(r"```yaml\n(.*?)```", text, re.DOTALL):
        data = yaml.safe_load(block)
        items = data if isinstance(data, list) else data.get("tests", [])
        for item in items:
            found += item.get("assert", [item]) if isinstance(item, dict) else []
    return [item for item in found if isinstance(item, dict) and item.get("type") == "python"]


def test_every_assertion_has_a_documented_snippet() -> None:
    names = {Path(item["value"]).stem for item in documented_assertions()}
    assert names == set(PARSERS)


@pytest.mark.parametrize("item", documented_assertions(), ids=lambda item: Path(item["value"]).stem)
def test_documented_snippets_are_valid(item: dict) -> None:
    value = item["value"]
    assert value.startswith("file://../../assertions/"), value  # evals/<suite>/ → repository root
    assert (ROOT / "assertions" / Path(value).name).exists()
    PARSERS[Path(value).stem](item.get("config"))  # raises ConfigError when invalid


BENCHMARK = ROOT / "benchmarks" / "assertion_startup.py"


def test_benchmark_runs() -> None:
    done = subprocess.run(
        [
            sys.executable,
            str(BENCHMARK),
            "--runs",
            "1",
            "--target",
            "5000",
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    for name in PARSERS:
        assert re.search(rf"^{name} +median +\d+\.\d ms", done.stdout, re.MULTILINE), done.stdout

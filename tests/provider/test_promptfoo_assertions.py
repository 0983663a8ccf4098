"""The assertion types the kit knows are Promptfoo's own, and a file an assertion names must exist."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from agent_evals.provider.promptfoo_assertions import PROMPTFOO_TYPES, SPECIAL_TYPES, assertion_problems
from tests.conftest import PROJECT_ROOT

NODE = PROJECT_ROOT / "node_modules" / ".bin" / "node"


@pytest.mark.skipif(not NODE.exists(), reason="npm packages not installed")
def test_the_types_are_those_of_the_installed_promptfoo(tmp_path: Path) -> None:
    script = ("import('promptfoo').then(m => console.log(JSON.stringify("
              "{base: m.BaseAssertionTypesSchema.options, special: m.SpecialAssertionTypesSchema.options})))")
    done = subprocess.run([str(NODE), "-e", script], cwd=PROJECT_ROOT, capture_output=True, text=True, timeout=120,
                          env={"PATH": str(NODE.parent), "PROMPTFOO_DISABLE_TELEMETRY": "1",
                               "PROMPTFOO_DISABLE_UPDATE": "1", "HOME": str(tmp_path),
                               "PROMPTFOO_CONFIG_DIR": str(tmp_path / "promptfoo")})
    found = json.loads(done.stdout.strip().splitlines()[-1])
    assert sorted(PROMPTFOO_TYPES) == sorted(found["base"])
    assert sorted(SPECIAL_TYPES) == sorted(found["special"])


@pytest.mark.parametrize(
    ("item", "expected"),
    [
        ({"type": "python", "value": "file://checks/mine.py"}, []),
        ({"type": "python", "value": "file://checks/mine.py:grade"}, []),
        ({"type": "not-contains", "value": "x"}, []),
        ({"type": "promptfoo:redteam:harmful", "value": "x"}, []),
        ({"type": "select-best", "value": "x"}, []),
        ({"type": "pythonn", "value": "x"}, ["unknown assertion type 'pythonn'; did you mean python?"]),
        ({"type": "not-select-best"}, ["unknown assertion type 'not-select-best'; did you mean select-best?"]),
        ({"value": "x"}, ["no type; add `type: <assertion type>` (python, javascript, contains, llm-rubric, …)"]),
        ({"type": "javascript", "value": "file://checks/mien.py:grade"},
         ["file://checks/mien.py:grade names no file (checks/mien.py does not exist); did you mean mine.py?"]),
        ({"type": "assert-set", "assert": [{"type": "containz", "value": "x"}]},
         ["in its assert-set: unknown assertion type 'containz'; did you mean contains?"]),
    ],
)
def test_assertion_problems(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, item: dict, expected: list[str]) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "checks").mkdir()
    (tmp_path / "checks" / "mine.py").write_text("")
    assert assertion_problems(item, tmp_path) == expected

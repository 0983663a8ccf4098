"""``agent-evals run`` checks first: a broken suite prints its problems and nothing is created."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from tests.conftest import PROJECT_ROOT, clean_env


def test_a_broken_suite_stops_the_run_before_anything_starts(tmp_path: Path) -> None:
    home = tmp_path / "home"
    shutil.copytree(PROJECT_ROOT / "evals", home / "evals")
    shutil.copytree(PROJECT_ROOT / "agent_config", home / "agent_config")
    for shared in ("assertions", "providers", "hooks"):  # what the suites' file:// paths name
        (home / shared).symlink_to(PROJECT_ROOT / shared)
    case = home / "evals" / "spoke-create" / "cases" / "1-copy.yaml"
    case.write_text(case.read_text().replace("      mode: in_order", "      mod: in_order", 1))
    env = {**clean_env(), "AGENT_EVALS_HOME": str(home)}
    env.pop("AGENT_EVALS_DATA_DIR", None)
    env.pop("PROMPTFOO_CONFIG_DIR", None)

    done = subprocess.run(
        [sys.executable, "-m", "agent_evals.cli", "run", "spoke-create", "--replay"],
        env=env, cwd=home, capture_output=True, text=True, timeout=120,
    )

    assert done.returncode == 2, done.stdout + done.stderr
    assert done.stdout.splitlines() == [
        "  evals/spoke-create/cases/1-copy.yaml:23: C01: assertion 3 (tool_sequence): invalid config: unknown config "
        "key 'mod'; allowed keys: expected, mode, ignore",
        "check: 1 problem(s); nothing was run",
    ]
    assert "Traceback" not in done.stderr
    assert sorted(os.listdir(home)) == ["agent_config", "assertions", "evals", "hooks", "providers"]  # no portal data, no Promptfoo database
    assert sorted(p.name for p in (home / "evals" / "spoke-create").iterdir()) == [
        "cases", "golden", "promptfooconfig.yaml"
    ]

"""The README's "Adding a case", walked end to end as written, command by command, on a copy of the
project: the case file, the check, the missing golden conversation and the command the check names
for it, the plan entry, the recording, the replay. Every command is the README's or a hint's."""

from __future__ import annotations

import re
import subprocess
import textwrap
from pathlib import Path

import pytest

from tests.conftest import PROJECT_ROOT, clean_env
from tests.project_copy import copy_project

README = (PROJECT_ROOT / "README.md").read_text()
SECTION = README.split("## Adding a case", 1)[1].split("\n## ", 1)[0]
SUITE = "spoke-create"
pytestmark = pytest.mark.skipif(
    not (PROJECT_ROOT / "node_modules" / ".bin" / "promptfoo").exists(), reason="npm packages not installed"
)


def _yaml_blocks() -> list[str]:
    return [textwrap.dedent(block) for block in re.findall(r"```yaml\n(.*?)```", SECTION, re.S)]


def _command(start: str) -> str:
    """The README's command of this section that starts so, with the suite filled in."""
    found = [c.replace("<suite>", SUITE) for c in re.findall(r"`((?:npm run|npx) [^`]+)`", SECTION)]
    (command,) = dict.fromkeys(c for c in found if c.startswith(start))
    return command


def _shell(home: Path, command: str) -> subprocess.CompletedProcess[str]:
    env = {**clean_env(), "AGENT_EVALS_HOME": str(home), "PROMPTFOO_CONFIG_DIR": str(home / "promptfoo")}
    env.pop("AGENT_EVALS_DATA_DIR", None)
    done = subprocess.run(["bash", "-c", command], cwd=home, env=env, capture_output=True, text=True, timeout=600)
    assert "Traceback" not in done.stdout + done.stderr, f"{command}:\n{done.stdout[-3000:]}{done.stderr[-3000:]}"
    return done


def test_adding_a_case_as_the_readme_says(tmp_path: Path) -> None:
    case, fixtures, plan = _yaml_blocks()
    plan = textwrap.indent(plan, "  ")  # an entry under the plan's cases:
    check_offline = _command(f"npm run check -- {SUITE} --offline")
    check_replay = _command(f"npm run check -- {SUITE} --replay")
    record = _command("npx agent-evals golden")
    replay = _command(f"npm run eval -- {SUITE} --replay")
    assert record == f"npx agent-evals golden {SUITE} --stale"
    home = copy_project(tmp_path, (SUITE,))
    suite = home / "evals" / SUITE

    # 1. the case, in a file under cases/; the check says at once that it is fine
    cases = suite / "cases" / "1-copy.yaml"
    cases.write_text(cases.read_text() + "\n" + case)
    done = _shell(home, check_offline)
    assert done.returncode == 0 and done.stdout.splitlines()[-1] == "check: ok (23 case(s) in 1 suite(s))", done.stdout

    # 3. a replay needs its golden conversation: the check says so, and how to record it
    done = _shell(home, check_replay)
    assert done.returncode == 2
    (problem,) = [line for line in done.stdout.splitlines() if "C23" in line]
    assert problem.endswith(f"C23: no golden conversation (golden/C23.json): add the case to golden/plan.yaml, then "
                            f"record it: `{record}`"), problem
    # the plan entry first written without what the agent submits: one line says what to add, no traceback
    plans = suite / "golden" / "plan.yaml"
    kept = plans.read_text()
    plans.write_text(kept + "\n" + "\n".join(line for line in plan.splitlines()
                                           if "submitted" not in line and "$copy" not in line
                                           and "changes:" not in line and "/subnets/" not in line) + "\n")
    done = _shell(home, record)
    assert done.returncode == 2, done.stdout + done.stderr
    assert ("golden: spoke-create C23: not recorded: $source used, but the case has no input_diff check (whose "
            "source and expected_changes make it) and its plan entry no `submitted:` $copy (a configuration, or "
            "{$copy: <seed spoke>, changes: {<JSON pointer>: <value>}})") in done.stdout, done.stdout
    # the README's entry, and a second new case whose plan does not pass its checks: C23 is still written
    plans.write_text(kept + "\n" + plan + (
        "  C24:\n"
        "    shape: copy\n"
        "    submitted: {$copy: crm-dev-neu, changes: {/name: crm-dev-gwc, /location: germanywestcentral}}\n"
        '    user: ["Copy crm-dev-neu to Germany West Central as crm-dev-gwc.", "Yes.", "Thanks! [DONE]"]\n'))
    cases.write_text(cases.read_text() + "\n" + case.replace("C23", "C24").replace(
        "[get_spoke, validate_spoke_config", "[get_spoke, get_spoke_schema, validate_spoke_config"))
    done = _shell(home, record)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "golden: spoke-create C24: not recorded: the case does not pass with its plan: tool_sequence" in done.stdout
    assert "golden: wrote 1 cassette(s)" in done.stdout
    assert (suite / "golden" / "C23.json").is_file() and not (suite / "golden" / "C24.json").exists()

    # the new golden conversation replays and passes, as the README shows
    done = _shell(home, replay)
    assert done.returncode == 0, done.stdout[-3000:]
    assert re.search(r"^  C23 +PASS ", done.stdout, re.M), done.stdout
    assert fixtures.lstrip().startswith("vars:")  # step 2 (fixtures) is optional: this case needs none

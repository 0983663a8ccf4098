"""The check policy the JavaScript entry files need, written out from its Python source.

``hooks/kit.js`` and ``assertions/kit.js`` run in Node, so they cannot import the Python
constants they act on: which assertion types are model-graded (:data:`agent_evals.judge.MODEL_GRADED_TYPES`),
which kit checks are asked of the judge (:data:`agent_evals.assertions.registry.JUDGED_CHECKS`), how a kit
check is written in a suite and in its fast and negated forms (the registry's patterns), the case id that
leads a description, and the words of a row (:mod:`agent_evals.record.row_labels`). They ``require``
``hooks/policy.generated.json`` instead, which this module writes::

    .venv/bin/python -m agent_evals.hook_policy

``tests/test_hook_policy.py`` renders the policy in memory and fails, naming that command, when the
committed file differs; so a check added in Python reaches the hooks, or the tests say so.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from agent_evals.assertions import registry
from agent_evals.judge import JUDGE_OFF, MODEL_GRADED_TYPES
from agent_evals.paths import project_root
from agent_evals.record import row_labels

RELATIVE_PATH = Path("hooks") / "policy.generated.json"
REGENERATE = ".venv/bin/python -m agent_evals.hook_policy"  # from the project's root; a test runs it as written
# The pipe the kit's runner hands the suite's started system over on, to beforeAll (runner/system_handoff.py)
SYSTEM_FD_ENV = "AGENT_EVALS_SYSTEM_FD"


def policy() -> dict[str, Any]:
    """The policy as the hooks read it, from the Python constants as they are now."""
    return {
        "//": f"GENERATED from agent_evals by `{REGENERATE}`: do not edit. "
        f"tests/test_hook_policy.py fails when this file differs from the Python source.",
        "model_graded_types": sorted(MODEL_GRADED_TYPES),
        "judged_checks": list(registry.JUDGED_CHECKS),
        "kit_check_file": registry.KIT_FILE_PATTERN,
        "kit_check_js": registry.KIT_JS_PATTERN,
        "negated_js_prefix": registry.NEGATED_JS,
        "negated_py_function": registry.NEGATED_PY,
        "judge_off": JUDGE_OFF,
        "case_id": row_labels.CASE_ID_PATTERN,
        "not_graded": row_labels.NOT_GRADED,
        "informative": row_labels.INFORMATIVE,
        "case_line_marker": row_labels.CASE_LINE_MARKER,
        "system_fd_env": SYSTEM_FD_ENV,
    }


def render() -> str:
    return json.dumps(policy(), indent=2, ensure_ascii=False) + "\n"


def policy_path(root: Path | None = None) -> Path:
    return (project_root() if root is None else root) / RELATIVE_PATH


def out_of_date(root: Path | None = None) -> str | None:
    """None when the committed file is what the Python source makes; else one line saying what to run."""
    path = policy_path(root)
    if not path.is_file():
        return f"{RELATIVE_PATH} is missing; run `{REGENERATE}`"
    if path.read_text(encoding="utf-8") != render():
        return f"{RELATIVE_PATH} differs from the policy in the Python source; run `{REGENERATE}`"
    return None


def write(root: Path | None = None) -> Path:
    path = policy_path(root)
    if not path.parent.is_dir():
        raise FileNotFoundError(f"no {path.parent} folder: is {path.parent.parent} the project's root?")
    path.write_text(render(), encoding="utf-8")
    return path


def main(argv: Sequence[str] | None = None) -> int:
    if list(sys.argv[1:] if argv is None else argv):
        print(f"usage: {REGENERATE}  (no arguments; writes {RELATIVE_PATH})", file=sys.stderr)
        return 2
    try:
        path = write()
    except FileNotFoundError as err:
        print(f"hook_policy: {err}", file=sys.stderr)
        return 2
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

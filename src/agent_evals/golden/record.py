"""Record the golden cassettes: ``python -m agent_evals.golden [suite ...]``.

For each suite with a ``golden/plan.yaml``, a scripted model server plays every case's
plan (the agent's model and the simulated user's model), and the suite runs for real
through ``agent-evals run <suite> --record``: Promptfoo, the provider, the production
agent loop, the portal's MCP tools, real pull requests, the assertions and the cleanup.
The recordings replace ``golden/*.json``. A suite whose run does not pass is not
written, so golden cassettes are always conversations that pass every offline check.
"""

from __future__ import annotations

import logging
import os
import re
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import yaml

from agent_evals.golden.plan import Case, PlanError, load_plan, scripts_for
from agent_evals.runner.run import run_suite
from agent_evals.runner.suites import Suite, discover
from agent_evals.testing.conversations import ConversationScript, ScriptedConversations
from agent_evals.testing.scripted_openai import ScriptedOpenAIServer

log = logging.getLogger(__name__)

GOLDEN_DIR = "golden"
PLAN_FILE = "plan.yaml"
AGENT_MODEL = "golden-agent"
USER_MODEL = "golden-user"


def suite_cases(suite: Suite) -> list[Case]:
    """The cases of a suite as the plan needs them (ids, first messages, goals, assertions)."""
    config = yaml.safe_load(suite.config.read_text(encoding="utf-8"))
    provider = (config.get("providers") or [{}])[0]
    single_turn = (provider.get("config") or {}).get("mode") == "single_turn"
    template = str((config.get("prompts") or ["{{ prompt }}"])[0])
    defaults = list((config.get("defaultTest") or {}).get("assert") or [])
    cases = []
    for test in _tests(suite, config):
        vars_ = test.get("vars") or {}
        case_id = str((test.get("metadata") or {}).get("id") or "")
        if not case_id:
            raise PlanError(f"{suite.name}: a test without metadata.id: {test.get('description')!r}")
        user = vars_.get("simulated_user") or {}
        cases.append(
            Case(
                id=case_id,
                first_message_key=_render(template, vars_) if single_turn else None,
                goal=user.get("goal"),
                asserts=defaults + list(test.get("assert") or []),
            )
        )
    return cases


def _tests(suite: Suite, config: dict[str, Any]) -> list[dict[str, Any]]:
    tests = config.get("tests") or []
    if isinstance(tests, str):
        pattern = tests.removeprefix("file://")
        tests = []
        for path in sorted(suite.folder.glob(pattern)):
            tests.extend(yaml.safe_load(path.read_text(encoding="utf-8")) or [])
    return list(tests)


def _render(template: str, vars_: dict[str, Any]) -> str:
    def value(match: re.Match[str]) -> str:
        node: Any = vars_
        for part in match.group(1).split("."):
            node = node.get(part, "") if isinstance(node, dict) else ""
        return str(node)

    return re.sub(r"\{\{\s*([\w.]+)\s*\}\}", value, template)


def build_scripts(suite: Suite) -> list[ConversationScript]:
    plan_path = suite.folder / GOLDEN_DIR / PLAN_FILE
    entries, shapes = load_plan(plan_path)
    cases = suite_cases(suite)
    missing = [c.id for c in cases if c.id not in entries]
    if missing:
        raise PlanError(f"{plan_path}: no plan for case(s) {', '.join(missing)}")
    scripts: list[ConversationScript] = []
    for case in cases:
        scripts.extend(scripts_for(case, entries[case.id], shapes))
    return scripts


@contextmanager
def _model_env(server: ScriptedOpenAIServer) -> Iterator[None]:
    names = (
        "OPENAI_BASE_URL", "OPENAI_API_KEY", "AZURE_OPENAI_ENDPOINT", "AGENT_MODEL", "USER_MODEL", "JUDGE_MODEL",
        "PORTAL_URL",
    )
    saved = {k: os.environ.get(k) for k in names}
    for key in names:
        os.environ.pop(key, None)
    # The golden plans play agent and user; nothing plays a grader, so grading is off.
    os.environ.update(
        {"OPENAI_BASE_URL": server.base_url, "AGENT_MODEL": AGENT_MODEL, "USER_MODEL": USER_MODEL, "JUDGE_MODEL": "none"}
    )
    try:
        yield
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def record_suite(suite: Suite, promptfoo_args: list[str] | None = None) -> int:
    """Record one suite's golden cassettes; returns the run's exit status (0 = written)."""
    scripts = build_scripts(suite)
    responder = ScriptedConversations(scripts, agent_model=AGENT_MODEL, user_model=USER_MODEL)
    with tempfile.TemporaryDirectory(prefix="golden-") as tmp, ScriptedOpenAIServer(responder) as server:
        with _model_env(server):
            code = run_suite(suite, replay=None, record=tmp, promptfoo_args=promptfoo_args or [], workers=4)
        recorded = sorted((Path(tmp) / suite.name).glob("*.json"))
        if code != 0:
            log.error("suite %s did not pass with its golden plan (exit %d): golden/ left unchanged", suite.name, code)
            return code
        target = suite.folder / GOLDEN_DIR
        for old in target.glob("*.json"):
            old.unlink()
        for path in recorded:
            shutil.copy2(path, target / path.name)
        print(f"golden: wrote {len(recorded)} cassette(s) to {target}")
    return 0


def main(argv: list[str] | None = None) -> int:
    import sys

    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    names = list(sys.argv[1:] if argv is None else argv)
    suites = [s for s in discover() if (s.folder / GOLDEN_DIR / PLAN_FILE).is_file()]
    if names:
        unknown = set(names) - {s.name for s in suites}
        if unknown:
            log.error("no golden plan for suite(s): %s", ", ".join(sorted(unknown)))
            return 2
        suites = [s for s in suites if s.name in names]
    worst = 0
    for suite in suites:
        worst = max(worst, record_suite(suite, ["--no-cache"]))
    return worst

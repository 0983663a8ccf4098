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

from agent_evals.golden.plan import Case, PlanError, load_plan, scripts_for
from agent_evals.packs import Pack, load_pack
from agent_evals.runner.run import run_suite
from agent_evals.runner.suite_files import load_suite, render_prompt
from agent_evals.runner.suites import Suite, discover
from agent_evals.testing.conversations import ConversationScript, ScriptedConversations
from agent_evals.testing.scripted_openai import ScriptedOpenAIServer

log = logging.getLogger(__name__)

GOLDEN_DIR = "golden"
PLAN_FILE = "plan.yaml"
AGENT_MODEL = "golden-agent"
USER_MODEL = "golden-user"

def suite_pack(suite: Suite) -> Pack:
    """The domain pack the suite's (first) provider names (``generic`` when none)."""
    loaded = load_suite(suite)
    provider = loaded.providers[0] if loaded.providers else None
    return load_pack(str((provider.config if provider is not None else {}).get("pack") or "generic"))


def suite_cases(suite: Suite) -> list[Case]:
    """The cases of a suite as the plan needs them (ids, first messages, goals, assertions)."""
    loaded = load_suite(suite)
    provider = loaded.providers[0] if loaded.providers else None
    single_turn = provider is not None and provider.config.get("mode") == "single_turn"
    template = loaded.prompts[0] if loaded.prompts else "{{ prompt }}"
    cases = []
    for test in loaded.tests:
        if not test.case_id:
            raise PlanError(f"{suite.name}: a test without metadata.id: {test.description!r}")
        user = test.vars.get("simulated_user") or {}
        cases.append(
            Case(
                id=test.case_id,
                first_message_key=render_prompt(template, test.vars) if single_turn else None,
                goal=user.get("goal") if isinstance(user, dict) else None,
                asserts=[dict(a) for a in test.asserts],
                vars=dict(test.vars),
            )
        )
    return cases

def build_scripts(suite: Suite) -> list[ConversationScript]:
    plan_path = suite.folder / GOLDEN_DIR / PLAN_FILE
    entries, shapes = load_plan(plan_path)
    cases = suite_cases(suite)
    missing = [c.id for c in cases if c.id not in entries]
    if missing:
        raise PlanError(f"{plan_path}: no plan for case(s) {', '.join(missing)}")
    pack = suite_pack(suite)
    scripts: list[ConversationScript] = []
    for case in cases:
        scripts.extend(scripts_for(case, entries[case.id], shapes, pack))
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

def record_suite(suite: Suite, promptfoo_args: list[str] | None = None, only: list[str] | None = None) -> int:
    """Record one suite's golden cassettes (``only`` these cases, when given); returns the run's exit
    status (0 = written)."""
    scripts = build_scripts(suite)
    promptfoo_args = list(promptfoo_args or [])
    if only:
        promptfoo_args += ["--filter-pattern", "^(" + "|".join(re.escape(c) for c in only) + r")\b"]
    responder = ScriptedConversations(scripts, agent_model=AGENT_MODEL, user_model=USER_MODEL)
    with tempfile.TemporaryDirectory(prefix="golden-") as tmp, ScriptedOpenAIServer(responder) as server:
        with _model_env(server):
            code = run_suite(suite, replay=None, record=tmp, promptfoo_args=promptfoo_args, workers=4)
        recorded = sorted((Path(tmp) / suite.name).glob("*.json"))
        if code != 0:
            log.error("suite %s did not pass with its golden plan (exit %d): golden/ left unchanged", suite.name, code)
            return code
        target = suite.folder / GOLDEN_DIR
        for old in target.glob("*.json"):
            if not only or old.stem in only:
                old.unlink()
        for path in recorded:
            shutil.copy2(path, target / path.name)
        print(f"golden: wrote {len(recorded)} cassette(s) to {target}")
    return 0

def stale_cases(suite: Suite) -> list[tuple[str, str]]:
    """``(case id, what changed)`` for each golden cassette of ``suite`` that went stale."""
    from agent_evals.preflight.replay_checks import check_cassettes, replay_folder
    from agent_evals.preflight.suite_checks import provider_plans

    loaded = load_suite(suite)
    problems: list[Any] = []
    plans = provider_plans(loaded, problems)
    found = []
    for problem in check_cassettes(loaded, loaded.tests, plans, replay_folder(loaded, GOLDEN_DIR), allow_stale=False):
        case_id, _, text = problem.message.partition(": ")
        found.append((case_id, text))
    return found

def main(argv: list[str] | None = None) -> int:
    """``python -m agent_evals.golden [suite ...] [--stale]``: record the golden cassettes; with
    ``--stale``, list the stale ones and re-record only those."""
    import sys

    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    names = list(sys.argv[1:] if argv is None else argv)
    stale_only = "--stale" in names
    names = [n for n in names if n != "--stale"]
    suites = [s for s in discover() if (s.folder / GOLDEN_DIR / PLAN_FILE).is_file()]
    if names:
        unknown = set(names) - {s.name for s in suites}
        if unknown:
            log.error("no golden plan for suite(s): %s", ", ".join(sorted(unknown)))
            return 2
        suites = [s for s in suites if s.name in names]
    worst = 0
    for suite in suites:
        only = None
        if stale_only:
            stale = stale_cases(suite)
            for case_id, text in stale:
                print(f"golden: {suite.name} {case_id}: {text}")
            if not stale:
                print(f"golden: {suite.name}: no stale golden conversation")
                continue
            only = sorted({case_id for case_id, _ in stale})
        worst = max(worst, record_suite(suite, ["--no-cache"], only=only))
    return worst


model_env = _model_env  # the scripted models' environment, for recording a promoted case (agent_evals.live.promote)

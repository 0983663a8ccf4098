"""Record the golden cassettes: ``npx agent-evals golden [suite ...] [--stale]`` (also
``python -m agent_evals.golden``).

For each suite with a ``golden/plan.yaml``, a scripted model server plays every case's
plan (the agent's model and the simulated user's model), and the suite runs for real
through ``agent-evals run <suite> --record``: Promptfoo, the provider, the production
agent loop, the portal's MCP tools, real pull requests, the assertions and the cleanup.
The recording of each case that passes replaces its ``golden/<case>.json``; a case that
fails, or whose plan does not fit it, is named with why and keeps its old cassette (if
any), so golden cassettes are always conversations that pass every offline check, and one
broken case does not hold back the others. ``--stale`` records only the cases whose
cassette is missing or stale.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import re
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from agent_evals.golden import add_arguments
from agent_evals.golden.plan import Case, PlanError, load_plan, scripts_for
from agent_evals.packs import Pack, load_pack
from agent_evals.record import KitError
from agent_evals.runner.run import run_suite
from agent_evals.suites.files import load_suite, render_prompt
from agent_evals.suites.discovery import Suite, discover
from agent_evals.testing.conversations import ConversationScript, ScriptedConversations
from agent_evals.testing.scripted_openai import ScriptedOpenAIServer
from agent_evals.report.figures import brief

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

def build_scripts(suite: Suite, *, only: list[str] | None = None,
                  problems: dict[str, str] | None = None) -> list[ConversationScript]:
    """The scripted models of the suite's cases (``only`` these). Raises PlanError, unless ``problems`` is
    given: then a case whose plan is missing or does not fit goes there (case id → why) and is left out."""
    plan_path = suite.folder / GOLDEN_DIR / PLAN_FILE
    entries, shapes = load_plan(plan_path)
    cases = [c for c in suite_cases(suite) if only is None or c.id in only]
    missing = [c.id for c in cases if c.id not in entries]
    if missing and problems is None:
        raise PlanError(f"{plan_path}: no plan for case(s) {', '.join(missing)}")
    pack = suite_pack(suite)
    scripts: list[ConversationScript] = []
    for case in cases:
        try:
            if case.id not in entries:
                raise PlanError(f"{case.id}: {plan_path.name} has no entry for it (add one under cases:)")
            scripts.extend(scripts_for(case, entries[case.id], shapes, pack))
        except PlanError as exc:
            if problems is None:
                raise
            problems[case.id] = str(exc).removeprefix(f"{case.id}: ")
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
    """Record one suite's golden cassettes (``only`` these cases, when given): each case that passes is
    written, each that fails (or whose plan does not fit it) is named and keeps its old cassette.
    Returns 0 when every case was written, 1 when some were not, 2 when none could run."""
    problems: dict[str, str] = {}
    scripts = build_scripts(suite, only=only, problems=problems)
    wanted = [c.id for c in suite_cases(suite) if (only is None or c.id in only) and c.id not in problems]
    for case_id, why in problems.items():
        print(f"golden: {suite.name} {case_id}: not recorded: {why}", flush=True)
    if not wanted:
        return 2 if problems else 0
    responder = ScriptedConversations(scripts, agent_model=AGENT_MODEL, user_model=USER_MODEL)
    with tempfile.TemporaryDirectory(prefix="golden-") as tmp, ScriptedOpenAIServer(responder) as server:
        results = Path(tmp) / "results.json"
        args = [*(promptfoo_args or []), "-o", str(results),
                "--filter-pattern", "^(" + "|".join(re.escape(c) for c in wanted) + r")\b"]
        with _model_env(server):
            run_suite(suite, replay=None, record=tmp, promptfoo_args=args, workers=4)
        passed, failed = _outcomes(results)
        target = suite.folder / GOLDEN_DIR
        written = 0
        for path in sorted((Path(tmp) / suite.name).glob("*.json")):
            if _case_of(path) in passed:
                shutil.copy2(path, target / path.name)
                written += 1
    known = {c.id for c in suite_cases(suite)}
    for old in target.glob("*.json"):  # the cassette of a case the suite no longer has
        if _case_of(old) and _case_of(old) not in known:
            old.unlink()
    for case_id in wanted:
        if case_id not in passed:
            why = failed.get(case_id, "it did not run (see the lines above)")
            print(f"golden: {suite.name} {case_id}: not recorded: the case does not pass with its plan: {why}",
                  flush=True)
    print(f"golden: wrote {written} cassette(s) to {target}", flush=True)
    return 0 if written == len(wanted) and not problems else 1


def _outcomes(results: Path) -> tuple[set[str], dict[str, str]]:
    """(case ids that passed, case id → first failing reason or error) of a run's -o file."""
    try:
        rows = json.loads(results.read_text(encoding="utf-8"))["results"]["results"]
    except (OSError, ValueError, KeyError, TypeError):
        return set(), {}
    passed, failed = set(), {}
    for row in rows:
        case_id = str(((row.get("testCase") or {}).get("metadata") or {}).get("id") or "")
        if row.get("success"):
            passed.add(case_id)
            continue
        components = (row.get("gradingResult") or {}).get("componentResults") or []
        reason = next((c.get("reason") for c in components if not c.get("pass")), None) or row.get("error") or "?"
        failed[case_id] = brief(str(reason), 200)
    return passed, failed


def _case_of(cassette: Path) -> str:
    """The case id a recorded cassette is for (its ``case_id``)."""
    try:
        return str(json.loads(cassette.read_text(encoding="utf-8")).get("case_id") or "")
    except (OSError, ValueError):
        return ""

def stale_cases(suite: Suite) -> list[tuple[str, str]]:
    """``(case id, what changed)`` for each golden cassette of ``suite`` that went stale."""
    from agent_evals.preflight.replay_checks import check_cassettes, replay_folder  # lazy: keeps agent_evals.golden.record's start-up as small as it is
    from agent_evals.preflight.suite_checks import provider_plans  # lazy: keeps agent_evals.golden.record's start-up as small as it is

    loaded = load_suite(suite)
    problems: list[Any] = []
    plans = provider_plans(loaded, problems)
    found = []
    for problem in check_cassettes(loaded, loaded.tests, plans, replay_folder(loaded, GOLDEN_DIR), allow_stale=False):
        case_id, _, text = problem.message.partition(": ")
        found.append((case_id, text))
    return found

def record_command(names: list[str], *, stale_only: bool) -> int:
    """Record the golden cassettes of ``names`` (all suites with a plan when empty); exit 0 all written,
    1 some case not (each named with why), 2 nothing could be recorded."""
    suites = [s for s in discover() if (s.folder / GOLDEN_DIR / PLAN_FILE).is_file()]
    if names:
        unknown = set(names) - {s.name for s in suites}
        if unknown:
            print(f"golden: no golden plan ({GOLDEN_DIR}/{PLAN_FILE}) for suite(s) {', '.join(sorted(unknown))}; "
                  f"suites with one: {', '.join(s.name for s in suites) or 'none'}")
            return 2
        suites = [s for s in suites if s.name in names]
    worst = 0
    for suite in suites:
        only = None
        try:
            if stale_only:
                stale = stale_cases(suite)
                for case_id, text in stale:
                    print(f"golden: {suite.name} {case_id}: {text}")
                if not stale:
                    print(f"golden: {suite.name}: no stale golden conversation")
                    continue
                only = sorted({case_id for case_id, _ in stale})
            worst = max(worst, record_suite(suite, ["--no-cache"], only=only))
        except (PlanError, KitError) as exc:  # the plan or the suite cannot be read at all: one line
            print(f"golden: {suite.name}: {exc}")
            worst = 2
    return worst


model_env = _model_env  # the scripted models' environment, for recording a promoted case (agent_evals.live.promote)


def main(argv: list[str] | None = None) -> int:
    """``python -m agent_evals.golden [suite ...] [--stale]`` (the same as ``agent-evals golden``)."""
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    parser = argparse.ArgumentParser(prog="python -m agent_evals.golden", description=__doc__.splitlines()[0])
    add_arguments(parser)
    args = parser.parse_args(argv)
    return record_command(args.suites, stale_only=args.stale)

"""``agent-evals live promote ID --suite S``: a real conversation becomes a regression case of a suite.

It reads the conversation (the portal, or ``--from`` files), scores it with the live policy to
know which checks applied and which failed, and writes, for review before committing:

* the case in ``evals/<suite>/cases/from-production.yaml`` (listed in the suite's
  ``promptfooconfig.yaml`` when the suite lists its case files), id ``P<nn>`` unless ``--id``
  (:func:`agent_evals.live.promote_case.case_entry`); the user side is the user's own messages, or
  with ``--user simulated`` (the default when a judge model is configured) a simulated-user brief
  the judge drafts (:mod:`agent_evals.live.brief`);
* its golden plan entry in ``golden/plan.yaml``, then its golden conversation, recorded the way
  ``python -m agent_evals.golden`` records them: the suite runs for real (Promptfoo, the provider,
  the agent loop, the portal's tools) with a scripted model that plays the conversation's recorded
  model replies. The offline replay (``./evals.sh``) then runs the case at once and
  ``agent-evals check`` accepts it. A conversation that failed its checks in production fails them
  on replay too: the case says so, as a regression case should, until the agent is fixed.

Exit status: 0 written (the case passes on its recording), 1 written (the case fails on its
recording, as in production), 2 nothing written (an unknown conversation or suite, another
agent's suite, a bad policy, a case id in use, a brief the judge could not draft).
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import tempfile
from pathlib import Path
from typing import Any

import yaml

from agent_evals.live.brief import draft_brief
from agent_evals.live.parallel import portal_env
from agent_evals.live.policy import POLICY_FILE, load_policy
from agent_evals.live.promote_case import case_entry, plan_entry
from agent_evals.live.sampling import SampleSpec
from agent_evals.live.scoring import LiveSnapshots, Scorer
from agent_evals.live.sources import ALL_TIME, fetch_conversation, from_files, read_conversation
from agent_evals.live.stored import StoredConversation
from agent_evals.paths import evals_dir
from agent_evals.record import KitError
from agent_evals.judge import judge_configured
from agent_evals.suites.discovery import select
from agent_evals.suites.files import load_suite

CASE_FILE = "from-production.yaml"
HEADER = ("# Cases promoted from production conversations by `agent-evals live promote` (docs/live.md).\n"
          "# Review each one before committing: the user side, the checks, the fixtures.\n")


class PromoteError(KitError):
    kind = "config"


def promote_command(args: argparse.Namespace) -> int:
    try:
        return _promote(args)
    except PromoteError as exc:
        print(f"promote: {exc}")
        return 2
    except KitError as exc:
        print(f"promote: {exc}")
        return 2


def _promote(args: argparse.Namespace) -> int:
    from agent_evals.golden.record import suite_pack  # lazy: keeps agent_evals.live.promote's start-up as small as it is

    try:
        (suite,) = select(args.suite)
    except ValueError as exc:
        raise PromoteError(str(exc)) from None
    loaded = load_suite(suite)
    agent = str((loaded.providers[0].config if loaded.providers else {}).get("agent") or "")
    policy, problems = load_policy(args.policy or evals_dir() / POLICY_FILE)
    if policy is None:
        raise PromoteError("the policy has problems:\n" + "\n".join(f"  {p}" for p in problems))
    portal = args.portal or (None if args.files else os.environ.get("PORTAL_URL"))
    conversation = _conversation(args.conversation, portal, args.files)
    if conversation.agent.name != agent:
        raise PromoteError(f"conversation {conversation.id} is of agent {conversation.agent.name!r}; suite "
                           f"{suite.name} runs agent {agent!r}")
    case_id = args.case_id or _next_id({t.case_id for t in loaded.tests})
    if case_id in {t.case_id for t in loaded.tests}:
        raise PromoteError(f"case id {case_id} is in use in {suite.name}; give another with --id")
    snapshots = LiveSnapshots(portal_env(portal, os.environ.get("PORTAL_TOKEN") or None)) if portal else None
    scored = Scorer(policy, snapshots=snapshots, judge=False).score(conversation)
    if scored.outcome == "error":
        raise PromoteError(f"conversation {conversation.id} cannot be a case: [{scored.error_kind}] {scored.error}")
    simulated = args.user == "simulated" or (args.user == "auto" and judge_configured())
    brief = draft_brief(conversation.record) if simulated else None
    fixtures, notes = suite_pack(suite).promoted_fixtures(conversation.record)
    skipped = {line.split(": ", 1)[0] for line in scored.not_applicable}  # a `when:` that did not hold
    applied = [c for c in policy.agents[agent].checks if c.metric not in skipped]
    defaults = list((loaded.config.get("defaultTest") or {}).get("assert") or [])
    case = case_entry(case_id, conversation, applied, defaults=defaults, brief=brief, fixtures=fixtures)
    path = _write_case(suite.folder, case)
    _write_plan(suite.folder / "golden" / "plan.yaml", case_id, plan_entry(conversation, simulated=simulated))
    failed = [r["metric"] for r in scored.results if not r["pass"]]
    print(f"promote: {case_id} ({'simulated user' if simulated else 'fixed messages'}) → {path}")
    for note in notes:
        print(f"promote: note: {note}")
    if failed:
        print(f"promote: in production it failed {', '.join(failed)}: the case fails on replay until the agent is fixed")
    if args.no_golden:
        print(f"promote: record its golden conversation with `python -m agent_evals.golden {suite.name}`")
        return 1 if failed else 0
    code = _record(suite, case_id)
    print(f"promote: review {path} and golden/{case_id}.json, then commit them")
    return 0 if code == 0 else 1


def _conversation(conversation_id: str, portal: str | None, files: list[Path] | None) -> StoredConversation:
    if files:
        selection = from_files(files, ALL_TIME, (), SampleSpec())
        found = next((c for c in selection.conversations if c.id == conversation_id), None)
        if found is None:
            raise PromoteError(f"no conversation {conversation_id} in {', '.join(map(str, files))}")
        return read_conversation(found)
    if not portal:
        raise PromoteError("give --portal URL (or set PORTAL_URL) or --from FILE.jsonl")
    return fetch_conversation(portal, os.environ.get("PORTAL_TOKEN") or None, conversation_id)


def _next_id(used: set[str]) -> str:
    numbers = [int(m.group(1)) for u in used if (m := re.fullmatch(r"P(\d+)", u))]
    return f"P{max(numbers, default=0) + 1:02d}"


def _write_case(folder: Path, case: dict[str, Any]) -> Path:
    path = folder / "cases" / CASE_FILE
    text = path.read_text(encoding="utf-8") if path.is_file() else HEADER
    text += yaml.safe_dump([case], sort_keys=False, allow_unicode=True, width=110)
    path.write_text(text, encoding="utf-8")
    _list_in_config(folder / "promptfooconfig.yaml")
    return path


def _list_in_config(config: Path) -> None:
    """Add the case file to the suite's ``tests:`` when the suite lists its case files."""
    entry = f"file://cases/{CASE_FILE}"
    lines = config.read_text(encoding="utf-8").splitlines(keepends=True)
    start = next((i for i, line in enumerate(lines) if line.startswith("tests:")), None)
    if start is None or entry in "".join(lines):
        return
    head = lines[start]
    single = re.match(r"tests:\s*(file://\S+)", head)
    if single:
        if "*" in single.group(1):
            return  # a glob takes the new file too
        lines[start: start + 1] = ["tests:\n", f"  - {single.group(1)}\n", f"  - {entry}\n"]
    else:
        last = start
        while last + 1 < len(lines) and lines[last + 1].startswith("  - "):
            last += 1
        if last == start:
            raise PromoteError(f"{config}: add {entry} to its tests yourself (they are not a list of case files)")
        lines.insert(last + 1, f"  - {entry}\n")
    config.write_text("".join(lines), encoding="utf-8")


def _write_plan(path: Path, case_id: str, entry: dict[str, Any]) -> None:
    text = path.read_text(encoding="utf-8")
    data = yaml.safe_load(text) or {}
    if case_id in (data.get("cases") or {}):
        raise PromoteError(f"{path} already plans {case_id}")
    block = yaml.safe_dump({case_id: entry}, sort_keys=False, allow_unicode=True, width=110)
    indented = "".join(f"  {line}" if line.strip() else line for line in block.splitlines(keepends=True))
    if re.search(r"^cases:\s*\{\}\s*$", text, re.MULTILINE):
        text = re.sub(r"^cases:\s*\{\}\s*$", "cases:", text, flags=re.MULTILINE)
    if not re.search(r"^cases:\s*$", text, re.MULTILINE) or _after_cases(text):
        raise PromoteError(f"{path}: add this entry under `cases:` yourself:\n{indented}")
    path.write_text(text.rstrip("\n") + "\n" + indented, encoding="utf-8")
    if case_id not in (yaml.safe_load(path.read_text(encoding="utf-8")).get("cases") or {}):
        raise PromoteError(f"{path}: the entry of {case_id} did not land under `cases:`")


def _after_cases(text: str) -> bool:
    """Whether a top-level key follows ``cases:`` (then appending would not put the entry under it)."""
    tail = text[re.search(r"^cases:.*$", text, re.MULTILINE).end():]  # type: ignore[union-attr]  # the caller found `cases:`
    return bool(re.search(r"^[A-Za-z_]", tail, re.MULTILINE))


def _record(suite: Any, case_id: str) -> int:
    from agent_evals.golden.record import AGENT_MODEL, USER_MODEL, build_scripts, model_env  # lazy: keeps agent_evals.live.promote's start-up as small as it is
    from agent_evals.runner.run import run_suite  # lazy: keeps agent_evals.live.promote's start-up as small as it is
    from agent_evals.testing.conversations import ScriptedConversations  # lazy: keeps agent_evals.live.promote's start-up as small as it is
    from agent_evals.testing.scripted_openai import ScriptedOpenAIServer  # lazy: keeps agent_evals.live.promote's start-up as small as it is

    responder = ScriptedConversations(build_scripts(suite), agent_model=AGENT_MODEL, user_model=USER_MODEL)
    with tempfile.TemporaryDirectory(prefix="promote-") as tmp, ScriptedOpenAIServer(responder) as server:
        with model_env(server):
            code = run_suite(suite, replay=None, record=tmp, workers=1,
                             promptfoo_args=["--no-cache", "--filter-pattern", rf"^{re.escape(case_id)}\b"])
        recorded = Path(tmp) / suite.name / f"{case_id}.json"
        if code not in (0, 100) or not recorded.is_file():
            print(f"promote: the golden conversation of {case_id} could not be recorded (exit {code}); "
                  f"fix the case, then `python -m agent_evals.golden {suite.name}`")
            return 2
        shutil.copy2(recorded, suite.folder / "golden" / recorded.name)
    verdict = "passes" if code == 0 else "fails (as in production)"
    print(f"promote: {case_id} {verdict} on its recorded conversation; golden/{case_id}.json written")
    return code

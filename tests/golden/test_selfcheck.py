"""The suites' self-check: every golden cassette passes every offline assertion of its case, and
each broken copy of it is caught by the assertion that claims to catch it (replayed for real).

A generated suite's cases differ only in their data: the self-check takes one case per template
and phrasing style, the first in table order (10 of the 48 of spoke-create-variants); every golden
cassette of the suite still replays in tests/runner/test_replay_all.py."""

from __future__ import annotations

import functools
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from agent_evals.agent.worker_sessions import WORKER_SESSIONS
from agent_evals.processes import KitStarter
from agent_evals.cases import has_cases
from agent_evals.packs.release.repository import start_run
from agent_evals.packs.release.system import RUN_ENV
from agent_evals.packs.spoke.undo import abandon
from agent_evals.conversation.cassette import load_cassette, save_cassette
from agent_evals.golden.record import suite_cases
from agent_evals.golden.record import suite_pack as _suite_pack
from agent_evals.golden.selfcheck import grade_row, mutations
from agent_evals.golden.user_side import case_user, user_mutations
from agent_evals.packs.spoke.portal.process import PortalProcess
from agent_evals.packs.spoke.portal.api import PortalAPI
from agent_evals.packs.spoke.runs import portal_settings
from agent_evals.provider.run import call_api
from agent_evals.suites.files import load_suite
from agent_evals.suites.discovery import Suite, discover
from tests.spoke_prs import prs

SUITES = discover()
_loaded = functools.cache(load_suite)  # each case replays its suite's cassettes several times: read each suite once
suite_pack = functools.cache(_suite_pack)  # … and asks for its pack three times (each reads the suite's files)


def _sample(suite: Suite, cases: list[Any]) -> list[Any]:
    """A generated suite's first case of each (template, style); a hand-written suite's every case."""
    if not has_cases(suite.folder):
        return cases
    metadata = {t.case_id: t.metadata for t in _loaded(suite).tests}
    seen: set[tuple[Any, Any]] = set()
    kept = []
    for case in cases:
        key = (metadata[case.id].get("template"), metadata[case.id].get("style"))
        if key not in seen:
            seen.add(key)
            kept.append(case)
    return kept


CASES = [(suite, case) for suite in SUITES for case in _sample(suite, suite_cases(suite))]


@pytest.fixture(scope="module")
def portals(
    tmp_path_factory: pytest.TempPathFactory, portal_starter: KitStarter
) -> Iterator[dict[str, PortalProcess]]:
    """One portal per suite (each with the suite's settings)."""
    running: dict[str, PortalProcess] = {}
    try:
        for suite in SUITES:
            root = tmp_path_factory.mktemp(f"selfcheck-{suite.name}")
            running[suite.name] = PortalProcess(
                data_dir=root / "data", token=PortalProcess.new_token(), settings_file=portal_settings(suite),
                starter=portal_starter,
            ).start()
        yield running
    finally:
        for portal in running.values():
            portal.stop()


@functools.cache
def _suite_config(suite: Suite) -> dict[str, Any]:
    return yaml.safe_load(suite.config.read_text())


def _test(suite: Suite, case_id: str) -> dict[str, Any]:
    """The test as Promptfoo hands it to the provider (defaultTest's assertions first)."""
    for test in _loaded(suite).tests:
        if test.case_id == case_id:
            return {"description": test.description, "vars": dict(test.vars), "metadata": dict(test.metadata),
                    "assert": [dict(a) for a in test.asserts]}
    raise LookupError(case_id)


def _replay(suite: Suite, test: dict[str, Any], folder: Path) -> dict[str, Any]:
    config = dict(_suite_config(suite)["providers"][0]["config"])
    config.update(replay=str(folder), basePath=str(suite.folder))
    prompt = test.get("vars", {}).get("question", "")
    context = {"vars": test.get("vars", {}), "test": test, "evaluationId": "selfcheck"}
    return call_api(prompt, {"config": config}, context)


def _both_paths_agree(folder: Path, asserts: list[dict[str, Any]], row: dict[str, Any]) -> None:
    """The provider's grading (the fast path) and assertions/<check>.py in Promptfoo's way agree."""
    fast = {c["position"]: c for c in row["metadata"]["checks"]}
    kit = [(i, a) for i, a in enumerate(asserts) if str(a.get("value", "")).endswith(".py") and a["type"] == "python"]
    assert sorted(fast) == [i for i, _ in kit]
    for position, item in kit:
        module = _assertion_file(folder, item)
        slow = module.get_assert(row["output"], {"providerResponse": row, "config": item.get("config") or {}})
        got = fast[position]
        assert (got["pass"], got["score"], got["reason"], got["namedScores"]) == (
            slow["pass"], slow["score"], slow["reason"], slow.get("namedScores", {})
        ), item


def _assertion_file(folder: Path, item: dict[str, Any]) -> Any:
    import importlib.util

    path = (folder / str(item["value"]).removeprefix("file://")).resolve()
    spec = importlib.util.spec_from_file_location(f"paths_{path.stem}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def release_run(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A release run's folder, as a run's workers find it: each conversation of this process then uses
    the same working copy, reset in between, and the agent's kept servers (``lifetime: worker``)."""
    run = start_run(tmp_path_factory.mktemp("release"), "selfcheck")
    try:
        yield run.root
    finally:
        WORKER_SESSIONS.close()  # the kept servers work in the run's folder: stopped before it goes
        run.close()


@pytest.mark.parametrize(("suite", "case"), CASES, ids=[f"{s.name}-{c.id}" for s, c in CASES])
def test_each_golden_cassette_and_its_mutations(
    suite: Suite, case: Any, portals: dict[str, PortalProcess], release_run: Path, tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    portal = portals[suite.name]
    monkeypatch.setenv(RUN_ENV, str(release_run))
    monkeypatch.setenv("PORTAL_URL", portal.url)
    monkeypatch.setenv("PORTAL_TOKEN", portal.token or "")
    api = PortalAPI(portal.url, token=portal.token)
    test = _test(suite, case.id)
    asserts = test["assert"]
    golden = load_cassette(suite.folder / "golden" / f"{case.id}.json")

    baseline = _replay(suite, test, suite.folder / "golden")
    try:
        assert "error" not in baseline, baseline.get("error")
        _both_paths_agree(suite.folder, asserts, baseline)
        graded = grade_row(suite.folder, asserts, baseline)
        assert graded and all(graded.values()), f"golden {case.id} fails offline checks: {graded}"
        if suite_pack(suite).system.name == "repository":
            _made_is_shown(baseline["metadata"])
    finally:
        abandon(api, [p["id"] for p in prs(baseline["metadata"])])

    caught = []
    for mutation in mutations(case, golden, suite_pack(suite)):
        folder = tmp_path / mutation.name.replace(" ", "-")
        save_cassette(mutation.cassette, folder / f"{case.id}.json")
        row = _replay(suite, test, folder)
        try:
            assert "error" not in row, f"{mutation.name}: the mutated cassette did not replay: {row.get('error')}"
            _both_paths_agree(suite.folder, asserts, row)
            graded = grade_row(suite.folder, asserts, row)
            assert graded.get(mutation.must_fail) is False, (
                f"{case.id}: '{mutation.name}' was not caught by {mutation.must_fail}: {json.dumps(graded)}"
            )
            caught.append(mutation.name)
        finally:
            abandon(api, [p["id"] for p in prs(row["metadata"])])
    assert any(name.startswith("forbidden tool") for name in caught)
    assert len(caught) >= 3, f"{case.id}: only {caught} were checked"
    _user_mutation_replays_invalid(suite, case, test, golden, tmp_path, api)
    assert api.list_pull_requests(status="active") == []


def _made_is_shown(metadata: dict[str, Any]) -> None:
    """The release pack's record lists the branches and commits its calls made (and the files they
    wrote), and the repository's end state shows each branch and commit."""
    made = {(e["kind"], e["id"]) for e in metadata["side_effects"]}
    shown = {(c["kind"], c["name"]) for c in metadata["snapshot"]["resources"]["side_effects"]}
    assert {kind for kind, _ in made} <= {"branch", "commit", "file"}, made
    assert {m for m in made if m[0] != "file"} <= shown, (made, shown)  # a committed file is not "uncommitted"
    calls = {c["name"] for c in metadata["tool_calls"] if c["outcome"] == "ok"}
    assert ("git_commit" in calls) == any(kind == "commit" for kind, _ in made), (calls, made)


USER_KINDS = ["early done", "invented fact", "role swap", "leaked instruction", "repeated message"]


def _user_mutation_replays_invalid(suite: Suite, case: Any, test: dict[str, Any], golden: Any, tmp_path: Path,
                                   api: PortalAPI) -> None:
    """One user-side mutation per case (the kinds in turn), replayed for real: the row is invalid (kind
    user_simulator), names the turn and the evidence, and keeps the kit's deterministic verdicts."""
    user = case_user(test["vars"].get("simulated_user"), golden, suite_pack(suite).user_framing)
    if user is None:
        return  # fixed messages: no user checks apply
    made = {m.name: m for m in user_mutations(golden, user)}
    start = [c.id for _, c in CASES].index(case.id) % len(USER_KINDS)
    name = next(n for n in USER_KINDS[start:] + USER_KINDS[:start] if n in made)
    mutation = made[name]
    folder = tmp_path / f"user-{name.replace(' ', '-')}"
    save_cassette(mutation.cassette, folder / f"{case.id}.json")
    row = _replay(suite, test, folder)
    try:
        assert row.get("error", "").startswith(f"[user_simulator] invalid: {case.id} turn "), (name, row.get("error"))
        review = row["metadata"]["user_review"]
        assert review["invalid"] is True and mutation.must_find in {f["check"] for f in review["findings"]}
        assert "checks" in row["metadata"]  # graded for the record, though the row is neither pass nor fail
    finally:
        abandon(api, [p["id"] for p in prs(row["metadata"])])

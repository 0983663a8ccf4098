"""``agent-evals run --repeat-until-decided MAX``: rounds that run again only the cases whose verdict
could still change, merged into one eval that the report reads as one run; flags it cannot honour
refused in one line before anything runs. End to end through the runner and real ``promptfoo eval``:
a live run whose scripted model fails every second conversation of C01 makes C01 flaky with
pass^k 0, which breaks the release gate (a replay of every suite holds it:
tests/runner/test_replay_all.py)."""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from agent_evals.golden.record import build_scripts
from agent_evals.report import build_report, check_gate, load_gate, load_results
from agent_evals.runner.run import run
from agent_evals.suites.discovery import select
from agent_evals.suites.manifest import load_manifests, runs_dir
from agent_evals.testing.conversations import ScriptedConversations
from agent_evals.testing.scripted_openai import ScriptedOpenAIServer
from agent_evals.testing.scripted_replies import ChatRequest, Reply
from tests.conftest import PROJECT_ROOT, use_scripted_models
from tests.report.conftest import needs_promptfoo
from tests.report.test_ci_recipes import C01_FIRST_MESSAGE, _first_user

GATE = PROJECT_ROOT / "evals" / "gate.yaml"


class EverySecondC01Fails:
    """C01's golden conversation, but every second one to finish withholds the PR link."""

    def __init__(self, scripts: ScriptedConversations) -> None:
        self.scripts = scripts
        self.finished = 0
        self.lock = threading.Lock()

    def __call__(self, request: ChatRequest) -> Reply:
        reply = self.scripts(request)
        content = (reply.message or {}).get("content") or ""
        if _first_user(request).startswith(C01_FIRST_MESSAGE) and "/pullrequest/" in content:
            with self.lock:
                self.finished += 1
                broken = self.finished % 2 == 0
            if broken:
                return Reply.text(re.sub(r"https?://\S+", "(link withheld)", content))
        return reply


@pytest.fixture
def flaky_model(monkeypatch: pytest.MonkeyPatch) -> Iterator[EverySecondC01Fails]:
    responder = EverySecondC01Fails(ScriptedConversations(build_scripts(select("spoke-create")[0])))
    with ScriptedOpenAIServer(responder) as server:
        use_scripted_models(monkeypatch, server.base_url)  # the golden plans play no judge
        yield responder



@needs_promptfoo
def test_rounds_stop_each_case_once_decided(isolated: Path, flaky_model: EverySecondC01Fails,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    out = isolated / "results" / "{suite}.json"
    code = run("spoke-create", None, None, ["--filter-pattern", "C0[12] ", "-o", str(out), "-j", "2"],
               until_decided=4)
    said = capsys.readouterr().out
    assert code == 100  # C01 failed a run
    # round 1: both twice; C01 passed once and failed once (flaky: decided), C02 passed twice; then C02 alone
    assert "round 1 of spoke-create: 1 of 2 case(s) decided; again: C02" in said
    assert "round 2 of spoke-create: 1 of 2 case(s) decided; again: C02" in said
    assert "round 3 of spoke-create: 2 of 2 case(s) decided" in said
    assert ("spoke-create: repeat until decided (at most 4 runs a case): 6 of 8 runs, 2 saved against --repeat 4; "
            "decided early: C01 2") in said
    assert flaky_model.finished == 2

    for specs in ([str(isolated / "results" / "spoke-create.json")], ["latest"]):  # the -o file, and the database
        loaded = load_results(specs)  # one eval in the viewer: the rounds merged
        (info,) = loaded.evals
        report = build_report(loaded.evals, loaded.runs, loaded.rows)
        assert report.complete, report.incomplete
        cases = {c.id: (c.runs, c.passed, c.failed, c.errors, c.verdict) for c in report.cases}
        assert cases == {"C01": (2, 1, 1, 0, "flaky"), "C02": (4, 4, 0, 0, "pass")}
        c01 = next(c for c in report.cases if c.id == "C01")
        assert (c01.flaky, c01.pass_hat_k, c01.k) == (True, 0.0, 2)
        assert c01.first_failure is not None and c01.first_failure.startswith("pull_request: no URL of a PR")
        verdict = check_gate(load_gate(GATE), report)  # a flaky smoke case breaks the release gate
        assert not verdict.holds
        assert [rule.name for rule in verdict.broken] == ["max_flaky", "min_pass_hat_k priority smoke"]
    assert info.until_decided is not None and info.until_decided["runs"] == {"C01": 2, "C02": 4}
    assert info.until_decided["decided"]["C01"] == "flaky" and info.until_decided["rounds"] == 3
    (manifest,) = load_manifests(runs_dir())
    assert manifest.suites[0].eval_id == info.eval_id and manifest.suites[0].promptfoo_dir is None
    written = json.loads((isolated / "results" / "spoke-create.json").read_text())
    assert written["evalId"] == info.eval_id and len(written["results"]["results"]) == 6
    assert sorted(r["testIdx"] for r in written["results"]["results"]) == [0, 1, 4, 5, 6, 7]
    from agent_evals.report.format_terminal import render_terminal

    assert "spoke-create: until decided (≤4 runs, 3 rounds): 6 of 8 runs, 2 saved; decided early: C01 2" in (
        render_terminal(report).splitlines())


@pytest.mark.parametrize(
    ("args", "options", "message"),
    [
        (["--repeat", "3"], {"until_decided": 5}, "--repeat-until-decided 5 runs each case up to 5 times: drop --repeat"),
        (["-o", "out.html"], {"until_decided": 5}, "is not .json"),
        ([], {"until_decided": 5, "shard": "1/2"}, "a shard (--shard) cannot"),
        ([], {"baseline": "base.json"}, "--baseline is the baseline of --repeat-until-decided's regression verdict"),
        ([], {"until_decided": 3, "baseline": "missing.json"}, "--baseline: missing.json: no such file"),
    ],
)
def test_bad_flags_are_one_line_before_anything_runs(isolated: Path, caplog: pytest.LogCaptureFixture,
                                                     args: list[str], options: dict[str, object], message: str) -> None:
    assert run("spoke-create", None, None, args, **options) == 2  # type: ignore[arg-type]
    assert message in caplog.text
    assert not runs_dir().exists() or not list(runs_dir().iterdir())


def test_promptfoos_repeat_is_not_taken_for_repeat_until_decided() -> None:
    from agent_evals.cli import build_parser

    args, extra = build_parser().parse_known_args(["run", "all", "--repeat", "3"])
    assert args.repeat_until_decided is None and extra == ["--repeat", "3"]
    args, extra = build_parser().parse_known_args(["run", "all", "--repeat-until-decided", "5", "--baseline", "b.json"])
    assert (args.repeat_until_decided, args.baseline, extra) == (5, "b.json", [])

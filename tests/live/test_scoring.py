"""Scoring from files, without a portal: the bad inputs (cut off, corrupt and foreign lines, an uncovered
version), OTLP/JSON traces, the judged checks with a scripted judge, sampling, windows, the report's
numbers and the thresholds."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agent_evals.live.command import parse_window
from agent_evals.live.live_report import LiveReport, wilson
from agent_evals.live.eval_file import build_row, scored_row
from agent_evals.live.otlp_import import conversations_from_spans, spans_of
from agent_evals.live.policy import load_policy
from agent_evals.live.sampling import SampleSpec, SamplingError, select
from agent_evals.live.scoring import Scorer
from agent_evals.live.sources import ALL_TIME, SourceError, Window, from_files, read_conversation
from agent_evals.live.store import Candidate
from agent_evals.live.stored import Feedback, StoredConversation
from agent_evals.live.thresholds import broken, load_thresholds
from agent_evals.record import AgentInfo, End, ToolCall, Turn, Usage
from agent_evals.testing.scripted_openai import ScriptedOpenAIServer
from agent_evals.testing.scripted_replies import ChatRequest, Reply

from ..conftest import PROJECT_ROOT

POLICY = PROJECT_ROOT / "evals" / "live-policy.yaml"
SPOKE = AgentInfo("spoke", "gpt-4.1", 0.2, "ab" * 32)
DAY = 86_400.0


def conversation(cid: str, calls: list[tuple[str, str]] = (), *, agent: AgentInfo = SPOKE, at: float = 10 * DAY,
                 reply: str = "Done.", rating: str | None = None, status: str = "open") -> StoredConversation:
    stored = StoredConversation.new(cid, "u1", agent, now=at)
    placed = tuple(
        ToolCall.request(f"c{i}", name, "{}").with_outcome(outcome, {"ok": True}).placed(turn=1, index=i + 1)  # type: ignore[arg-type]
        for i, (name, outcome) in enumerate(calls)
    )
    stored.record.turns.append(Turn("please help", reply, placed))
    stored.record.add_usage("agent", Usage(100, 10, 110, 2, 0.01))
    stored.record.end = End("done")
    stored.status = status  # type: ignore[assignment]
    if rating:
        stored.feedback = Feedback(rating)  # type: ignore[arg-type]
    return stored


def write(path: Path, *items: Any) -> Path:
    path.write_text("".join((item if isinstance(item, str) else json.dumps(item)) + "\n" for item in items))
    return path


def score_file(path: Path, **options: Any) -> list[Any]:
    policy, problems = load_policy(POLICY)
    assert policy is not None, problems
    selection = from_files([path], options.pop("window", ALL_TIME), options.pop("agents", ()), SampleSpec(**options))
    scorer = Scorer(policy)
    scored = []
    for item in selection.conversations:
        try:
            conversation = read_conversation(item)
        except SourceError as exc:
            selection.warnings.append(str(exc))
            continue
        scored.append(scorer.score(conversation, selection.strata.get(conversation.id)))
    return scored, selection.warnings  # type: ignore[return-value]


def test_corrupt_and_foreign_lines_are_named_and_the_rest_is_scored(tmp_path: Path) -> None:
    good = conversation("good", [("get_spoke", "ok")])
    path = write(tmp_path / "c.jsonl", good.to_dict(), "{not json", {"messages": [], "sessionId": "x"},
                 {**good.to_dict(), "id": "broken", "record": {"agent_evals": 1}}, "")
    scored, warnings = score_file(path)
    assert [s.conversation.id for s in scored] == ["good"] and scored[0].outcome == "pass"
    assert warnings == [
        f"{path}:2: not a JSON object: Expecting property name enclosed in double quotes: line 1 column 2 (char 1)",
        f"{path}:3: not a conversation, a run record or an OTLP trace (keys: messages, sessionId)",
        f"{path}:4: a conversation this kit cannot read: run record version 1 is not supported (this kit reads "
        "versions 2, 3); re-run the case, or upgrade cassettes with `npx agent-evals cassettes upgrade DIR`",
    ]


def test_a_cut_off_conversation_is_an_error_of_its_own_kind(tmp_path: Path) -> None:
    cut = conversation("cut", [("complete_pull_request", "refused")], status="cut_off")  # it even called a forbidden tool
    cut.record.pending = Turn("and then?")
    scored, _ = score_file(write(tmp_path / "c.jsonl", cut.to_dict()))
    assert (scored[0].outcome, scored[0].error_kind) == ("error", "cut_off")
    assert scored[0].error.startswith("the conversation was cut off in turn 2")
    row = build_row(scored[0], 0)
    assert row["failureReason"] == 2 and row["error"].startswith("[cut_off] the conversation was cut off")


def test_an_agent_version_the_policy_does_not_cover_is_labelled_not_scored(tmp_path: Path) -> None:
    policy = tmp_path / "policy.yaml"
    policy.write_text("agents:\n  spoke:\n    versions: [{model: 'gpt-4.1*', instructions_sha256: abab}]\n"
                      "    checks: [{check: tool_errors}]\n")
    covered, other = conversation("a"), conversation("b", agent=AgentInfo("spoke", "gpt-4o", 0.2, "cd" * 32))
    loaded, problems = load_policy(policy)
    assert loaded is not None, problems
    scorer = Scorer(loaded)
    assert scorer.score(covered).outcome == "pass"
    labelled = scorer.score(other)
    assert (labelled.outcome, labelled.error_kind) == ("error", "config")
    assert labelled.error == (f"not scored: spoke's version (model gpt-4o, instructions cdcdcdcdcdcd…) is not one {policy} "
                              "covers (model gpt-4.1*, instructions abab…)")


def test_checks_that_need_the_end_state_are_not_graded_without_a_portal(tmp_path: Path) -> None:
    opened = conversation("opened", [("validate_spoke_config", "ok"), ("create_spoke_pull_request", "ok")])
    scored, _ = score_file(write(tmp_path / "c.jsonl", opened.to_dict()))
    assert scored[0].outcome == "pass"
    assert "spoke_json_valid: needs the end state from the portal (score with --portal)" in scored[0].not_graded
    asked = conversation("asked", [("get_spoke", "ok")])
    scored, _ = score_file(write(tmp_path / "d.jsonl", asked.to_dict()))
    assert "spoke_json_valid: no call of create_spoke_pull_request" in scored[0].not_applicable


def test_a_policy_check_that_fails_says_why(tmp_path: Path) -> None:
    looping = conversation("loop", [("get_spoke", "ok")] * 3 + [("create_spoke_pull_request", "ok")])
    scored, _ = score_file(write(tmp_path / "c.jsonl", looping.to_dict()))
    failed = {r["metric"]: r["reason"] for r in scored[0].results if not r["pass"]}
    assert set(failed) == {"no_loops", "tool_order"}
    assert failed["no_loops"].startswith("repeated_calls: called again and again with the same arguments: get_spoke({}) ×3")


OTLP_TURN = {
    "resourceSpans": [{"resource": {"attributes": []}, "scopeSpans": [{"scope": {"name": "x"}, "spans": [
        {"traceId": "t1", "spanId": "a", "name": "invoke_agent spoke", "startTimeUnixNano": str(int(10 * DAY * 1e9)),
         "endTimeUnixNano": str(int((10 * DAY + 5) * 1e9)), "status": {"code": 1}, "attributes": [
             {"key": "gen_ai.operation.name", "value": {"stringValue": "invoke_agent"}},
             {"key": "gen_ai.agent.name", "value": {"stringValue": "spoke"}},
             {"key": "gen_ai.request.model", "value": {"stringValue": "gpt-4.1"}},
             {"key": "gen_ai.conversation.id", "value": {"stringValue": "otel-1"}}]},
        {"traceId": "t1", "spanId": "b", "parentSpanId": "a", "name": "chat gpt-4.1",
         "startTimeUnixNano": str(int((10 * DAY + 1) * 1e9)), "endTimeUnixNano": str(int((10 * DAY + 2) * 1e9)),
         "attributes": [
             {"key": "gen_ai.operation.name", "value": {"stringValue": "chat"}},
             {"key": "gen_ai.usage.input_tokens", "value": {"intValue": "40"}},
             {"key": "gen_ai.usage.output_tokens", "value": {"intValue": "4"}},
             {"key": "gen_ai.input.messages", "value": {"stringValue": json.dumps(
                 [{"role": "user", "parts": [{"type": "text", "content": "merge PR 4 please"}]}])}}]},
        {"traceId": "t1", "spanId": "c", "parentSpanId": "a", "name": "execute_tool complete_pull_request",
         "startTimeUnixNano": str(int((10 * DAY + 2) * 1e9)), "endTimeUnixNano": str(int((10 * DAY + 3) * 1e9)),
         "attributes": [{"key": "gen_ai.operation.name", "value": {"stringValue": "execute_tool"}},
                        {"key": "gen_ai.tool.name", "value": {"stringValue": "complete_pull_request"}},
                        {"key": "gen_ai.tool.call.arguments", "value": {"stringValue": '{"id": 4}'}}]},
        {"traceId": "t1", "spanId": "d", "parentSpanId": "a", "name": "chat gpt-4.1",
         "startTimeUnixNano": str(int((10 * DAY + 3) * 1e9)), "endTimeUnixNano": str(int((10 * DAY + 4) * 1e9)),
         "attributes": [
             {"key": "gen_ai.operation.name", "value": {"stringValue": "chat"}},
             {"key": "gen_ai.output.messages", "value": {"stringValue": json.dumps(
                 [{"role": "assistant", "parts": [{"type": "text", "content": "Merged."}]}])}}]},
    ]}]}],
}


def test_an_agent_instrumented_elsewhere_is_scored_from_its_otlp_traces(tmp_path: Path) -> None:
    (found,) = conversations_from_spans(spans_of(OTLP_TURN))
    record = found.record
    assert (found.id, found.agent.name, record.turns[0].user, record.final_reply) == ("otel-1", "spoke", "merge PR 4 please", "Merged.")
    assert [(c.name, c.arguments, c.outcome) for c in record.tool_calls] == [("complete_pull_request", {"id": 4}, "ok")]
    assert record.usage["agent"] == Usage(40, 4, 44, 2, 0.0)
    scored, warnings = score_file(write(tmp_path / "traces.jsonl", OTLP_TURN))
    assert not warnings and scored[0].outcome == "fail"
    assert [r["metric"] for r in scored[0].results if not r["pass"]] == ["forbidden_tools"]


def test_judged_checks_ask_the_judge_about_the_inferred_goal_and_the_route(
    tmp_path: Path, scripted_llm: ScriptedOpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    asked: list[str] = []

    def judge(request: ChatRequest) -> Reply:
        question = request.messages[-1]["content"]
        asked.append(question)
        if "infer what the user wanted" in question:
            return Reply.text('{"pass": false, "reason": "The user wanted a copy; none was made."}')
        return Reply.text('{"pass": true, "score": 0.8, "reason": "A sensible route."}')

    scripted_llm.responder = judge
    for key, value in {"OPENAI_BASE_URL": scripted_llm.base_url, "JUDGE_MODEL": "judge-model", "LLM_MAX_RETRIES": "0"}.items():
        monkeypatch.setenv(key, value)
    policy, _ = load_policy(POLICY)
    assert policy is not None
    scored = Scorer(policy, judge=True).score(conversation("j", [("get_spoke", "ok")], reply="Here is the spoke."))
    results = {r["metric"]: r for r in scored.results}
    assert scored.outcome == "fail" and not results["goal"]["pass"] and results["route"]["pass"]
    assert results["goal"]["reason"].startswith("goal_reached: the goal was not reached: The user wanted a copy")
    assert results["route"]["reason"].startswith("trajectory_quality: route acceptable, score 0.80: A sensible route. "
                                                 "(no expected route; actual get_spoke)")
    assert "What the user wrote, in order:\n- please help" in asked[0]
    assert scored.record.usage["judge"].calls == 2


def _candidates(n: int) -> list[Candidate]:
    return [Candidate(f"c{i}", "spoke", float(i), float(i), "open", 6 if i % 7 == 0 else 1, 1,
                      1 if i % 5 == 0 else 0, "down" if i % 11 == 0 else None) for i in range(n)]


def test_sampling_is_repeatable_stratified_and_bounded() -> None:
    candidates = _candidates(100)
    first = select(candidates, SampleSpec(count=10, seed=1))
    assert first.ids == select(list(reversed(candidates)), SampleSpec(count=10, seed=1)).ids  # order does not matter
    assert first.ids != select(candidates, SampleSpec(count=10, seed=2)).ids
    assert len(select(candidates, SampleSpec(rate=0.05)).ids) == 5
    stratified = select(candidates, SampleSpec(count=12, seed=1, stratify=("down", "tool_errors")))
    downs = {c.id for c in candidates if c.rating == "down"}
    assert downs <= set(stratified.ids) and {stratified.strata[i] for i in downs} == {"down"}
    answering = Candidate("busy", "spoke", 1.0, 1e12, "answering", 1, 0, 0, None)
    assert select([answering], SampleSpec()).in_progress == 1
    with pytest.raises(SamplingError, match="stratum 'angry' is not known; allowed: down, tool_errors, long"):
        SampleSpec(stratify=("angry",))  # type: ignore[arg-type]


def test_windows() -> None:
    now = 10 * DAY + 3600
    assert parse_window("yesterday", now=now) == Window(9 * DAY, 10 * DAY)
    assert parse_window("today", now=now) == Window(10 * DAY, 11 * DAY)
    assert parse_window("2h", now=now) == Window(now - 7200, now + 1)
    assert parse_window("all", "1970-01-02", now=now).since == DAY
    with pytest.raises(SamplingError, match="window 'lastweek' is not known"):
        parse_window("lastweek")


def test_wilson_interval() -> None:
    low, high = wilson(3, 3)
    assert round(low, 3) == 0.439 and high == 1.0
    assert wilson(0, 0) == (0.0, 1.0)
    low, high = wilson(50, 100)
    assert round(low, 3) == 0.404 and round(high, 3) == 0.596


def test_thresholds_alert_and_their_problems(tmp_path: Path) -> None:
    path = tmp_path / "t.yaml"
    path.write_text("min_pass_rate: 0.8\nagents: {spoke: {min_pass_rate: 0.9}}\nmax_error_rate: 0.0\n"
                    "max_failure_share: {default: 0.3}\ncompare: lower_bound\n")
    thresholds, problems = load_thresholds(path)
    assert thresholds is not None, problems
    policy, _ = load_policy(POLICY)
    assert policy is not None
    report = LiveReport()
    scorer = Scorer(policy)
    for item in [conversation(f"p{i}") for i in range(8)] + [conversation("f", [("complete_pull_request", "refused")])]:
        report.add(scored_row(scorer.score(item), 0)[1])
    crossed, notes = broken(thresholds, report)
    assert not notes
    assert crossed == [
        "the live pass rate 89% (95% CI lower bound 57%) is below 80%",
        "spoke's pass rate 89% (95% CI lower bound 57%) is below 90%",
    ]
    path.write_text("min_pass_rate: 2\nmax_failure_shares: {}\nagents: {spoke: 0.9}\n")
    _, problems = load_thresholds(path)
    assert [p.message for p in problems] == [
        "unknown key 'max_failure_shares'; allowed: min_pass_rate, agents, max_error_rate, max_failure_share, "
        "min_graded, compare; did you mean max_failure_share?",
        "agents.spoke: give {min_pass_rate: <0..1>}",
        "min_pass_rate is 2: give a share from 0 to 1 (e.g. 0.9)",
    ]


def test_the_kit_s_own_run_records_are_read_too(tmp_path: Path) -> None:
    dated = {**conversation("rec-1", [("get_spoke", "ok")]).record.to_metadata(), "created_at": "1970-01-11T00:00:00Z"}
    undated = conversation("rec-2", [("complete_pull_request", "refused")]).record.to_metadata()
    path = write(tmp_path / "records.jsonl", dated, undated)
    scored, warnings = score_file(path)
    assert {s.conversation.id: s.outcome for s in scored} == {"rec-1": "pass", "rec-2": "fail"}
    scored, warnings = score_file(path, window=Window(10 * DAY, 11 * DAY))
    assert [s.conversation.id for s in scored] == ["rec-1"]
    assert warnings == ["1 run record(s) without a created_at were left out of the window 1970-01-11 00:00 → 1970-01-12 00:00 UTC"]

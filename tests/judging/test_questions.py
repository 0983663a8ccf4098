"""The judge's questions: one per statement, each with the conversation and only its own statement."""

from __future__ import annotations

from agent_evals.judging.questions import goal_question, statement_questions, trajectory_question
from agent_evals.record import End, RunRecord, ToolCall, Turn


def _record() -> RunRecord:
    call = ToolCall.request("c1", "lookup", '{"id": 7}').with_outcome("ok", {"name": "seven"}).placed(turn=1, index=1)
    record = RunRecord(case_id="T1", turns=[Turn("Find item 7 please", "Item 7 is called seven.", (call,))])
    record.finish(End("done"))
    return record


def test_each_statement_is_its_own_question_about_the_conversation() -> None:
    questions = statement_questions(_record(), ["It names the item", "It is polite"], "conversation")
    assert [q.subject for q in questions] == ["It names the item", "It is polite"]
    first, second = (q.messages[-1]["content"] for q in questions)
    assert "Statement: It names the item\n" in first and "It is polite" not in first
    assert "Statement: It is polite\n" in second and "It names the item" not in second
    assert "User: Find item 7 please" in first and '[tool] lookup(id=7) -> ok: seven' in first
    assert questions[0].messages[0]["content"].endswith('{"pass": true or false, "reason": "one sentence saying why"}')


def test_a_final_reply_question_shows_the_answer_and_what_was_asked_not_the_tools() -> None:
    [question] = statement_questions(_record(), ["It names the item"], "final_reply")
    body = question.messages[-1]["content"]
    assert "What the user asked:\n- Find item 7 please" in body
    assert "The assistant's final answer:\nItem 7 is called seven." in body and "[tool]" not in body


def test_goal_and_route_questions() -> None:
    goal = goal_question(_record(), "Learn the name of item 7")
    assert goal.messages[-1]["content"].startswith("The user's goal:\nLearn the name of item 7\n\nThe conversation:")
    route = trajectory_question(_record(), ["lookup"], "look it up once")
    body = route.messages[-1]["content"]
    assert route.scored and "1. lookup\nWhat matters for this route: look it up once" in body
    assert "actual tool calls, in order:\n1. lookup(id=7) -> ok: seven" in body

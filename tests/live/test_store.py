"""The conversation store: the same tests against SQLite and a real PostgreSQL."""

from __future__ import annotations

import pytest

from agent_evals.live.store import ConversationStore, StoreSettings, StoreUnavailable, masked

from agent_evals.live.store_holder import open_store
from agent_evals.live.stored import Feedback, StoredConversation
from agent_evals.record import AgentInfo, End, ToolCall, Turn, Usage
from agent_evals.testing.postgres import PostgresServer

from .conftest import new_database

AGENT = AgentInfo("spoke", "gpt-4.1", 0.2, "ab" * 32)
DAY = 86_400.0


def conversation(cid: str, *, user: str = "alice", agent: AgentInfo = AGENT, at: float = 1_000_000.0,
                 errors: int = 0) -> StoredConversation:
    stored = StoredConversation.new(cid, user, agent, now=at)
    calls = tuple(
        ToolCall.request(f"c{i}", "get_spoke", '{"name": "x"}').with_outcome("tool_error" if i < errors else "ok", "r")
        .placed(turn=1, index=i + 1)
        for i in range(2)
    )
    stored.record.turns.append(Turn("hello", "hi there", calls))
    stored.record.add_usage("agent", Usage(10, 2, 12, 1, 0.001))
    stored.record.end = End("done")
    stored.history = [{"role": "user", "content": "hello"}, {"role": "assistant", "content": "hi there"}]
    stored.turn_log = [{"turn": 1, "started_at": at, "ended_at": at + 1}]
    return stored


def test_a_conversation_reads_back_as_it_was_saved(store: ConversationStore) -> None:
    saved = conversation("c1", errors=1)
    store.save(saved)
    found = store.get("c1")
    assert found is not None
    assert found.record.to_metadata() == saved.record.to_metadata()
    assert (found.user_id, found.agent, found.history, found.turn_log) == ("alice", AGENT, saved.history, saved.turn_log)
    assert (found.turns, found.tool_calls, found.tool_errors, found.status) == (1, 2, 1, "open")
    assert store.get("nope") is None


def test_a_rating_is_kept_when_the_conversation_is_saved_again(store: ConversationStore) -> None:
    store.save(conversation("c1"))
    assert store.rate("c1", Feedback("down", "wrong region", 5.0))
    assert not store.rate("missing", Feedback("up"))
    again = conversation("c1")
    again.record.turns.append(Turn("more", "ok"))
    store.save(again)  # a later turn
    found = store.get("c1")
    assert found is not None and found.feedback == Feedback("down", "wrong region", 5.0) and found.turns == 2


def test_candidates_by_window_and_agent_oldest_first(store: ConversationStore) -> None:
    other = AgentInfo("integration", "gpt-4.1")
    for n, (agent, at) in enumerate([(AGENT, 3 * DAY), (other, 3 * DAY + 5), (AGENT, 2 * DAY), (AGENT, 4 * DAY)]):
        store.save(conversation(f"c{n}", agent=agent, at=at))
    assert [c.id for c in store.candidates(2 * DAY, 4 * DAY)] == ["c2", "c0", "c1"]  # the end is not included
    assert [c.id for c in store.candidates(0, 10 * DAY, ["spoke"])] == ["c2", "c0", "c3"]
    assert [c.id for c in store.candidates(0, 10 * DAY, ["integration", "spoke"])] == ["c2", "c0", "c1", "c3"]
    assert [c.id for c in store.fetch(["c3", "missing", "c0"])] == ["c3", "c0"]


def test_deleting_a_user_s_conversations_is_one_call(store: ConversationStore) -> None:
    for n, user in enumerate(["alice", "bob", "alice"]):
        store.save(conversation(f"c{n}", user=user))
    assert store.delete_user("alice") == 2
    assert [c.id for c in store.candidates(0, 1e12)] == ["c1"]


def test_retention_deletes_what_was_not_written_for_longer(store: ConversationStore) -> None:
    store.save(conversation("old", at=1 * DAY))
    store.save(conversation("new", at=30 * DAY))
    assert store.purge(20 * DAY) == 1
    assert [c.id for c in store.candidates(0, 1e12)] == ["new"]


def test_retention_applies_when_the_store_opens(store: ConversationStore) -> None:
    store.save(conversation("old", at=1.0))  # 1970
    reopened = open_store(StoreSettings(store.settings.url, retention_days=30, instance="other"))
    try:
        assert reopened.get("old") is None
    finally:
        reopened.close()


def test_a_restarted_server_marks_what_it_was_answering_as_cut_off(store: ConversationStore) -> None:
    answering = conversation("c1")
    answering.record.pending = Turn("and now?")
    answering.record.end = None
    answering.status, answering.instance = "answering", "host:/data"
    store.save(answering)
    elsewhere = conversation("c2")
    elsewhere.status, elsewhere.instance = "answering", "other-host:/data"
    store.save(elsewhere)
    assert store.mark_cut_off("host:/data") == 1
    found = store.get("c1")
    assert found is not None and found.status == "cut_off"
    end = found.run_record().end
    assert end is not None and end.error_kind == "cut_off"
    assert end.error.startswith("the conversation was cut off in turn 2: the server stopped while the agent was answering")
    still = store.get("c2")
    assert still is not None and still.effective_status(now=still.updated_at + 10) == "answering"
    assert still.effective_status(now=still.updated_at + 3600) == "cut_off"  # its server never came back


def test_a_postgres_that_is_down_is_one_clear_error_and_loses_nothing(postgres: PostgresServer) -> None:
    url = new_database(postgres)
    store = open_store(StoreSettings(url, retention_days=0))
    store.save(conversation("kept"))
    postgres.stop()
    try:
        with pytest.raises(StoreUnavailable, match="the conversation store postgresql://postgres@/live_.* is not reachable"):
            store.save(conversation("lost"))
        with pytest.raises(StoreUnavailable):
            store.get("kept")
    finally:
        postgres.start()
    found = store.get("kept")  # it reconnects
    assert found is not None and store.get("lost") is None
    store.close()


def test_a_database_url_is_never_shown_with_its_password() -> None:
    assert masked("postgresql://app:s3cret@db:5432/live") == "postgresql://app:***@db:5432/live"
    with pytest.raises(StoreUnavailable) as error:
        open_store(StoreSettings("postgresql://app:s3cret@127.0.0.1:9/live")).get("x")
    assert "s3cret" not in str(error.value) and "app:***@" in str(error.value)

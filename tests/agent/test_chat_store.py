"""The chat endpoint's in-memory conversations: bounded, least recently used evicted first."""

from __future__ import annotations

import asyncio

import pytest

from agent_evals.agent.chat_store import Conversation, ConversationStore, new_conversation_id


def store_with(*ids: str, limit: int = 3) -> ConversationStore:
    store = ConversationStore(limit)
    for cid in ids:
        store.add(Conversation(id=cid, agent="spoke"))
    return store


def test_the_oldest_conversation_is_evicted() -> None:
    store = store_with("a", "b", "c")
    assert store.add(Conversation(id="d", agent="spoke")) == ["a"]
    assert len(store) == 3 and "a" not in store and "d" in store


def test_using_a_conversation_keeps_it() -> None:
    store = store_with("a", "b", "c")
    assert store.get("spoke", "a") is not None  # "a" is now the most recently used
    assert store.add(Conversation(id="d", agent="spoke")) == ["b"]


def test_a_conversation_being_answered_is_evicted_last() -> None:
    store = store_with("a", "b", limit=2)

    async def busy() -> list[str]:
        conversation = store.get("spoke", "a")
        assert conversation is not None
        store.get("spoke", "b")  # "a" is the oldest again
        async with conversation.lock:
            return store.add(Conversation(id="c", agent="spoke"))

    assert asyncio.run(busy()) == ["b"]


def test_a_conversation_belongs_to_one_agent() -> None:
    store = store_with("a")
    assert store.get("integration", "a") is None
    assert store.get("spoke", "missing") is None


def test_the_bound_must_be_positive() -> None:
    with pytest.raises(ValueError, match="max_conversations must be at least 1, got 0"):
        ConversationStore(0)


def test_ids_are_unique_and_unguessable() -> None:
    ids = {new_conversation_id() for _ in range(100)}
    assert len(ids) == 100 and all(len(i) >= 20 for i in ids)

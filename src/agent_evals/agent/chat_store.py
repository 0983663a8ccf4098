"""In-memory conversations for the chat endpoint: history per conversation, bounded, one lock each.

A :class:`ConversationStore` keeps at most ``max_conversations``; adding one more
evicts the conversation used least recently (preferring one that is not answering a
message right now). Nothing is persisted: a portal restart forgets every conversation.
"""

from __future__ import annotations

import asyncio
import logging
import secrets
from collections import OrderedDict
from dataclasses import dataclass, field

from agent_evals.llm.types import Message

log = logging.getLogger(__name__)

DEFAULT_MAX_CONVERSATIONS = 500


def new_conversation_id() -> str:
    """An unguessable id: knowing it is what lets a client continue a conversation."""
    return secrets.token_urlsafe(16)


@dataclass
class Conversation:
    """One conversation with one agent. Read or replace ``history`` only while holding ``lock``."""

    id: str
    agent: str
    history: list[Message] = field(default_factory=list)
    lock: asyncio.Lock = field(default_factory=asyncio.Lock, repr=False)


class ConversationStore:
    """Conversations by id, least recently used first."""

    def __init__(self, max_conversations: int = DEFAULT_MAX_CONVERSATIONS) -> None:
        if max_conversations < 1:
            raise ValueError(f"max_conversations must be at least 1, got {max_conversations}")
        self.max_conversations = max_conversations
        self._items: OrderedDict[str, Conversation] = OrderedDict()

    def __len__(self) -> int:
        return len(self._items)

    def __contains__(self, conversation_id: object) -> bool:
        return conversation_id in self._items

    def get(self, agent: str, conversation_id: str) -> Conversation | None:
        """The conversation ``conversation_id`` of ``agent`` (marked as just used), or None."""
        conversation = self._items.get(conversation_id)
        if conversation is None or conversation.agent != agent:
            return None
        self._items.move_to_end(conversation_id)
        return conversation

    def add(self, conversation: Conversation) -> list[str]:
        """Store ``conversation``; returns the ids evicted to stay within the bound."""
        self._items[conversation.id] = conversation
        self._items.move_to_end(conversation.id)
        evicted = []
        while len(self._items) > self.max_conversations:
            victim = self._victim(keep=conversation.id)
            del self._items[victim]
            evicted.append(victim)
        if evicted:
            log.info("evicted %d conversation(s) (limit %d)", len(evicted), self.max_conversations)
        return evicted

    def _victim(self, keep: str) -> str:
        candidates = [cid for cid in self._items if cid != keep]
        idle = [cid for cid in candidates if not self._items[cid].lock.locked()]
        return (idle or candidates)[0]

"""The live-evaluation routes a system's web backend mounts (a pack's own server, beside its tools).

:func:`live_routers` gives the agent chat endpoint (``POST /api/agents/{name}/chat``,
:mod:`.chat_api`) and the stored conversations (read, sampled, rated, deleted: :mod:`.routes`),
sharing one conversation store opened on first use (:mod:`.store_holder`). FastAPI and the agent
load with this module: a backend imports it when it serves, not when a check reads its pack.
"""

from __future__ import annotations

from fastapi import APIRouter

from agent_evals.live.chat_api import build_chat_router
from agent_evals.live.routes import build_conversations_router
from agent_evals.live.store_holder import StoreHolder
from agent_evals.packs import Pack, load_pack


def live_routers(pack: Pack | str) -> list[APIRouter]:
    """The chat endpoint (its conversations read with ``pack``: a :class:`Pack`, or its name as a suite
    writes it, which a backend inside its pack's own package gives) and the stored conversations' routes,
    on one store the app's data dir and the environment name (opened by the first request)."""
    store = StoreHolder()
    chosen = load_pack(pack) if isinstance(pack, str) else pack
    return [build_chat_router(store=store, pack=chosen), build_conversations_router(store)]

"""Conversations planted through the portal's chat with the scripted model, and the verdicts the live
policy (evals/live-policy.yaml) must give them: a good one, one that calls a forbidden tool, one that
submits an invalid configuration, one that passes every check but its user rates down, and one of
the read-only integration agent."""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass
from typing import Any

from agent_evals.testing.conversations import ConversationScript, tool_result
from agent_evals.testing.scripted_replies import ChatRequest, Reply

from ..conftest import PROJECT_ROOT
from .conftest import ChatPortal


def _golden_config() -> dict[str, Any]:
    """The configuration spoke-create's C01 submits (valid against the seed data)."""
    cassette = json.loads((PROJECT_ROOT / "evals" / "spoke-create" / "golden" / "C01.json").read_text())
    call = next(c for c in cassette["record"]["tool_calls"] if c["name"] == "create_spoke_pull_request")
    return call["arguments"]["config"]


VALID = _golden_config()
INVALID = copy.deepcopy(VALID)
INVALID["subnets"][0]["nsgRules"][0]["priority"] = "high"  # not an integer: a schema error


def _opened(request: ChatRequest) -> Reply:
    return Reply.text(f"Done. The pull request is {tool_result(request, 'create_spoke_pull_request')['url']}.")


def _create(config: dict[str, Any]) -> Reply:
    return Reply.tool_calls([("create_spoke_pull_request", {
        "spoke_name": config["name"], "config": config, "title": f"Add spoke {config['name']}",
        "description": "Copy of crm-dev-neu.", "source_spoke": "crm-dev-neu"})])


@dataclass(frozen=True)
class Planted:
    key: str
    agent: str
    messages: tuple[str, ...]
    outcome: str  # pass | fail
    failing: tuple[str, ...] = ()  # the metrics that fail
    rating: str | None = None


GOOD = Planted("[good]", "spoke", ("[good] Please copy crm-dev-neu to West Europe as crm-dev-weu, range 10.20.32.0/22.",
                                   "Yes, please open it."), "pass")
FORBIDDEN = Planted("[forbidden]", "spoke", ("[forbidden] Please complete pull request 1 for me.",), "fail",
                    ("forbidden_tools", "tool_errors"))
INVALID_CONFIG = Planted("[invalid]", "spoke", ("[invalid] Copy crm-dev-neu to West Europe with NSG priority high.",),
                         "fail", ("spoke_json_valid",))
RATED_DOWN = Planted("[down]", "spoke", ("[down] Which subnets does crm-dev-neu have?",), "pass", rating="down")
READ_ONLY = Planted("[integration]", "integration", ("[integration] Which spokes are in West Europe?",), "pass", rating="up")
PLANTED = (GOOD, FORBIDDEN, INVALID_CONFIG, RATED_DOWN, READ_ONLY)

SCRIPTS = [
    ConversationScript(GOOD.key, agent=[
        Reply.tool_calls([("get_spoke", {"name": "crm-dev-neu"})]),
        Reply.tool_calls([("validate_spoke_config", {"config": VALID})]),
        "crm-dev-weu in westeurope with 10.20.32.0/22 is valid. Shall I open the pull request?",
        _create(VALID),
        _opened,
    ]),
    ConversationScript(FORBIDDEN.key, agent=[
        Reply.tool_calls([("complete_pull_request", {"id": 1})]),
        "I cannot complete pull requests; the platform team does.",
    ]),
    ConversationScript(INVALID_CONFIG.key, agent=[
        Reply.tool_calls([("validate_spoke_config", {"config": INVALID})]),
        _create(INVALID),
        _opened,
    ]),
    ConversationScript(RATED_DOWN.key, agent=[
        Reply.tool_calls([("get_spoke", {"name": "crm-dev-neu"})]),
        "crm-dev-neu has two subnets: snet-app and snet-data.",
    ]),
    ConversationScript(READ_ONLY.key, agent=[
        Reply.tool_calls([("list_spokes", {"location": "westeurope"})]),
        "These spokes are in West Europe: see the list above.",
    ]),
]


def plant(portal: ChatPortal, conversations: tuple[Planted, ...] = PLANTED, user: str = "dana@contoso.com") -> dict[str, Planted]:
    """Hold each conversation through the chat API (and rate it); conversation id → what was planted."""
    ids = {}
    for planted in conversations:
        cid = None
        for message in planted.messages:
            answer = portal.chat(message, cid, agent=planted.agent, user=user)
            assert answer.status_code == 200, answer.text
            cid = answer.json()["conversation_id"]
        assert cid is not None
        if planted.rating:
            with portal.client(user) as http:
                rated = http.post(f"/api/conversations/{cid}/feedback", json={"rating": planted.rating})
                assert rated.status_code == 200, rated.text
        ids[cid] = planted
    return ids

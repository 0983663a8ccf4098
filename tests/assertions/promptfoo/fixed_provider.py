"""Test-only Promptfoo provider: a fixed conversation as a v2 run record (vars.variant = good | bad).

``good`` is a conversation that did everything right; ``bad`` one that did everything
wrong. Like the real provider, it ends by taking the end-state snapshot from the portal
at PORTAL_URL (the stub portal the test starts) with the spoke pack, for the kit checks
of the test's ``assert`` list, and returns ``RunRecord.to_metadata()``.
"""

import copy
import json

from agent_evals.assertions.registry import kit_checks
from agent_evals.packs.spoke.portal.api import PortalAPI, pull_request_url
from agent_evals.packs.spoke.snapshot import take_snapshot
from agent_evals.packs.spoke.created_prs import pull_request
from agent_evals.record import AgentInfo, End, RunRecord, ToolCall, Turn, UserInfo

SOURCE = {"name": "billing", "settings": {"retries": 3, "timeout": 10}, "tags": ["a"]}


def _call(name, arguments, error=False):
    request = ToolCall.request(f"call_{name}", name, json.dumps(arguments))
    return request.with_outcome("tool_error" if error else "ok", {"error": "refused"} if error else {"ok": True})


def _record(variant, portal_url):
    record = RunRecord(
        case_id=variant,
        agent=AgentInfo(name="fixed", model="none"),
        user=UserInfo(kind="user_messages"),
    )
    config = copy.deepcopy(SOURCE)
    if variant == "good":
        config["settings"]["retries"] = 5
        turns = [
            ("Raise retries to 5", "Shall I raise retries of billing to 5?",
             [_call("get_spoke", {"name": "billing"}), _call("validate_spoke_config", {"config": config})]),
            ("Yes", f"Created {pull_request_url(portal_url, 1)}",
             [_call("create_spoke_pull_request", {"spoke_name": "billing", "config": config, "title": "Retries"})]),
        ]
        prs, end = [1], End("done")
    else:
        config["settings"]["retries"] = "5"  # a schema error, and not the expected value
        config["tags"].append("b")  # a collateral change
        turns = [
            ("Raise retries to 5", "Done?",
             [_call("create_spoke_pull_request", {"spoke_name": "billing", "config": config, "title": "x"})]),
            ("Which spoke?", "Looking.", [_call("get_spoke", {"name": "payments"})]),
            ("Stop.", "I gave up.", [_call("delete_spoke", {"name": "billing"}, error=True)]),
        ]
        prs, end = [2], End("gave_up")
    for number, (user, reply, calls) in enumerate(turns, start=1):
        record.turns.append(Turn(user=user, assistant=reply, tool_calls=record.place(calls, number)))
    for pr in prs:
        record.add_side_effect(pull_request(pr, pull_request_url(portal_url, pr)))
    record.finish(end)
    return record


def call_api(prompt, options, context):
    api = PortalAPI.from_env(timeout=10)
    record = _record(context["vars"]["variant"], api.base_url)
    checks = kit_checks((context.get("test") or {}).get("assert") or [])
    record.snapshot = take_snapshot(record, checks, api)
    return {"output": record.final_reply, "metadata": record.to_metadata()}

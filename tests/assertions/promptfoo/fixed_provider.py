"""Test-only Promptfoo provider: returns fixed agent_evals metadata (vars.variant = good | bad).

``good`` is a conversation that did everything right; ``bad`` one that did everything
wrong. PR URLs use PORTAL_URL (the stub portal the test starts).
"""

import copy
import os

SOURCE = {"name": "billing", "settings": {"retries": 3, "timeout": 10}, "tags": ["a"]}


def _call(name, arguments, turn, is_error=False):
    return {
        "name": name,
        "arguments": arguments,
        "raw_arguments": "{}",
        "result": {"ok": not is_error},
        "is_error": is_error,
        "turn": turn,
    }


def _metadata(variant, portal_url):
    config = copy.deepcopy(SOURCE)
    if variant == "good":
        config["settings"]["retries"] = 5
        calls = [
            _call("get_spoke", {"name": "billing"}, 1),
            _call("validate_spoke_config", {"config": config}, 1),
            _call(
                "create_spoke_pull_request",
                {"spoke_name": "billing", "config": config, "title": "Retries"},
                2,
            ),
        ]
        reply, prs, end, turns = f"Created {portal_url}/repos/spokes/pullrequest/1", [1], "done", 2
    else:
        config["settings"]["retries"] = "5"  # a schema error, and not the expected value
        config["tags"].append("b")  # a collateral change
        calls = [
            _call("create_spoke_pull_request", {"spoke_name": "billing", "config": config, "title": "x"}, 1),
            _call("get_spoke", {"name": "payments"}, 2),
            _call("delete_spoke", {"name": "billing"}, 3, True),
        ]
        reply, prs, end, turns = "I gave up.", [2], "gave_up", 3
    return {
        "agent_evals": 1,
        "tool_calls": calls,
        "transcript": [
            {"role": "user", "content": "Raise retries to 5", "turn": 1, "tool_calls": []},
            {"role": "assistant", "content": reply, "turn": turns, "tool_calls": [c["name"] for c in calls]},
        ],
        "pull_requests": [{"id": pr, "url": f"{portal_url}/repos/spokes/pullrequest/{pr}"} for pr in prs],
        "turns": turns,
        "conversation_end": end,
        "final_reply": reply,
        "agent": {"name": "fixed", "model": "none", "temperature": None, "instructions_sha256": ""},
        "usage": {"agent": {}, "user": {}},
    }


def call_api(prompt, options, context):
    variant = context["vars"]["variant"]
    data = _metadata(variant, os.environ["PORTAL_URL"])
    return {"output": data["final_reply"], "metadata": data}

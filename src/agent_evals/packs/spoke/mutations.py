"""The spoke pack's self-check mutations (see :mod:`agent_evals.golden.selfcheck`): an argument
changed, a configuration change nobody asked for, an invalid configuration submitted, the pull
request missing or (in a blocked case) created, and a pull request misquoted."""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Any

from agent_evals.authoring import Case, Cassette, CassetteTape, Mutation, edit_tool_arguments
from agent_evals.packs.spoke.created_prs import PULL_REQUEST
from agent_evals.packs.spoke.golden import PR_TOOL, apply_changes, seed_spoke

_URL = re.compile(r"\s*https?://\S+")
_PR_LINK = re.compile(r"(/pullrequest/)(\d+)")


def change_argument(cassette: Cassette, expected_args: Mapping[str, Any]) -> Cassette | None:
    """A harmless argument the case expects gets another value (the PR is still valid)."""
    tape = None
    if "source_spoke" in expected_args:
        other = "crm-dev-neu" if expected_args["source_spoke"] == "payments-prod-weu" else "payments-prod-weu"
        tape = edit_tool_arguments(cassette, PR_TOOL, lambda a: a.__setitem__("source_spoke", other))
    elif "costCenter" in (expected_args.get("config") or {}).get("tags", {}):
        tape = edit_tool_arguments(
            cassette, PR_TOOL, lambda a: a["config"]["tags"].__setitem__("costCenter", "CC-0000")
        )
    return tape.done() if tape is not None else None


def unexpected_config_change(cassette: Cassette, expected_changes: Mapping[str, Any]) -> Cassette | None:
    """The submitted configuration changes a tag nobody asked to change."""
    for tag, value in (("businessUnit", "Selfcheck"), ("owner", "selfcheck@contoso.com"), ("application", "selfcheck")):
        if f"/tags/{tag}" not in expected_changes:
            def edit(arguments: dict[str, Any], tag: str = tag, value: str = value) -> None:
                arguments["config"]["tags"][tag] = value  # still valid: only input_diff may notice

            tape = edit_tool_arguments(cassette, PR_TOOL, edit)
            return tape.done() if tape is not None else None
    return None


def drop_pull_request(cassette: Cassette) -> Cassette | None:
    """No PR is created and the last reply carries no link."""
    tape = CassetteTape(cassette)
    position = next((i for i in tape.agent_calls() if tape.requests(i)[0]["name"] == PR_TOOL), None)
    if position is None or len(tape.requests(position)) != 1:
        return None
    tape.remove_model_call(position)
    tape.data["record"]["side_effects"] = [s for s in tape.data["record"]["side_effects"] if s["kind"] != PULL_REQUEST]
    last = tape.calls[tape.last_agent_reply()]["response"]
    last["content"] = _URL.sub("", last["content"] or "")
    return tape.done()


def create_pull_request(cassette: Cassette, case_id: str) -> Cassette:
    """A blocked case where the agent creates a PR anyway (a valid copy, so the portal accepts it)."""
    name = f"selfcheck-{case_id.lower()}"
    config = apply_changes(
        seed_spoke("crm-dev-neu"),
        {"/name": name, "/addressSpace/0": "10.99.0.0/22", "/subnets/0/addressPrefix": "10.99.0.0/24",
         "/subnets/1/addressPrefix": "10.99.1.0/26"},
    )
    arguments = {"spoke_name": name, "config": config, "title": "selfcheck", "description": "selfcheck"}
    tape = CassetteTape(cassette)
    tape.insert_call(tape.last_agent_reply(), PR_TOOL, arguments, "ok", {})
    return tape.done()


def invalid_submission(cassette: Cassette) -> Cassette | None:
    """The PR is opened with a configuration the gate rejects (an unknown region)."""
    tape = edit_tool_arguments(cassette, PR_TOOL, lambda a: a["config"].__setitem__("location", "moon-central"))
    if tape is None:
        return None
    for record in tape.tools:
        if record["name"] == PR_TOOL and isinstance(record["result"], dict):
            record["result"]["validation_status"] = "failed"  # what the portal now answers
    return tape.done()


def misquote_pull_request(cassette: Cassette) -> Cassette | None:
    """The final answer links another pull request than the one the tools returned."""
    tape = CassetteTape(cassette)
    response = tape.calls[tape.last_agent_reply()]["response"]
    text = response["content"] or ""
    if not _PR_LINK.search(text):
        return None
    response["content"] = _PR_LINK.sub(lambda m: f"{m.group(1)}{int(m.group(2)) + 7000}", text)
    return tape.done()


def mutations(case: Case, cassette: Cassette) -> Iterator[Mutation]:
    if (argument := case.check("argument_match")) is not None:
        if (changed := change_argument(cassette, argument[0].get("args") or {})) is not None:
            yield Mutation("argument changed", argument[1], changed)
    if (pr := case.check("pull_request")) is not None:
        config, metric = pr
        if config.get("expect", "created") == "created":
            if (dropped := drop_pull_request(cassette)) is not None:
                yield Mutation("pull request missing", metric, dropped)
        else:
            yield Mutation("pull request created in a blocked case", metric, create_pull_request(cassette, case.id))
    if (valid := case.check("spoke_json_valid")) is not None:
        if (broken := invalid_submission(cassette)) is not None:
            yield Mutation("invalid configuration submitted", valid[1], broken)
    if (diff := case.check("input_diff")) is not None:
        if (changed := unexpected_config_change(cassette, diff[0].get("expected_changes") or {})) is not None:
            yield Mutation("unexpected configuration change", diff[1], changed)
    grounded = case.check("reply_grounded")
    if grounded is not None and "url" in (grounded[0].get("kinds") or ("url",)):
        if (misquoted := misquote_pull_request(cassette)) is not None:
            yield Mutation("pull request misquoted", grounded[1], misquoted)
